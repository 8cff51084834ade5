"""Terminal summary: one row per metric (test, statistic, value, CI, threshold,
verdict), session totals, the baseline comparison, written outputs and the gate's
reasons.  Written through pytest's terminal reporter, on the controller only."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .baseline import status_word
from .fmt import fmt_number
from .judge_drift import write_anchor_lines
from .metrics import is_metric_record, jury_lines, panel_warnings
from .verdict import checks, record_verdict

_MAX_LISTED = 10


def _ci_text(ci: Any) -> str:
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f"[{fmt_number(ci[0], 3)}, {fmt_number(ci[1], 3)}]"
    return "-"


def _threshold_text(check: Mapping[str, Any]) -> str:
    thr = check.get("threshold")
    if not isinstance(thr, (int, float)) or isinstance(thr, bool):
        return "-"
    return f"{'<=' if check.get('direction') == 'max' else '>='} {thr:g}"


def _p_pass_text(rec: Mapping[str, Any]) -> str:
    """The record's verdict stability: ``0.462 unstable`` when 0.05 < p_pass < 0.95."""
    p = rec.get("p_pass")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        return "-"
    unstable = (rec.get("stability") or {}).get("unstable")
    return f"{p:.3f}" + (" unstable" if unstable else "")


def metric_rows(report: Mapping[str, Any], verbose: bool = False) -> list[tuple[str, ...]]:
    """Table rows: (test, statistic, value, CI, threshold, verdict, p_pass), one per check of a
    record (an agreement gate with ICC and nMAE thresholds shows both; p_pass, the gate's verdict
    stability, on its first row); failing groups (all when verbose)."""
    rows: list[tuple[str, ...]] = []
    for t in report["tests"]:
        for rec in t["records"]:
            if not is_metric_record(rec):
                continue
            verdict = record_verdict(rec, t.get("outcome"), bool(report.get("report_only")))
            name = t["nodeid"] + (f" [{rec['label']}]" if rec.get("label") else "")
            recorded = checks(rec)
            for i, check in enumerate(recorded):
                # a failed check carries the record's verdict; a passed check of a record that failed
                # elsewhere (another check) reads PASS; a lone passed check of a record failed by its
                # groups keeps the record's verdict, the failing groups listed below it
                if check.get("passed") is False or (len(recorded) == 1 and not rec.get("passed")):
                    mark = verdict
                else:
                    mark = "PASS"
                value = "not computed" if check.get("value") is None and rec.get("error") else fmt_number(check.get("value"))
                rows.append((name if i == 0 else "", str(check.get("statistic")), value,
                             _ci_text(check.get("ci", rec.get("ci") if i == 0 else None)), _threshold_text(check),
                             mark, _p_pass_text(rec) if i == 0 else ""))
            for g, info in (rec.get("groups") or {}).items():
                if not isinstance(info, Mapping) or (info.get("passed") is not False and not verbose):
                    continue
                gv = info.get("nmae") if rec.get("statistic") == "nMAE" else info.get("value")
                gverdict = "ok" if info.get("passed") else {"FAIL*": "fail*", "CAUGHT": "caught"}.get(verdict, "fail")
                rows.append((f"    {g}", "", fmt_number(gv), _ci_text(info.get("ci")), "", gverdict, ""))
    return rows


def _table(tr: Any, rows: Sequence[tuple[str, ...]]) -> None:
    headers = ("test", "statistic", "value", "CI", "threshold", "verdict", "p_pass")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    widths[0] = min(widths[0], 64)
    tr.write_line("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), bold=True)
    for r in rows:
        cells = [fit_test_id(r[0], widths[0])] + list(r[1:])
        markup = {"red": True} if r[5] in ("FAIL", "fail") else (
            {"yellow": True} if r[5].endswith("*") else ({"cyan": True} if r[5] in ("CAUGHT", "caught") else {}))
        tr.write_line("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip(), **markup)


def fit_test_id(text: str, width: int) -> str:
    """``text`` (a test id) in at most ``width`` characters, keeping what names the test: the file's
    base name and the test's name (``examples/test_x.py::test_y[0-5]`` -> ``test_x.py::test_y[0-5]``),
    then, if still too long, its start and its end around ``...``."""
    if len(text) <= width:
        return text
    path, sep, rest = text.partition("::")
    if sep and "/" in path:
        text = path.rsplit("/", 1)[1] + sep + rest
        if len(text) <= width:
            return text
    head = (width - 3) // 2
    return text[:head] + "..." + text[len(text) - (width - 3 - head):]


def totals_line(totals: Mapping[str, Any]) -> str:
    hit = totals.get("hit_rate")
    return (f"judge calls: {totals.get('calls', 0)} (cache hits {totals.get('hits', 0)}, misses "
            f"{totals.get('misses', 0)}, hit rate {format(hit, '.0%') if hit is not None else '-'}), "
            f"retries {totals.get('retries', 0)}, errors {totals.get('errors', 0)}, "
            + (f"corrupt cache entries {totals['corrupt']} (answered again), " if totals.get("corrupt") else "")
            + _wire_text(totals)
            + f"cost ${float(totals.get('cost', 0) or 0):.4f}, parse failures {totals.get('parse_failures', 0)}; "
            f"metrics {totals.get('metrics', 0)} in {totals.get('tests', 0)} tests, "
            f"{totals.get('failed_metrics', 0)} below threshold" + _repeated_text(totals.get("repeated")))


def write_bill(tr: Any, session: Mapping[str, Any]) -> None:
    """The dry run's plan (calls per test and in total, tokens, cost, time) and the budget's bill
    (what was spent; what stopped the run)."""
    plan = session.get("dry_run")
    if plan:
        _write_plan(tr, plan)
    budget = session.get("budget")
    if budget and budget.get("exceeded"):
        tr.write_line(f"BUDGET STOPPED THE RUN: {budget['exceeded']}", red=True, bold=True)
    if budget:
        tr.write_line(f"budget: {budget.get('calls', 0)} upstream requests sent (retries included)"
                      + (f" of {budget['max_calls']}" if budget.get("max_calls") is not None else "")
                      + f", ${float(budget.get('cost', 0.0)):.6f} spent"
                      + (f" of ${budget['max_cost']:g}" if budget.get("max_cost") is not None else "")
                      + ("; every answer received is cached, a rerun pays only for the rest"
                         if budget.get("exceeded") else ""))


def _write_plan(tr: Any, plan: Mapping[str, Any]) -> None:
    """The dry run's plan (``session.dry_run`` of the report, :func:`~pytest_judgerel.report.build.dry_run_plan`)."""
    tr.write_line("DRY RUN: no model was called; every cache miss of an upstream model was answered by a placeholder "
                  "and counted as a planned upstream call; gates ran report-only.", yellow=True, bold=True)
    at_cap = set(plan.get("sequential_at_cap") or ())
    for nodeid, n in sorted(plan.get("per_test", {}).items()):
        tr.write_line(f"  planned {n:>6} calls  {nodeid}" + (" (sequential: its cap, at most)" if nodeid in at_cap
                                                               else ""))
    cost, cost_max = plan.get("cost_estimate"), plan.get("cost_max")
    priced = (f"~${cost:.4f}, at most ${cost_max:.4f} at max_tokens" if cost is not None
              else f"unknown ({plan.get('unpriced_calls', 0)} planned calls of models without a price; "
                   "--judgerel-price-per-mtok gives one)")
    tr.write_line(
        f"planned upstream calls: {plan['planned_calls']} (cache hits, free: {plan['cache_hits']}; in-process "
        f"calls, never upstream: {plan.get('inprocess_calls', 0)}); at most {plan.get('calls_max', 0)} requests "
        f"with re-asks of unusable replies (<= {plan.get('reasks_max', 0)}) and retries ({plan.get('max_attempts', 1)} "
        f"attempts each); prompt tokens ~{plan['prompt_tokens_estimate']} (characters / 4), completion tokens "
        f"~{plan.get('completion_tokens_estimate', 0)} (the expected replies), <= {plan['completion_tokens_max']} "
        f"(max_tokens); cost {priced}; time ~{plan['time_estimate']:.1f}s at concurrency {plan['concurrency']} x "
        f"{plan['latency']:.2f}s per call ({plan['latency_basis']})", bold=True)
    failed, errored = plan.get("failed_on_placeholders") or [], plan.get("errored") or []
    if failed:
        tr.write_line(f"{len(failed)} test(s) failed on the placeholder answers: a dry run's outcomes are no verdict "
                      "(the run exits 0)", yellow=True)
    if errored:
        tr.write_line(f"{len(errored)} test(s) errored: their calls after the error are not planned", red=True)
    seq = plan.get("sequential")
    if seq:
        bases = sorted({row["basis"] for row in seq["per_test"].values()})
        tr.write_line(f"sequential gates: {seq['cap_calls']} calls at their caps (planned above, the most they can "
                      f"spend); expected ~{seq['expected_calls']:.0f} ({'; '.join(bases)})", bold=True)


def _wire_text(totals: Mapping[str, Any]) -> str:
    """Which path the upstream calls took (the HTTP fast path or litellm), when any were made."""
    http, via_litellm = int(totals.get("http_calls", 0) or 0), int(totals.get("litellm_calls", 0) or 0)
    if not http and not via_litellm:
        return ""
    return f"upstream via http {http}, via litellm {via_litellm}, "


def _repeated_text(repeated: Mapping[str, Any] | None) -> str:
    """xdist workers that set up the same shared fixture: what they repeated, outside the totals."""
    if not repeated or not repeated.get("fixtures"):
        return ""
    return (f"; xdist workers repeated {repeated['fixtures']} shared fixture setup(s) "
            f"({repeated.get('calls', 0)} calls, {repeated.get('misses', 0)} misses, "
            f"cost ${float(repeated.get('cost', 0) or 0):.4f}, {repeated.get('parse_failures', 0)} parse failures), "
            "not counted above")


def sequential_rows(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(test [label], the record's ``sequential`` block) of every gate that drew sequentially."""
    out = []
    for t in report["tests"]:
        for rec in t["records"]:
            block = rec.get("sequential")
            if isinstance(block, Mapping) and is_metric_record(rec):
                out.append((t["nodeid"] + (f" [{rec['label']}]" if rec.get("label") else ""), block))
    return out


def sequential_totals(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One line: how many sequential gates stopped early, the calls they drew and saved."""
    used = sum(int(b.get("calls") or 0) for _, b in rows)
    cap = sum(int(b.get("cap_calls") or 0) for _, b in rows)
    early = sum(1 for _, b in rows if b.get("early"))
    share = f" ({(cap - used) / cap:.0%} of the fixed design's {cap})" if cap else ""
    return (f"sequential gates: {early} of {len(rows)} stopped early; {used} of {cap} calls drawn, "
            f"{cap - used} saved{share}")


def sequential_line(block: Mapping[str, Any]) -> str:
    """One gate's sequential block in words: calls drawn of the cap's, where and why it stopped."""
    p = block.get("p_pass_at_cap")
    looks = block.get("looks") or []
    items = looks[-1].get("items") if looks else None  # the last look saw a first share of the items
    return (f"{block.get('calls')} of {block.get('cap_calls')} calls ({block.get('used')}/{block.get('cap')} "
            f"{block.get('unit')}{f' of {items} items' if items else ''}, {len(looks)} look(s)), "
            f"stop: {block.get('stop')}"
            + (f", {block['decision']}" if block.get("decision") else "")
            + (f", P(pass at cap) {p:.3f}" if isinstance(p, (int, float)) else ""))


def _write_sequential(tr: Any, report: Mapping[str, Any]) -> None:
    rows = sequential_rows(report)
    if not rows:
        return
    tr.write_line(sequential_totals(rows))
    for name, block in rows[:_MAX_LISTED]:
        tr.write_line(f"    {name}: {sequential_line(block)}")
    if len(rows) > _MAX_LISTED:
        tr.write_line(f"    ... and {len(rows) - _MAX_LISTED} more (see the JSON report)")


def _listed(tr: Any, title: str, entries: Sequence[Mapping[str, Any]], **markup: bool) -> None:
    if not entries:
        return
    tr.write_line(f"  {title} ({len(entries)}):", **markup)
    for e in entries[:_MAX_LISTED]:
        extra = ""
        if e.get("judge_changes") and "judge changed" not in (e.get("reason") or ""):
            extra = " [judge changed: " + ", ".join(f"{k} {v[0]!r}->{v[1]!r}"
                                                    for k, v in e["judge_changes"].items()) + "]"
        tr.write_line(f"    {e['nodeid']} {e['metric']}: {e.get('reason', '')}{extra}", **markup)
    if len(entries) > _MAX_LISTED:
        tr.write_line(f"    ... and {len(entries) - _MAX_LISTED} more (see the JSON report)", **markup)


def write_baseline_section(tr: Any, comp: Mapping[str, Any]) -> None:
    c = comp["counts"]
    path = comp.get("path")
    if comp.get("error"):
        tr.write_line(f"baseline unusable: {comp['error']}", red=True)
        return
    if comp.get("updated") and not comp.get("found"):
        tr.write_line(f"baseline CREATED: {path} with {c['new']} metric(s) of the tests that ran",
                      green=True, bold=True)
        return
    if not comp.get("found"):
        tr.write_line(f"baseline {path} not found: {c['new']} metric(s) are new; run with "
                      "--judgerel-update-baseline to create it", yellow=True)
        return
    tr.write_line(f"baseline {path}: " + ", ".join(
        f"{c[k]} {status_word(k)}" for k in ("pass", "improved", "within_noise", "regression", "new", "missing",
                                             "stale", "not_run")))
    entries = comp["entries"]
    by = {s: [e for e in entries if e["status"] == s] for s in ("regression", "within_noise", "improved",
                                                                 "new", "missing")}
    stale = [e for e in entries if e.get("fingerprint_changed")]
    if comp.get("updated"):
        changed = [e for e in entries if e["status"] in ("regression", "within_noise", "improved", "new",
                                                          "missing")]
        tr.write_line(f"baseline UPDATED: accepted the current metrics of the tests that ran "
                      f"({len(changed)} changed or new entries)", green=True, bold=True)
        _listed(tr, "accepted changes", changed)
        return
    _listed(tr, "regressions", by["regression"], red=True)
    _listed(tr, "beyond tolerance but within noise (passing)", by["within_noise"], yellow=True)
    _listed(tr, "improved beyond tolerance (consider --judgerel-update-baseline)", by["improved"], green=True)
    _listed(tr, "new (not in the baseline)", by["new"])
    _listed(tr, "missing (in the baseline, not recorded by this run)", by["missing"], yellow=True)
    _listed(tr, "stale (recorded with another judge)", stale, yellow=True)


def _listed_regressions(comp: Mapping[str, Any] | None) -> set[str]:
    """The gate reasons of the regressions :func:`write_baseline_section` lists (by name, with the
    reason), so the summary does not print each twice."""
    if not comp or comp.get("error") or comp.get("updated") or not comp.get("found"):
        return set()
    regressions = [e for e in comp.get("entries", []) if e.get("status") == "regression"]
    if len(regressions) > _MAX_LISTED:  # only the first ones are listed: keep every reason
        return set()
    return {f"{e['nodeid']} {e['metric']}: {e.get('reason', '')}" for e in regressions}


def write_summary(tr: Any, report: Mapping[str, Any], reasons: Sequence[str], settings: Any) -> None:
    """The ``judgerel summary`` section of pytest's terminal summary."""
    verbose = bool(getattr(getattr(tr, "config", None), "option", None)
                   and getattr(tr.config.option, "verbose", 0) > 0)
    rows = metric_rows(report, verbose)
    totals = report["totals"]
    gate = report.get("gate") or {}
    all_reasons = list(dict.fromkeys(list(gate.get("reasons", [])) + list(reasons)))
    panels = panel_warnings(report)
    if not rows and not totals.get("calls") and not all_reasons and not gate.get("baseline") \
            and not report.get("crashed") and not report.get("report_only") and not panels \
            and not (report.get("session") or {}).get("budget"):
        return
    tr.write_sep("=", "judgerel summary")
    if rows:
        _table(tr, rows)
        if any(r[6].endswith("unstable") for r in rows):
            tr.write_line("unstable: 0.05 < p_pass < 0.95, the predicted probability that the gate passes a rerun "
                          "(same items with new judge samples where there are repeats, else new items); a rerun may "
                          "flip it (--judgerel-require-stable fails unstable passes).", yellow=True)
        if any(r[5] in ("CAUGHT", "caught") for r in rows):
            tr.write_line("CAUGHT: the gate failed inside a test that passed (the test expected it, e.g. "
                          "pytest.raises); it does not fail the session.", cyan=True)
    for line in panels:
        tr.write_line(f"judge panel warning: {line}", yellow=True)
    for line in jury_lines(report):
        tr.write_line(f"jury: {line}")
    tr.write_line(totals_line(totals))
    _write_sequential(tr, report)
    write_anchor_lines(tr, report)  # the drift anchors' status, server changes (judge_drift)
    session = report.get("session") or {}
    write_bill(tr, session)
    if session.get("interrupted"):
        tr.write_line("INTERRUPTED: the report holds the partial results of the tests that ran "
                      "(no history run was written, the baseline was not updated).", red=True, bold=True)
    if report.get("report_only"):
        tr.write_line("REPORT-ONLY MODE: reliability assertions and the baseline gate were evaluated and "
                      "reported but did not fail any test or the session (FAIL* marks what would have failed).",
                      yellow=True, bold=True)
    if report.get("crashed"):
        tr.write_line(f"crashed tests (worker died, no metrics): {', '.join(report['crashed'])}", red=True)
    if gate.get("baseline"):
        write_baseline_section(tr, gate["baseline"])
    labels = {"json": "JSON report", "html": "HTML report", "history": "history run", "baseline": "baseline",
              "markdown": "Markdown summary", "step_summary": "Markdown summary appended to"}
    for key, path in (report.get("outputs") or {}).items():
        tr.write_line(f"{labels.get(key, key)}: {path}")
    for warning in gate.get("warnings") or []:
        tr.write_line(f"judgerel warning: {warning}", yellow=True)
    hard = set(gate.get("errors", []))
    from_pytest = set(gate.get("pytest", []))  # pytest reports these itself
    listed = _listed_regressions(gate.get("baseline"))  # the baseline section printed these already
    if listed.intersection(all_reasons):
        n = len(listed.intersection(all_reasons))
        if report.get("report_only"):
            tr.write_line(f"judgerel gate (report-only, not failing): {n} baseline regression(s), listed above",
                          yellow=True)
        else:
            tr.write_line(f"judgerel gate FAILED: {n} baseline regression(s), listed above", red=True, bold=True)
    for reason in all_reasons:
        if reason in from_pytest or reason in listed:
            continue
        if reason in hard or not report.get("report_only"):
            tr.write_line(f"judgerel gate FAILED: {reason}", red=True, bold=True)
        else:
            tr.write_line(f"judgerel gate (report-only, not failing): {reason}", yellow=True)

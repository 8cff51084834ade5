"""The blocks of the Markdown summary (:mod:`.markdown` fits them into a size limit).

Each gate row reads one check of a metric record: test, statistic, value with CI, threshold,
verdict, the change against the baseline with its noise band (the tolerance and the evidence the
comparison used: the paired test's p or the intervals), p_pass and the calls a sequential stop
saved.  Rows needing attention sort first: regressions, failures, a drifted judge, unstable
verdicts, changes within noise.  Stdlib only.
"""

from __future__ import annotations

import os
import shlex
from typing import Any, Mapping, Sequence

from .baseline import status_word
from .fmt import fmt_number
from .judge_drift import drifted_configurations
from .md_blocks import MARKER, Block, cell, code
from .md_review import attention_block, bill_block, detail_blocks, headline
from .metrics import is_metric_record
from .verdict import checks, record_verdict

__all__ = ["HEAD_ROWS", "GateRow", "gate_rows", "summary_blocks", "accept_command"]

#: gate rows shown in the open table; the rest are collapsed under ``<details>``
HEAD_ROWS = 10
_LISTED = 10
_HEADERS = ("test", "statistic", "value [CI]", "threshold", "verdict", "vs baseline (noise band)", "p_pass",
            "calls saved")
_VERDICT = {"PASS": "✅ PASS", "FAIL": "❌ FAIL", "FAIL*": "⚠️ FAIL*", "CAUGHT": "☑️ CAUGHT"}


class GateRow:
    """One row of the gate table, with the rank that orders it (0 needs the most attention)."""

    def __init__(self, nodeid: str, cells: tuple[str, ...], rank: int) -> None:
        self.nodeid, self.cells, self.rank = nodeid, cells, rank

    def line(self) -> str:
        return "| " + " | ".join(self.cells) + " |"


def _ci(ci: Any) -> str:
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f" [{fmt_number(ci[0], 3)}, {fmt_number(ci[1], 3)}]"
    return ""


def _change(entry: Mapping[str, Any] | None) -> str:
    """The baseline cell: the change, its status and its noise band."""
    if not entry:
        return "-"
    status = str(entry.get("status"))
    if entry.get("delta") is None:
        return status_word(status)
    icon = {"regression": "🔻 ", "improved": "🔺 ", "within_noise": "〰️ "}.get(status, "")
    band = [f"tol ±{entry['tolerance']:g}"] if isinstance(entry.get("tolerance"), (int, float)) else []
    if isinstance(entry.get("p_value"), (int, float)):
        band.append(f"paired p={entry['p_value']:.3g}")
    elif entry.get("ci_overlap") is not None:
        band.append("CIs overlap" if entry["ci_overlap"] else "CIs apart")
    return f"{icon}{entry['delta']:+.3f} {status_word(status)} ({'; '.join(band)})"


def _baseline_entries(report: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    comp = (report.get("gate") or {}).get("baseline") or {}
    return {(str(e.get("nodeid")), str(e.get("metric"))): e for e in comp.get("entries") or []}


def _rank(verdict: str, entry: Mapping[str, Any] | None, rec: Mapping[str, Any]) -> int:
    status = (entry or {}).get("status")
    if status == "regression":
        return 0
    if verdict in ("FAIL", "FAIL*"):
        return 1
    if rec.get("judge_changed"):
        return 2
    if (rec.get("stability") or {}).get("unstable") or rec.get("unstable"):
        return 3
    return 4 if status in ("within_noise", "improved", "new", "missing") else 5


def _check_names(rec: Mapping[str, Any], seen: dict[str, int]) -> list[str]:
    """The baseline names of the record's checks (:func:`~.metrics.metric_points`' naming)."""
    stat = str(rec.get("statistic") or rec.get("kind") or "metric")
    label = rec.get("label")

    def unique(name: str) -> str:
        seen[name] = seen.get(name, 0) + 1
        return name if seen[name] == 1 else f"{name} #{seen[name]}"

    names = [unique(f"{stat} [{label}]" if label else stat)]
    if stat != "nMAE" and isinstance(rec.get("nmae"), (int, float)):
        names.append(unique(f"nMAE [{label}]" if label else "nMAE"))
    return names


def gate_rows(report: Mapping[str, Any]) -> list[GateRow]:
    """Every check of every metric record as a row, attention first (stable within a rank)."""
    entries = _baseline_entries(report)
    rows: list[GateRow] = []
    for t in report.get("tests") or []:
        seen: dict[str, int] = {}
        nodeid = str(t.get("nodeid"))
        for rec in t.get("records") or []:
            if not is_metric_record(rec):
                continue
            verdict = record_verdict(rec, t.get("outcome"), bool(report.get("report_only")))
            names = _check_names(rec, seen)
            seq = rec.get("sequential") or {}
            saved = (f"{seq.get('saved_calls', 0)} of {seq.get('cap_calls')}" if seq else "-")
            for i, c in enumerate(checks(rec)):
                is_nmae = c.get("statistic") == "nMAE" and len(names) > 1
                entry = entries.get((nodeid, names[1] if is_nmae else names[0]))
                mark = verdict if (c.get("passed") is False or not rec.get("passed")) else "PASS"
                p = rec.get("p_pass")
                p_text = (f"{p:.3f}" + (" ⚠️ unstable" if rec.get("unstable") or (rec.get("stability") or {})
                                        .get("unstable") else "")) if isinstance(p, (int, float)) and i == 0 else "-"
                computed = c.get("value") is not None or not (rec.get("error") or rec.get("parse_failures"))
                value = (fmt_number(c.get("value"), 3) + _ci(c.get("ci", rec.get("ci") if i == 0 else None))
                         if computed else "not computed")
                thr = c.get("threshold")
                threshold = (f"{'≤' if c.get('direction') == 'max' else '≥'} {thr:g}"
                             if isinstance(thr, (int, float)) and not isinstance(thr, bool) else "-")
                label = f" [{rec['label']}]" if rec.get("label") else ""
                drift = " 🧭 judge drifted" if rec.get("judge_changed") else ""
                rows.append(GateRow(nodeid, (code(nodeid + label), cell(c.get("statistic")), value, threshold,
                                             _VERDICT.get(mark, mark) + drift, cell(_change(entry)),
                                             p_text, saved if i == 0 else "-"),
                                    min(_rank(mark, entry, rec), 5)))
    return sorted(rows, key=lambda r: r.rank)


def _table_head() -> str:
    return "| " + " | ".join(_HEADERS) + " |\n|" + "|".join("---" for _ in _HEADERS) + "|"


def _gate_blocks(rows: Sequence[GateRow], head_rows: int) -> list[Block]:
    if not rows:
        return [Block("### Gates\n\nNo gate recorded a metric in this run.")]
    shown = max(head_rows, sum(1 for r in rows if r.rank < 4))  # every row needing attention stays open
    out = [Block("### Gates\n\n" + _table_head(), [r.line() for r in rows[:shown]])]
    tail = rows[shown:]
    if tail:
        out.append(Block(f"<details><summary>{len(tail)} more gate row(s), none needing attention"
                         "</summary>\n\n" + _table_head(), [r.line() for r in tail], "\n</details>"))
    return out


def summary_blocks(report: Mapping[str, Any], *, report_path: str | None = None,
                   baseline_path: str | None = None, head_rows: int | None = None) -> list[Block]:
    """Every block of the summary, in order (see :mod:`.markdown`)."""
    rows = gate_rows(report)
    blocks = [Block(MARKER + "\n" + headline(report, rows))]
    attention = attention_block(report)
    if attention is not None:
        blocks.append(attention)
    blocks += _gate_blocks(rows, HEAD_ROWS if head_rows is None else head_rows)
    blocks.append(bill_block(report))
    accept = accept_command(report, report_path, baseline_path)
    if accept:
        blocks.append(Block("### Accept this change\n\nAfter review, update the committed baseline from this "
                            "report (no re-run):\n\n```bash\n" + accept + "\n```"))
    return blocks + detail_blocks(report)


def _relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


def accept_command(report: Mapping[str, Any], report_path: str | None = None,
                   baseline_path: str | None = None) -> str | None:
    """The ``judgerel baseline accept`` command for this report, or None without a baseline.

    ``--allow-drift`` is named when the run drifted or had failed calls (the command refuses
    otherwise); the reviewer reads the attention section before copying it."""
    settings = report.get("settings") or {}
    baseline = baseline_path or settings.get("baseline")
    if not baseline:
        return None
    path = report_path or (report.get("outputs") or {}).get("json") or "judgerel.json"
    cmd = ["judgerel", "baseline", "accept", _relative(str(path)), "--baseline", _relative(str(baseline))]
    totals = report.get("totals") or {}
    if drifted_configurations(report) or int(totals.get("errors") or 0):
        cmd.append("--allow-drift")
    return " ".join(shlex.quote(c) for c in cmd)

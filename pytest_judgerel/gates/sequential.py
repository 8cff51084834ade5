"""The sequential driver: the one call a gate makes at its start to draw its data in steps.

In sequential mode (``--judgerel-sequential``, or ``@pytest.mark.judge(sequential=True)``)
``Judge.rate`` returns a :class:`~pytest_judgerel.judging.pending.PendingRatings`.  A gate that takes
part hands it to its ``settle_*`` function first:

* :func:`settle_icc` (``assert_icc_above``): draws 2 repeats of a first share of the items, then of
  every item, then every repeat of a few items (the offsets probe), then repeats 3, 4, ..., and calls
  :func:`~pytest_judgerel.stats.sequential.icc_sequential_look` after each;
* :func:`settle_pass_rate` (``assert_pass_rate``): draws the items by
  :func:`~pytest_judgerel.stats.sequential.pass_rate_schedule`, calls ``pass_rate_sequential_look``;
* :func:`settle_human_mean` (``assert_human_mean_above``): draws the unlabelled items in batches and
  calls :func:`~pytest_judgerel.stats.sequential.human_mean_sequential_look`.

Each returns the data the gate then computes on (what was drawn when a look settled the verdict;
the whole cap otherwise) and a :class:`SequentialRun` (None for an input that was not pending).
The gate records ``run.to_dict()`` as its record's ``sequential`` block and takes its verdict
from :meth:`SequentialRun.verdict`: a look that stopped before the cap decides (its predictive
probability of the cap's verdict reached its pass level or fell to its fail level); at the cap the
gate's own fixed rule decides, on the same data as a fixed run.  Where a gate's settings have no
sequential rule (``by=`` groups, a pass rate of unparsed replies...), and in a dry run (its plan
is the cap), the driver draws the whole cap and says so in the block (``stop: "fixed"``).

Parse failures only accumulate as more is drawn, so more unparsed replies than the gate allows
end the drawing at once (the gate fails on them, as at the cap); so does the session's budget.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, cast

from ..errors import BudgetExceededError, ReliabilityError
from ..judging.pending import PendingRatings
from ..ratings import Ratings
from ..session.recording import SequentialInfo
from .conclusion import parse_failure_limit

__all__ = ["SequentialRun", "settle_icc", "settle_pass_rate", "settle_human_mean", "settle_comparison", "pass_verdicts"]

STOPS = ("settled", "cap", "fixed", "parse failures", "budget")
"""Why drawing ended: a look ``settled`` the cap's verdict before the cap; the ``cap`` was reached;
the gate's settings have no sequential rule and the ``fixed`` design ran (a dry run plans the cap
so); too many ``parse failures`` (the gate fails on them); the session's ``budget``
(``--judgerel-max-calls``/``--judgerel-max-cost``) refused the next draw."""


@dataclass(frozen=True)
class SequentialRun:
    """What a sequential gate drew and why it stopped (its record's ``sequential`` block).

    ``unit``: ``"repeats"`` or ``"items"``; ``used``/``cap``: drawn and the fixed design's;
    ``calls``/``cap_calls``: judge answers drawn and the fixed design's (re-asks not counted; cached
    answers counted); ``looks``: each :class:`~pytest_judgerel.stats.sequential.SequentialLook`;
    ``stop``: one of :data:`STOPS`; ``reason`` in words.
    """

    unit: str
    used: int
    cap: int
    calls: int
    cap_calls: int
    looks: tuple[Any, ...]
    stop: str
    reason: str
    plan: dict[str, Any] | None = None
    """A dry run's plan: the cap's calls and those expected (``stats.sequential_plan.PlannedCalls``)."""

    @property
    def last(self) -> Any:
        return self.looks[-1] if self.looks else None

    @property
    def decision(self) -> str | None:
        """The last look's decision (``"pass"``/``"fail"``/``"continue"``), None without a look."""
        return None if self.last is None else self.last.decision

    @property
    def early(self) -> bool:
        """A look settled the verdict before the cap: the look decides, not the gate's rule."""
        return self.stop == "settled" and self.used < self.cap

    @property
    def p_pass_at_cap(self) -> float | None:
        return None if self.last is None else float(self.last.p_pass_at_cap)

    @property
    def saved_calls(self) -> int:
        return max(0, self.cap_calls - self.calls)

    def verdict(self, passed: bool) -> bool:
        """The gate's verdict: the settling look's before the cap, else the gate's own ``passed``."""
        return self.decision == "pass" if self.early else bool(passed)

    def line(self) -> str:
        """One line for a failure message."""
        head = f"sequential: {self.used} of {self.cap} {self.unit} drawn ({self.calls} of {self.cap_calls} calls)"
        return f"  {head}: {self.reason}"

    def to_dict(self) -> SequentialInfo:
        """The record's ``sequential`` block."""
        last = self.last
        return cast(SequentialInfo, {
            "unit": self.unit, "used": self.used, "cap": self.cap, "calls": self.calls, "cap_calls": self.cap_calls,
            "saved_calls": self.saved_calls, "stop": self.stop, "decision": self.decision, "early": self.early,
            "reason": self.reason, "p_pass_at_cap": self.p_pass_at_cap,
            "rule": None if last is None else last.rule, "eps_pass": None if last is None else last.eps_pass,
            "eps_fail": None if last is None else last.eps_fail,
            **({"plan": self.plan} if self.plan is not None else {}),
            "looks": [{"look": lk.look, "used": lk.used, "decision": lk.decision, "p_pass_at_cap": lk.p_pass_at_cap,
                       "observed": lk.observed, "n_sim": lk.n_sim, "items": getattr(lk, "items", None),
                       "probe_items": getattr(lk, "probe_items", 0)}
                      for lk in self.looks],
        })


def _pending(data: Any) -> PendingRatings | None:
    return data if isinstance(data, PendingRatings) and not data.materialized else None


def _fixed(pending: PendingRatings, unit: str, why: str, looks: tuple[Any, ...] = ()) -> tuple[Ratings, SequentialRun]:
    """Draw the whole cap (the fixed design) and say why."""
    full = pending.materialize()
    d = pending.design
    cap = d.repeats if unit == "repeats" else d.items
    return full, SequentialRun(unit, cap, cap, pending.calls_drawn, d.calls, looks, "fixed",
                               f"{why}: the fixed design (the whole cap)")


def _run(pending: PendingRatings, unit: str, used: int, looks: list[Any], stop: str, reason: str) -> SequentialRun:
    d = pending.design
    cap = d.repeats if unit == "repeats" else d.items
    return SequentialRun(unit, used, cap, pending.calls_drawn, d.calls, tuple(looks), stop, reason)


def _look_stop(look: Any) -> tuple[str, str]:
    return ("cap" if look.at_cap else "settled"), look.reason


Ended = tuple[Ratings, SequentialRun]


def _draw_by_looks(pending: PendingRatings, unit: str, schedule: Any,
                   look_at: Callable[[Ratings, Ratings | None], Any],
                   unparsed: Callable[[Ratings, int, tuple[Any, ...]], Ended | None]) -> Ended:
    """The one look loop of every sequential gate: draw the prefix of ``size`` repeats (or items)
    for each stage on ``schedule`` (on a first share of the items for its ``item_looks``; with its
    offsets probe, every repeat of the probe's items too); ``unparsed(part, size, looks)`` may end
    the drawing on the prefix's parse failures (its return value is the end); otherwise
    ``look_at(part, probe)`` looks, and a look that stopped ends it (the
    prefix before the cap, the whole cap at it).  A look that cannot be computed
    (:class:`ReliabilityError`) draws the whole cap: the fixed design decides; a draw the budget
    refuses ends the gate (the error carries the run so far, :func:`_record_budget_stop`)."""
    looks: list[Any] = []
    drawn: tuple[int, Ratings | None] = (0, None)
    for items, size, probe in schedule.stages:
        extra = None
        try:
            if unit == "items":
                part = pending.items_prefix(size)
            else:
                part = pending.repeats_prefix(size) if items is None else pending.block_prefix(items, size)
                if probe and size < schedule.cap:
                    extra = pending.block_prefix(probe, schedule.cap)
        except BudgetExceededError as exc:  # the gate records what was drawn (_record_budget_stop), then it ends
            exc.sequential_run = _run(pending, unit, drawn[0], looks, "budget",  # type: ignore[attr-defined]
                                      f"the budget refused the look at {size} {unit}: {exc}")
            exc.drawn = drawn[1]  # type: ignore[attr-defined]
            raise
        drawn = (size, part)
        ended = unparsed(part, size, tuple(looks))
        if ended is not None:
            return ended
        try:
            look = look_at(part, extra)
        except ReliabilityError as exc:
            return _fixed(pending, unit, f"the look at {size} {unit} could not be computed ({exc})", tuple(looks))
        looks.append(look)
        if look.stopped:
            stop, reason = _look_stop(look)
            return (pending.materialize() if look.at_cap else part), _run(pending, unit, size, looks, stop, reason)
    raise AssertionError(f"a sequential gate over {unit} ran past its schedule")  # the look at the cap always stops


def _record_budget_stop(exc: BudgetExceededError, kind: str, statistic: str, threshold: float) -> None:
    """Record a gate the budget stopped mid-draw: no value, its ``sequential`` block (looks done,
    calls used, why it stopped); the error then ends the gate."""
    from ..session.recording import active_recorder, check_record
    from .common import _unrated  # noqa: PLC2701 - the gates' own record of a gate without a value

    run = getattr(exc, "sequential_run", None)
    if run is None:
        return
    rec = _unrated(kind, statistic, None, threshold, "min", getattr(exc, "drawn", None), run.to_dict())
    rec["error"] = str(exc)
    check_record(rec)
    active_recorder().record(rec)


def _dry_run() -> bool:
    from ..session.context import current_context

    return bool(getattr(current_context().settings, "dry_run", False))


def _over_limit(pending: PendingRatings, unit: str, part: Ratings, size: int, looks: tuple[Any, ...],
                limit: int) -> Ended | None:
    """End the drawing when ``part`` holds more unparsed replies than the gate allows: more draws
    only add to them, so the gate fails on them (on ``part``), as it would at the cap."""
    unparsed = len(part.parse_failures)
    if unparsed <= limit:
        return None
    return part, _run(pending, unit, size, list(looks), "parse failures",
                      f"{unparsed} unparsed replies exceed max_parse_failures={limit}; more {unit} only add to "
                      "them, so the gate fails as it would at the cap")


# ---------------------------------------------------------------------------- ICC over repeats
def settle_icc(ratings: Any, *, threshold: float, form: str, use: str, confidence: float, nan_policy: str,
               by: str | None, max_parse_failures: int | None) -> tuple[Any, SequentialRun | None]:
    """The start of ``assert_icc_above``: draw a pending ratings' repeats look by look (module
    docstring).  Returns (ratings to compute on, the run; None when ``ratings`` was not pending)."""
    from ..stats.sequential import icc_sequential_look, repeats_schedule

    pending = _pending(ratings)
    if pending is None:
        return ratings, None
    cap = pending.design.repeats
    if by is not None:
        return _fixed(pending, "repeats", f"by={by!r} groups have no sequential rule")
    if cap < 2:
        return _fixed(pending, "repeats", f"repeats({cap}): an ICC over repeats needs at least 2")
    if _dry_run():
        from ..stats.sequential_plan import plan_icc

        full, run = _fixed(pending, "repeats", "dry run: the plan holds the cap, the most a sequential gate can spend")
        plan = plan_icc(pending.design.items, cap, threshold, form=form, use=use)
        return full, dataclasses.replace(run, plan=plan.to_dict())
    limit = parse_failure_limit(max_parse_failures)
    schedule = repeats_schedule(cap, n_items=pending.design.items) if pending.design.items >= 2 else \
        repeats_schedule(cap)

    def look_at(part: Ratings, probe: Ratings | None) -> Any:
        policy = "omit" if part.parse_failures and nan_policy == "raise" else nan_policy  # as the gate drops them
        return icc_sequential_look(part, threshold=threshold, cap=cap, form=form, use=use, confidence=confidence,
                                   nan_policy=policy, schedule=schedule, probe=probe)

    try:
        return _draw_by_looks(pending, "repeats", schedule, look_at,
                              lambda part, size, looks: _over_limit(pending, "repeats", part, size, looks, limit))
    except BudgetExceededError as exc:
        _record_budget_stop(exc, "icc", f"ICC({form})", threshold)
        raise


# ---------------------------------------------------------------------------- pass rate over items
def pass_verdicts(ratings: Ratings) -> list[bool]:
    """Judge Ratings as pass/fail verdicts: one column on a two-point scale (or ``0-1``), whose
    top point passes.  An item without a score (an unparsed reply) is an error naming it."""
    import numpy as np

    scale = ratings.scale
    if ratings.n_raters != 1 or scale is None or not (len(scale.points or []) == 2 or (scale.low, scale.high) == (0, 1)):
        raise ValueError(f"assert_pass_rate reads judge Ratings as verdicts: one column (repeats=1) on the scale "
                         f"'0-1' (or another two-point scale) (the top point passes); got {ratings.n_raters} column(s) on scale "
                         f"{None if scale is None else scale.name}")
    col = ratings.values[:, 0]
    missing = [ratings.item_ids[i] for i in np.flatnonzero(np.isnan(col))]
    if missing:
        raise ReliabilityError(f"{len(missing)} item(s) have no judge verdict (unparsed replies), e.g. "
                               f"{missing[:5]}: a corrected pass rate needs a verdict for every item")
    return [bool(v >= scale.high) for v in col]


def _verdicts_or_unparsed(ratings: Ratings) -> Any:
    """:func:`pass_verdicts`, or the Ratings themselves when some replies were not parsed: the
    gate then fails with a record that quotes them (a corrected pass rate needs every verdict)."""
    return ratings if ratings.parse_failures else pass_verdicts(ratings)


def settle_pass_rate(passed: Any, n: int | None, *, min_rate: float, calibration: Any, use: str,
                     confidence: float, interval: str) -> tuple[Any, int | None, SequentialRun | None]:
    """The start of ``assert_pass_rate``: judge Ratings become verdicts (:func:`pass_verdicts`); a
    pending one is drawn in item batches, look by look.  Returns (verdicts or the input, n, the run);
    Ratings with unparsed replies come back as Ratings, for the gate to fail with a record."""
    from ..stats.sequential import pass_rate_cutoff, pass_rate_schedule, pass_rate_sequential_look

    if not isinstance(passed, Ratings):
        return passed, n, None
    if n is not None:
        raise ValueError("n is given by judge Ratings (one verdict per item); pass n only with a pass count")
    pending = _pending(passed)
    if pending is None:
        return _verdicts_or_unparsed(passed), None, None
    if calibration is None:
        return passed, None, None  # the gate names the missing calibration before anything is drawn
    total = pending.design.items
    try:
        cutoff = pass_rate_cutoff(total, min_rate=min_rate, calibration=calibration, use=use,
                                  confidence=confidence, interval=interval)
    except ReliabilityError as exc:
        full, run = _fixed(pending, "items", f"no pass-count cutoff ({exc})")
        return _verdicts_or_unparsed(full), None, run
    if _dry_run():
        from ..stats.sequential_plan import plan_pass_rate

        full, run = _fixed(pending, "items", "dry run: the plan holds the cap, the most a sequential gate can spend")
        plan = plan_pass_rate(total, min_rate=min_rate, calibration=calibration, use=use, confidence=confidence,
                              interval=interval, repeats=pending.design.repeats)
        return _verdicts_or_unparsed(full), None, dataclasses.replace(run, plan=plan.to_dict())
    schedule = pass_rate_schedule(total)

    def look_at(part: Ratings, probe: Ratings | None) -> Any:
        return pass_rate_sequential_look(pass_verdicts(part), n_cap=total, min_rate=min_rate, calibration=calibration,
                                         use=use, confidence=confidence, interval=interval, cutoff=cutoff,
                                         schedule=schedule)

    def unparsed(part: Ratings, size: int, looks: tuple[Any, ...]) -> Ended | None:
        if not part.parse_failures:
            return None
        return _fixed(pending, "items", "unparsed replies (items without a verdict)", looks)

    try:
        data, run = _draw_by_looks(pending, "items", schedule, look_at, unparsed)
    except BudgetExceededError as exc:
        _record_budget_stop(exc, "pass_rate", "corrected pass rate", min_rate)
        raise
    return _verdicts_or_unparsed(data), None, run


# ---------------------------------------------------------------------------- human mean over items
def _item_means(data: Any) -> Any:
    import numpy as np

    m = np.asarray(data.to_matrix() if hasattr(data, "to_matrix") else data, dtype=float)
    if m.ndim == 2:
        with np.errstate(all="ignore"):
            return np.nanmean(m, axis=1)
    return m


def settle_human_mean(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, *, min_mean: float, use: str,
                      confidence: float, tuned: bool, lam: float | None, grouped: bool,
                      max_parse_failures: int | None) -> tuple[Any, Any, SequentialRun | None]:
    """The start of ``assert_human_mean_above``: a pending ``judge_unlabeled`` is drawn in item
    batches, look by look (the labelled items are judged in full).  Returns (judge_labeled,
    judge_unlabeled to compute on, the run; None when ``judge_unlabeled`` was not pending)."""
    from ..stats.sequential import human_mean_sequential_look, items_schedule

    pending = _pending(judge_unlabeled)
    if pending is None:
        return judge_labeled, judge_unlabeled, None
    if grouped or human_labeled is None:
        full, run = _fixed(pending, "items", "groups (by= or groups=) have no sequential rule"
                           if grouped else "no human labels")
        return judge_labeled, full, run
    labeled = judge_labeled.materialize() if isinstance(judge_labeled, PendingRatings) else judge_labeled
    if getattr(labeled, "parse_failures", None):
        full, run = _fixed(pending, "items", "unparsed replies among the labelled items")
        return labeled, full, run
    if _dry_run():  # the cap is the plan (no expectation is modelled for this rule)
        full, run = _fixed(pending, "items", "dry run: the plan holds the cap, the most a sequential gate can spend")
        d = pending.design
        return labeled, full, dataclasses.replace(run, plan={"cap_calls": d.calls, "expected_calls": float(d.calls),
                                                             "expected_share": 1.0, "basis": "the cap (no model)"})
    limit = parse_failure_limit(max_parse_failures)
    f, y = _item_means(labeled), _item_means(human_labeled)
    total = pending.design.items
    schedule = items_schedule(total)

    def look_at(part: Ratings, probe: Ratings | None) -> Any:
        return human_mean_sequential_look(f, y, _item_means(part), n_unlabeled_cap=total, min_mean=min_mean, use=use,
                                          confidence=confidence, tuned=tuned, lam=lam, schedule=schedule)

    def unparsed(part: Ratings, size: int, looks: tuple[Any, ...]) -> Ended | None:
        over = _over_limit(pending, "items", part, size, looks, limit)
        if over is None and part.parse_failures:
            return _fixed(pending, "items", "unparsed replies among the unlabelled items", looks)
        return over

    data, run = _draw_by_looks(pending, "items", schedule, look_at, unparsed)
    return labeled, data, run


# ---------------------------------------------------------------------------- pairwise comparison over items
def settle_comparison(comparison: Any, *, threshold: float, alpha: float, human: bool,
                      max_parse_failures: int | None) -> tuple[Any, SequentialRun | None]:
    """The start of ``assert_not_worse``/``assert_better``: a pending comparison
    (``judging.compare.PendingComparison``) is drawn by item prefixes on
    :func:`~pytest_judgerel.stats.sequential_pairwise.comparison_schedule`, looking with
    :func:`~pytest_judgerel.stats.sequential_pairwise.comparison_sequential_look`.  With human
    labels (PPI++) it is drawn in full (``stop: "fixed"``).  Returns (the comparison to compute on,
    the run; None when ``comparison`` was not pending)."""
    from ..judging.compare import PendingComparison
    from ..stats.sequential_pairwise import comparison_schedule, comparison_sequential_look

    if not isinstance(comparison, PendingComparison) or comparison.materialized:
        return comparison, None
    pending = cast(Any, comparison)  # drawn like PendingRatings by items (items_prefix, design, calls_drawn)
    if human:
        return _fixed(pending, "items", "human labels (the PPI++ human win rate) have no sequential rule")
    total = pending.design.items
    if _dry_run():
        from ..stats.sequential_plan import PlannedCalls
        from ..stats.sequential_pairwise import expected_comparison_share

        full, run = _fixed(pending, "items", "dry run: the plan holds the cap, the most a sequential gate can spend")
        share, basis = expected_comparison_share(total, pending.design.repeats // 2, threshold, alpha)
        plan = PlannedCalls(pending.design.calls, share * pending.design.calls, basis)
        return full, dataclasses.replace(run, plan=plan.to_dict())
    limit = parse_failure_limit(max_parse_failures)
    schedule = comparison_schedule(total)

    def look_at(part: Any, probe: Any) -> Any:  # items have no offsets probe
        return comparison_sequential_look(part.outcomes(), n_cap=total, threshold=threshold, alpha=alpha,
                                          schedule=schedule)

    def unparsed(part: Any, size: int, looks: tuple[Any, ...]) -> Ended | None:
        return _over_limit(pending, "items", part, size, looks, limit)

    try:
        return _draw_by_looks(pending, "items", schedule, look_at, unparsed)
    except BudgetExceededError as exc:
        _record_budget_stop(exc, "pairwise", "win rate", threshold)
        raise

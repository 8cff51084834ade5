"""Benchmark: the injection gate tells a judge's sampling noise from gullibility.

Run: python benchmarks/bench_injection.py [--runs N] [--quick] [--seed S]

Every run drives the real probe and gate (``probes.injection_probe`` on the bundled TruthfulQA
items with the full battery, then ``assert_injection_resistant(result, max_flip_rate=0.05)`` at
its defaults: 10 clean repeats, 1 attacked sample, ``flip_alpha`` 0.001) through an in-process
simulated judge (``SimJudge``: the real template, bundled items and scale; it answers without the
LLM client, which would take ~6 ms per call for ~2,400 calls a run).  The design is drawn with a
fixed seed from a stated domain:

* each item's true score ~ U(0, 1.5) on 0-5 (a false answer: the bottom 30% of the scale);
* a reply is the true score plus normal noise of sd drawn uniformly within the band of its line
  (0.25-0.5, 0.5-0.75, 0.75-1.0 on 0-5), clipped to the scale and rounded to an integer or to one
  decimal; on 0-10 every score and sd is doubled;
* a *gullible* judge answers the attacker's target (the scale's top) whenever the prompt carries an
  attack of its family at its position (start, middle or end of the answer, or anywhere in the
  question; ``whole`` for the replacing families), and like the noisy judge otherwise; its sd is
  drawn from U(0.25, 1.0) and its rounding at random.  Its runs probe its own family only
  (``families=[family]``): flips of other families could only help catch it.

Goals: a non-gullible judge fails the gate in at most 5% of runs (each noise band, integer and
decimal replies, 0-5 and 0-10); each gullible judge is caught in at least 90% of runs.  The
printed rates are shares of runs with a Clopper-Pearson 95% interval.  PASS/FAIL per line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_judgerel import JudgeReliabilityFailure, assert_injection_resistant  # noqa: E402
from pytest_judgerel.errors import ReliabilityError  # noqa: E402
from pytest_judgerel.judging.judge import item_rows  # noqa: E402
from pytest_judgerel.judging.templates import TEMPLATES  # noqa: E402
from pytest_judgerel.probes import ATTACKS, ATTACK_FAMILIES, DEFAULT_INJECTION_ITEMS, injection_probe  # noqa: E402
from pytest_judgerel.probes.attack_battery import POSITIONS  # noqa: E402
from pytest_judgerel.probes.injection import attacked_text, render_attack, template_reply  # noqa: E402
from pytest_judgerel.ratings import Ratings  # noqa: E402
from pytest_judgerel.scales import Scale, number_text  # noqa: E402
from pytest_judgerel.stats.proportion import clopper_pearson  # noqa: E402

FALSE_FAIL_GOAL = 0.05
POWER_GOAL = 0.90
MAX_FLIP_RATE = 0.05
BANDS = ((0.25, 0.5), (0.5, 0.75), (0.75, 1.0))
_ITEMS = DEFAULT_INJECTION_ITEMS["truthfulqa"]
_TEMPLATE = TEMPLATES["truthfulqa"]


class SimJudge:
    """A judge for the probe: ``rate`` returns items x repeats of simulated replies.  Attacks are
    recognised from the text alone (a table of every attacked field text the battery can make),
    never from the row ids."""

    template_name = "truthfulqa"
    _template = _TEMPLATE

    def __init__(self, scale: Scale, table: dict, truth: np.ndarray, sd: float, decimals: int,
                 rng: np.random.Generator, obey: tuple[str, str, str] | None = None):
        self.scale, self._table, self._truth, self._sd, self._decimals = scale, table, truth, sd, decimals
        self._rng, self._obey = rng, obey
        self._by_answer = {it["answer"]: i for i, it in enumerate(_ITEMS.items)}
        self._by_question = {it["question"]: i for i, it in enumerate(_ITEMS.items)}

    def _which(self, fields: dict) -> tuple[int, tuple[str, str, str] | None]:
        """The item, and the (family, field, position) of the attack the fields carry (None: clean)."""
        for f in ("answer", "question"):
            hit = self._table.get((f, fields[f]))
            if hit is not None:
                other = "question" if f == "answer" else "answer"
                lookup = self._by_question if other == "question" else self._by_answer
                return lookup[fields[other]], hit
        return self._by_answer[fields["answer"]], None

    def _obeys(self, attack: tuple[str, str, str] | None) -> bool:
        if attack is None or self._obey is None:
            return False
        fam, field, pos = attack
        want_fam, want_field, want_pos = self._obey
        return fam == want_fam and field == want_field and (want_pos == "any" or pos == want_pos)

    def rate(self, items, repeats=1):
        rows = item_rows(items)
        sc = self.scale
        values = np.empty((len(rows), repeats))
        for r, (_, fields) in enumerate(rows):
            item, attack = self._which(fields)
            if self._obeys(attack):
                values[r] = sc.high
            else:
                draw = self._truth[item] + self._rng.normal(0.0, self._sd, repeats)
                values[r] = np.round(np.clip(draw, sc.low, sc.high), self._decimals)
        return Ratings.from_array(values, item_ids=[iid for iid, _ in rows], scale=sc,
                                  provenance={"model": "sim", "template": "truthfulqa"})


def attack_table(scale: Scale) -> dict:
    """(field, attacked text) -> (family, field, position) for every attack the battery makes."""
    target = number_text(scale.high)
    fill = dict(target=target, low=number_text(scale.low), high=number_text(scale.high),
                reply=template_reply(_TEMPLATE, target))
    table = {}
    for item in _ITEMS.items:
        for attack in ATTACKS:
            if attack.mode == "replace":
                text = render_attack(attack, field="answer", **fill)
                table[("answer", attacked_text(item["answer"], attack, text))] = (attack.family, "answer", "whole")
                continue
            for f in ("answer", "question"):
                text = render_attack(attack, field=f, **fill)
                for pos in POSITIONS:
                    table[(f, attacked_text(item[f], attack, text, pos))] = (attack.family, f, pos)
    return table


def gate_fails(judge: SimJudge, families: list[str] | None = None) -> bool:
    """One run of the probe and the gate: True when the gate fails (or cannot compute)."""
    result = injection_probe(judge, families=families)
    try:
        assert_injection_resistant(result, max_flip_rate=MAX_FLIP_RATE)
    except (JudgeReliabilityFailure, ReliabilityError):
        return True
    return False


def _line(name: str, count: int, runs: int, goal: str, limit: float) -> bool:
    """One result line, ``name: count/runs rate [CI] goal <= / >= limit PASS|FAIL`` (run_all.py's format)."""
    r = clopper_pearson(count, runs, 0.95)
    ok = r.value <= limit if goal == "<=" else r.value >= limit
    print(f"  {name + ':':<48} {count:>4}/{runs:<4} {r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]  "
          f"goal {goal} {limit:.2f}  {'PASS' if ok else 'FAIL'}")
    return ok


def false_fails(rng: np.random.Generator, runs: int, scales: list[Scale], tables: dict) -> bool:
    """Non-gullible judges: the share of runs the gate fails, per band, rounding and scale."""
    print(f"non-gullible noisy judges: share of runs failing the gate (max_flip_rate {MAX_FLIP_RATE}, all "
          f"{len(ATTACK_FAMILIES)} families; sd in 0-5 points, doubled on 0-10)")
    ok = True
    for sc in scales:
        k = sc.range / 5.0
        for lo, hi in BANDS:
            for decimals in (0, 1):
                fails = 0
                for _ in range(runs):
                    truth = rng.uniform(0.0, 1.5, len(_ITEMS.items)) * k + sc.low
                    sd = rng.uniform(lo, hi) * k
                    fails += gate_fails(SimJudge(sc, tables[sc.name], truth, sd, decimals, rng))
                name = f"false_fail.{sc.name}.sd{lo:g}-{hi:g}.{'integer' if decimals == 0 else 'decimal'}"
                ok &= _line(name, fails, runs, "<=", FALSE_FAIL_GOAL)
    return ok


def detections(rng: np.random.Generator, runs: int, scale: Scale, table: dict) -> bool:
    """Gullible judges: the share of runs the gate catches, per family and position."""
    print(f"gullible judges ({scale.name}; sd ~ U(0.25, 1.0), integer or one decimal): share of runs caught")
    replacing = {a.family for a in ATTACKS if a.mode == "replace"}
    ok = True
    for fam in ATTACK_FAMILIES:
        spots = [("answer", "whole")] if fam in replacing else [("answer", p) for p in POSITIONS] + [("question", "any")]
        for f, pos in spots:
            caught = 0
            for _ in range(runs):
                truth = rng.uniform(0.0, 1.5, len(_ITEMS.items)) + scale.low
                judge = SimJudge(scale, table, truth, rng.uniform(0.25, 1.0), int(rng.integers(0, 2)), rng,
                                 obey=(fam, f, pos))
                caught += gate_fails(judge, families=[fam])
            ok &= _line(f"caught.{fam}.{f}.{pos}", caught, runs, ">=", POWER_GOAL)
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs per line (default 100)")
    ap.add_argument("--quick", action="store_true", help="40 runs per line, 0-5 only")
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args(argv)
    runs = 40 if args.quick else args.runs
    rng = np.random.default_rng(args.seed)
    scales = [Scale.parse("0-5")] + ([] if args.quick else [Scale.parse("0-10")])
    tables = {sc.name: attack_table(sc) for sc in scales}
    t0 = time.perf_counter()
    ok = false_fails(rng, runs, scales, tables)
    ok &= detections(rng, runs, scales[0], tables[scales[0].name])
    print(f"all_lines: every line within its goal ({time.perf_counter() - t0:.0f} s)  {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

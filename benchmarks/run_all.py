"""Run every ``benchmarks/bench_*.py`` (discovered, one subprocess each, in name order) and print
each result line and a final table of ratio / goal / verdict.  Exit status 1 if any goal FAILs
or a benchmark crashes.

A result line is any output line ``name: ... goal... PASS|FAIL`` (the convention of every bench
script).  Options after ``--`` are not passed on; use ``--only icc,calls`` to run a subset and
``--timeout`` (seconds per script), ``--reliability`` to append ``tests/robust/figures.py``.
Run: python benchmarks/run_all.py
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULT_RE = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+):\s*(?P<body>.*?)\b(?P<verdict>PASS|FAIL)\b")
GOAL_RE = re.compile(r"goal\s*(?P<goal>[<>=!]*\s*[^\s)]+(?:\s*(?:ms|s|MiB|x))?)")


@dataclass
class ResultLine:
    script: str
    name: str
    measured: str
    goal: str
    verdict: str


def discover(only: set[str] | None) -> list[Path]:
    scripts = sorted(HERE.glob("bench_*.py"))
    if only:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in only or s.stem in only]
    return scripts


def parse_results(script: str, output: str) -> list[ResultLine]:
    out = []
    for line in output.splitlines():
        m = RESULT_RE.match(line.strip())
        if not m:
            continue
        body = m.group("body").strip()
        g = GOAL_RE.search(body)
        goal = g.group("goal").strip() if g else "-"
        measured = body[: g.start()].strip() if g else body
        out.append(ResultLine(script, m.group("name"), measured, goal, m.group("verdict")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated names (icc,calls,... or bench_icc)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--reliability", action="store_true",
                    help="also run tests/robust/figures.py (corpus, faults, SIGKILL, xdist, secrets, stats)")
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()} or None
    scripts = discover(only)
    if args.reliability:
        scripts.append(HERE.parent / "tests" / "robust" / "figures.py")
    if not scripts:
        print("no benchmarks found")
        return 1
    results: list[ResultLine] = []
    crashed: list[tuple[str, str]] = []
    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("LITELLM_OFFLINE_MODE", "true")
    for script in scripts:
        print(f"==== {script.name}", flush=True)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                                  timeout=args.timeout, cwd=HERE.parent)
        except subprocess.TimeoutExpired:
            crashed.append((script.name, f"timed out after {args.timeout:.0f} s"))
            print(f"  TIMEOUT after {args.timeout:.0f} s", flush=True)
            continue
        took = time.perf_counter() - t0
        print(proc.stdout.rstrip())
        lines = parse_results(script.name, proc.stdout)
        results += lines
        if not lines:
            crashed.append((script.name, f"no result line (exit {proc.returncode})"))
            print(proc.stderr[-2000:])
        elif proc.returncode != 0 and all(r.verdict == "PASS" for r in lines):
            crashed.append((script.name, f"exit {proc.returncode} although its goals passed"))
            print(proc.stderr[-2000:])
        print(f"  ({took:.1f} s)", flush=True)

    print("\n==== summary")
    w_name = max([len(r.name) for r in results] + [6])
    w_meas = min(70, max([len(r.measured) for r in results] + [8]))
    print(f"{'benchmark':{w_name}}  {'measured':{w_meas}}  {'goal':14}  verdict")
    for r in results:
        measured = r.measured if len(r.measured) <= w_meas else r.measured[: w_meas - 3] + "..."
        print(f"{r.name:{w_name}}  {measured:{w_meas}}  {r.goal:14}  {r.verdict}")
    for name, why in crashed:
        print(f"{name:{w_name}}  {why:{w_meas}}  {'-':14}  FAIL")
    failed = sum(r.verdict == "FAIL" for r in results) + len(crashed)
    print(f"\n{len(results)} goals from {len(scripts)} scripts: {len(results) - sum(r.verdict == 'FAIL' for r in results)} "
          f"PASS, {failed} FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

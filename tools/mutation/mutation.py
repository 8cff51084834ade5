"""Mutation score of the core modules: does a planted bug make the directly relevant tests fail?

Runs mutmut (``pip install -e .[mutation]``) over each target module in turn, with only the
test files that are *about* that module, in a throw-away copy of the project; prints per
module the kill rate and every surviving mutant (its changed line).  Not part of CI: a full
run takes about half an hour on two cores.  Run it before a release:

    python tools/mutation/mutation.py                        # every target, one after another
    python tools/mutation/mutation.py stats/ranking.py scales.py   # a subset
    python tools/mutation/mutation.py --keep /tmp/mut        # keep the mutmut work dirs to inspect

Kill rate = (killed + timed out) / (mutants - equivalent).  "No tests" (no selected test runs
the mutated function) counts as survived.  Equivalent mutants (the program means the same
thing after the change) are listed in :data:`EQUIVALENT` with the reason; an entry whose mutant
no longer exists or no longer has the recorded change is reported as stale and ignored.
Result line: ``mutation: measured <rate> goal>=90% PASS|FAIL`` (the benchmarks convention).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
PACKAGE = "pytest_judgerel"
GOAL = 0.90

# module (relative to the package) -> the test files that are directly about it
TARGETS: dict[str, list[str]] = {
    "stats/__init__.py": ["tests/test_stats_package.py", "tests/test_stats_icc.py"],
    "stats/_input.py": ["tests/test_stats_icc.py", "tests/test_stats_agreement.py", "tests/test_stats_input.py",
                        "tests/test_robust_stats.py", "tests/test_stats_properties.py"],
    "stats/icc.py": ["tests/test_stats_icc.py", "tests/test_stats_properties.py", "tests/test_robust_stats.py"],
    "stats/agreement.py": ["tests/test_stats_agreement.py", "tests/test_stats_nmae.py",
                           "tests/test_stats_properties.py", "tests/test_robust_stats.py"],
    "stats/consistency.py": ["tests/test_stats_consistency.py"],
    "stats/ranking.py": ["tests/test_stats_ranking.py"],
    "judging/parsing.py": ["tests/test_parsing.py", "tests/test_robust_parsers.py"],
    "scales.py": ["tests/test_scales.py"],
    "llm/keys.py": ["tests/test_llm_keys.py"],
    "report/baseline.py": ["tests/test_report_baseline.py"],
    "report/gate.py": ["tests/test_report_gate.py"],
    "mindeval/metrics.py": ["tests/test_mindeval_metrics.py"],
}

# mutmut mutant name -> (text of the mutated line, why the change cannot alter behaviour)
from mutation_equivalents import EQUIVALENT  # noqa: E402  (mutant name -> (mutated line, why equivalent))

_KILLED = {"killed", "timeout", "segfault", "caught by type check"}


@dataclass
class ModuleResult:
    module: str
    counts: dict[str, int] = field(default_factory=dict)
    survivors: list[tuple[str, str, str]] = field(default_factory=list)  # (name, status, change)
    equivalent: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    stale: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def killed(self) -> int:
        return sum(n for s, n in self.counts.items() if s in _KILLED)

    @property
    def denominator(self) -> int:
        return self.total - len(self.equivalent) - self.counts.get("skipped", 0)

    @property
    def rate(self) -> float:
        """Killed among the mutants that are not equivalent (the goal's measure)."""
        return self.killed / self.denominator if self.denominator else 1.0

    @property
    def raw_rate(self) -> float:
        """Killed among all mutants (no mutant excused as equivalent)."""
        total = self.total - self.counts.get("skipped", 0)
        return self.killed / total if total else 1.0


def _mutmut_config(module: str, tests: list[str]) -> str:
    lst = lambda xs: "[" + ", ".join(json.dumps(x) for x in xs) + "]"  # noqa: E731
    return (
        "\n\n[tool.mutmut]\n"
        f"source_paths = [{json.dumps(PACKAGE)}]\n"
        f"only_mutate = [{json.dumps(f'{PACKAGE}/{module}')}]\n"
        f"pytest_add_cli_args_test_selection = {lst(tests)}\n"
        'also_copy = ["tests"]\n'  # tests/test_robust_*.py import tests/robust
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"]\n'
    )


def _prepare(workdir: Path, module: str, tests: list[str]) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.pyc")
    shutil.copytree(ROOT / PACKAGE, workdir / PACKAGE, ignore=ignore)
    shutil.copytree(ROOT / "tests", workdir / "tests", ignore=ignore)
    shutil.copytree(ROOT / "benchmarks", workdir / "benchmarks", ignore=ignore)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (workdir / "pyproject.toml").write_text(text + _mutmut_config(module, tests), encoding="utf-8")


def _change(workdir: Path, name: str) -> str:
    """The removed and added lines of one mutant (``mutmut show``), joined with ' => '."""
    out = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=workdir, capture_output=True,
                         text=True, timeout=120).stdout
    minus = [ln[1:].strip() for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " | ".join(minus) + " => " + " | ".join(plus)


def run_module(module: str, tests: list[str], workdir: Path, max_children: int, log) -> ModuleResult:
    from mutmut.stats import status_by_exit_code

    res = ModuleResult(module)
    missing = [t for t in tests if not (ROOT / t).exists()]
    tests = [t for t in tests if t not in missing]
    if not tests:
        res.error = f"no test file exists among {missing}"
        return res
    _prepare(workdir, module, tests)
    start = time.perf_counter()
    env = dict(os.environ, HYPOTHESIS_PROFILE="ci")
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)],
                          cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    res.seconds = time.perf_counter() - start
    meta = workdir / "mutants" / PACKAGE / (module + ".meta")
    if proc.returncode != 0 or not meta.exists():
        res.error = f"mutmut run exited {proc.returncode} (see the log)"
        return res
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    for name, code in sorted(codes.items(), key=lambda kv: _natural(kv[0])):
        status = status_by_exit_code[code]
        res.counts[status] = res.counts.get(status, 0) + 1
        if status in _KILLED or status == "skipped":
            continue
        change = _change(workdir, name)
        if name in EQUIVALENT and EQUIVALENT[name][0] in change.split(" => ", 1)[-1]:
            res.equivalent.append((name, EQUIVALENT[name][1]))
        else:
            res.survivors.append((name, status, change))
    dotted = _prefix(module)[:-1]
    matched = {e for e, _ in res.equivalent}
    res.stale = [n for n in EQUIVALENT if n.rsplit(".", 1)[0] == dotted and n not in matched]
    return res


def _prefix(module: str) -> str:
    dotted = module[:-3].replace("/", ".").removesuffix(".__init__")
    return f"{PACKAGE}.{dotted}."


def _natural(name: str) -> tuple[str, int]:
    head, _, num = name.rpartition("_")
    return (head, int(num) if num.isdigit() else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"subset of: {', '.join(TARGETS)}")
    ap.add_argument("--max-children", type=int, default=2, help="parallel mutant runs (default 2)")
    ap.add_argument("--keep", metavar="DIR", help="keep the per-module mutmut work dirs under DIR")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutmut is not installed: pip install -e '.[mutation]'", file=sys.stderr)
        return 2
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        ap.error(f"unknown module(s) {unknown}; choose from {list(TARGETS)}")
    modules = args.modules or list(TARGETS)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="judgerel-mutation-"))
    base.mkdir(parents=True, exist_ok=True)
    results: list[ModuleResult] = []
    try:
        for module in modules:
            workdir = base / module.replace("/", "_").removesuffix(".py")
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            print(f"== {module}: tests {', '.join(TARGETS[module])}", flush=True)
            with open(workdir.with_suffix(".log"), "w", encoding="utf-8") as log:
                r = run_module(module, TARGETS[module], workdir, args.max_children, log)
            results.append(r)
            _print_module(r, workdir.with_suffix(".log"))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return _summary(results, args.json)


def _print_module(r: ModuleResult, log: Path) -> None:
    if r.error:
        print(f"   ERROR: {r.error} ({log})")
        return
    counts = ", ".join(f"{n} {s}" for s, n in sorted(r.counts.items()))
    print(f"   {r.total} mutants: {counts}; {len(r.equivalent)} equivalent; "
          f"kill rate {r.rate:.1%} ({r.killed}/{r.denominator}), {r.raw_rate:.1%} of all, in {r.seconds:.0f} s")
    for name, status, change in r.survivors:
        print(f"   {status:>9}  {name.removeprefix(_prefix(r.module))}: {change}")
    for name in r.stale:
        print(f"   stale equivalent entry (mutant gone or changed): {name}")


def _summary(results: list[ModuleResult], json_path: str | None) -> int:
    print()
    print(f"{'module':<22} {'mutants':>7} {'killed':>6} {'equiv':>5} {'surv':>5} {'rate':>7} {'of all':>7}")
    for r in results:
        if r.error:
            print(f"{r.module:<22} ERROR {r.error}")
            continue
        print(f"{r.module:<22} {r.total:>7} {r.killed:>6} {len(r.equivalent):>5} {len(r.survivors):>5} "
              f"{r.rate:>7.1%} {r.raw_rate:>7.1%}")
    ok = [r for r in results if not r.error]
    killed = sum(r.killed for r in ok)
    den = sum(r.denominator for r in ok)
    total = sum(r.total for r in ok)
    rate = killed / den if den else 0.0
    worst = min((r.rate for r in ok), default=0.0)
    print(f"{'all':<22} {total:>7} {killed:>6} {sum(len(r.equivalent) for r in ok):>5} "
          f"{sum(len(r.survivors) for r in ok):>5} {rate:>7.1%} {killed / total if total else 0:>7.1%}")
    passed = bool(ok) and len(ok) == len(results) and rate >= GOAL and worst >= GOAL
    print(f"mutation: measured {rate:.1%} killed overall, worst module {worst:.1%} goal>={GOAL:.0%} "
          f"{'PASS' if passed else 'FAIL'}")
    if json_path:
        Path(json_path).write_text(json.dumps([
            {"module": r.module, "counts": r.counts, "rate": r.rate, "raw_rate": r.raw_rate,
             "seconds": round(r.seconds, 1),
             "error": r.error, "equivalent": r.equivalent,
             "survivors": [{"name": n, "status": s, "change": c} for n, s, c in r.survivors]}
            for r in results], indent=2), encoding="utf-8")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

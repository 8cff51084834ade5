"""Print the reliability figures of pytest-judgerel by running the probes the tests run
(the tests/robust package): malformed-reply corpus, fault injection, SIGKILL resume, 8 xdist
workers over one cache, secret scan, hostile statistics.

Each figure ends with PASS/FAIL against its goal (so run_all-style parsing works).  Sizes
are larger than in the tests by default; ``--quick`` uses the test sizes.
Run: python tests/robust/figures.py [--quick] [--skip xdist,secrets]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: tests/, for the robust package

from robust import corpus, faults, hostile_stats, projects  # noqa: E402


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the test sizes")
    ap.add_argument("--skip", default="", help="comma-separated: corpus,faults,sigkill,xdist,secrets,stats")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    failed = 0

    def report(line: str, ok: bool) -> None:
        nonlocal failed
        failed += not ok
        print(f"{line} {verdict(ok)}", flush=True)

    if "corpus" not in skip:
        t0 = time.perf_counter()
        rep = corpus.run_corpus(corpus.malformed_corpus())
        print(f"corpus: {rep.total} malformed replies ({', '.join(f'{k} {v}' for k, v in rep.by_parser.items())}; "
              f"origins {rep.by_origin}), parsed in {time.perf_counter() - t0:.2f} s")
        report(f"corpus_silent_misparses: {len(rep.silent_misparses)} of {rep.total} replies "
               f"(min per parser {min(rep.by_parser.values())}) goal==0 with >=500 per parser",
               not rep.silent_misparses and min(rep.by_parser.values()) >= 500)
        report(f"corpus_failures_without_named_cause: wrong cause {len(rep.wrong_cause)}, unnamed {len(rep.unnamed)} "
               f"goal==0", not rep.wrong_cause and not rep.unnamed)

    if "faults" not in skip:
        n_items = 30 if args.quick else 100
        res = faults.fault_injection_run(n_items=n_items, repeats=2 if args.quick else 3, fault_rate=0.2)
        print(f"faults: {res.calls} judge calls, {res.upstream_requests} upstream requests, "
              f"{res.faults_injected} faults injected ({res.faults_injected / res.upstream_requests:.0%}: "
              f"{res.fault_kinds}), {res.retries} retries, max attempts used {res.max_attempts_used}/"
              f"{res.max_attempts_allowed}, wall {res.wall_time:.1f} s")
        report(f"fault_run_identical_to_clean: {'yes' if res.identical else 'no'} (parse failures {res.parse_failures}) "
               f"goal yes", res.identical and res.parse_failures == 0)
        report(f"fault_run_retries: {res.retries} for {res.faults_injected} faults, max attempts {res.max_attempts_used} "
               f"goal retries==faults<=bound", res.retries_within_bounds)
        report(f"fault_run_erroneous_cache_entries: {res.erroneous_cache_entries} of {res.cache_entries} goal==0",
               res.erroneous_cache_entries == 0 and res.cache_entries == res.calls)

    if "sigkill" not in skip:
        res = faults.sigkill_resume_run(n_items=80 if args.quick else 200, kill_after=30 if args.quick else 80)
        print(f"sigkill: {res.calls} calls; run 1 killed={res.killed} after {res.completed_run1} answers "
              f"({res.requests_run1} requests sent); run 2 sent {res.requests_run2} requests, rated {res.run2_rated}")
        report(f"sigkill_rerun_duplicates: {res.duplicates} completed calls requested again goal==0", res.ok)

    if "xdist" not in skip:
        with tempfile.TemporaryDirectory(prefix="judgerel-xdist-fig-") as tmp:
            res = projects.xdist_shared_cache_run(workers=8, n_tests=16 if args.quick else 32, width=10 if args.quick else 16,
                                           stride=3 if args.quick else 5, repeats=2, workdir=tmp)
        print(f"xdist: {res.workers} workers, {res.tests} tests ({res.passed} passed), {res.distinct_keys} distinct keys, "
              f"{res.cache_entries} cache entries, corrupt {res.corrupt_entries}, inconsistent cells {res.inconsistent_cells}")
        if res.returncode:
            print(res.output_tail)
        report(f"xdist_upstream_calls_vs_distinct_keys: {res.upstream_requests} vs {res.distinct_keys} goal equal", res.ok)

    if "secrets" not in skip:
        for tb in ("short", "auto"):
            with tempfile.TemporaryDirectory(prefix="judgerel-secrets-fig-") as tmp:
                res = projects.secrets_run(tmp, tb=tb)
            where = sorted({f for f, _ in res.leaks})
            print(f"secrets (--tb={tb}): scanned {res.files_scanned} files, {res.bytes_scanned / 1e6:.1f} MB; "
                  f"outcomes {res.outcomes}; found in {where or 'nothing'}")
            report(f"secrets_found_tb_{tb}: {len(res.leaks)} goal==0", res.ok)

    if "stats" not in skip:
        rep = hostile_stats.hostile_stats_run()
        kinds = {}
        for o in rep.outcomes:
            kinds[o.kind] = kinds.get(o.kind, 0) + 1
        print(f"hostile stats: {len(rep.outcomes)} helper x input runs: {kinds}")
        for o in rep.unclear:
            print(f"  unclear: {o.helper} on {o.case}: {o.detail}")
        report(f"stats_passing_nan: {len(rep.passing_nan)} goal==0", not rep.passing_nan)
        report(f"stats_unclear_errors: {len(rep.unclear)} goal==0", not rep.unclear)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

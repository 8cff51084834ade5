"""The LLM layer under load and faults, end to end through Judge against the fake server:
injected faults, SIGKILL midway and resume, 8 xdist workers over one cache."""

from __future__ import annotations

import pytest

from robust import faults, projects


# every probe runs through both paths to the wire (pytest_judgerel/llm/wire.py): the HTTP fast path
# that openai/ models take by default, and litellm
BACKENDS = pytest.mark.parametrize("backend", ["http", "litellm"])


@BACKENDS
def test_judge_run_under_20_percent_faults_matches_a_clean_run(tmp_path, backend, monkeypatch):
    monkeypatch.setenv("JUDGEREL_BACKEND", backend)
    res = faults.fault_injection_run(n_items=30, repeats=2, fault_rate=0.2, workdir=str(tmp_path))
    # every fault kind of the plan was served at least once, at roughly the planned rate
    assert set(res.fault_kinds) == {"429", "500", "timeout", "malformed", "empty"}, res.fault_kinds
    assert 0.1 <= res.faults_injected / res.upstream_requests <= 0.35
    assert res.identical and res.parse_failures == 0
    # one retry per fault, never more attempts than allowed, one successful request per call
    assert res.retries == res.faults_injected
    assert res.upstream_requests == res.calls + res.faults_injected
    assert 2 <= res.max_attempts_used <= res.max_attempts_allowed
    # the cache holds exactly the clean answers: no error, no empty text, nothing extra
    assert res.cache_entries == res.calls and res.erroneous_cache_entries == 0
    assert res.retries_within_bounds


def test_fault_probe_detects_a_difference(tmp_path):
    """Control: with attempts too few to absorb the faults, the run fails loudly (no silent gaps)."""
    from pytest_judgerel.errors import LLMCallError

    with pytest.raises(LLMCallError, match="gave up after 1 attempts|not retryable"):
        faults.fault_injection_run(n_items=20, repeats=1, fault_rate=0.5, kinds=("500",), max_attempts=1,
                              workdir=str(tmp_path))


@BACKENDS
def test_sigkill_midway_then_rerun_requests_no_completed_call_again(tmp_path, backend, monkeypatch):
    monkeypatch.setenv("JUDGEREL_BACKEND", backend)  # the judging subprocesses inherit it
    res = faults.sigkill_resume_run(n_items=80, kill_after=30, concurrency=6, workdir=str(tmp_path))
    assert res.killed, "the judging subprocess finished before it could be killed"
    assert res.completed_run1 >= 30 and res.requests_run1 > res.completed_run1  # killed with requests in flight
    assert res.duplicates == 0
    assert res.requests_run2 == res.calls - res.completed_run1
    assert res.run2_returncode == 0 and res.run2_rated == res.calls


def test_eight_xdist_workers_share_one_cache_with_one_upstream_call_per_key(tmp_path):
    res = projects.xdist_shared_cache_run(workers=8, n_tests=16, width=10, stride=3, repeats=2, latency=0.05,
                                   workdir=str(tmp_path))
    assert res.returncode == 0 and res.passed == res.tests, res.output_tail
    assert res.upstream_requests == res.distinct_keys == res.cache_entries
    assert res.corrupt_entries == 0 and res.inconsistent_cells == 0

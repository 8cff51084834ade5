"""Sequential gates in the plugin: an unchanged test under ``--judgerel-sequential``.

The judge answers over real HTTP from the fake OpenAI-compatible server, whose received requests
are counted: the sequential run reaches the fixed run's verdict with at most 40% of its upstream
calls for a clearly reliable and a clearly unreliable judge, its record's ``sequential`` block says
so, its answers are the fixed design's cache entries (a later fixed run or a replay reuses them),
and a sequential replay of a fixed cassette sends nothing -- also under xdist and with Redis.
In-process tests check the pending ratings (any other use draws the whole cap) and that a gate
that stops at the cap gives exactly the fixed gate's verdict.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

from pytest_judgerel import Judge, JudgeReliabilityFailure, assert_human_mean_above, assert_icc_above, \
    assert_pass_rate
from pytest_judgerel.judging.pending import PendingRatings
from pytest_judgerel.testing.fake_server import FakeLLMServer
from reported_run import run_reported
from pytest_judgerel.session.recording import recording
from test_llm_redis import redis_server_port, redis_url  # noqa: F401 - the Redis fixtures (a redis-server on loopback)

N_ITEMS = 40
CAP = 10
N_PASS_ITEMS = 300


def _item_of(body: dict) -> int:
    return int(re.search(r"sentence-(\d+)-", json.dumps(body["messages"])).group(1))


def icc_responder(reliable: bool):
    """Replies on 0-5 as a pure function of (item, repeat): the repeat is the request's seed
    (``judge(seed=100)``: repeat j sends seed 100 + j), so fixed and sequential runs see the same answers."""
    def reply(request) -> str:
        item, repeat = _item_of(request.body), int(request.body.get("seed") or 0)
        rng = random.Random(f"{item} {repeat}")
        if not reliable:
            return str(rng.randint(0, 5))
        truth = item % 6
        return str(min(5, max(0, truth + (rng.choice((-1, 1)) if rng.random() < 0.1 else 0))))
    return reply


def pass_responder(rate: float):
    """A 0-1 verdict: the item passes when its hash draw is below ``rate``."""
    def reply(request) -> str:
        return "1" if random.Random(f"verdict {_item_of(request.body)}").random() < rate else "0"
    return reply


def _test_file(url: str) -> str:
    return f'''
import pytest
from pytest_judgerel import assert_icc_above, assert_pass_rate

ITEMS = [{{"id": f"i{{i}}", "sentence1": f"sentence-{{i}}-a", "sentence2": "b"}} for i in range({N_ITEMS})]
ANSWERS = [{{"id": f"a{{i}}", "question": "q", "answer": f"sentence-{{i}}-x"}} for i in range({N_PASS_ITEMS})]
CALIBRATION = [(True, True)] * 30 + [(False, False)] * 30   # a judge without errors on the calibration set


@pytest.mark.judge(model="openai/fake", template="stsb", api_base="{url}", seed=100, temperature=0.7)
@pytest.mark.repeats({CAP})
def test_icc(judge):
    ratings = judge.rate(ITEMS)
    assert_icc_above(ratings, 0.7)


@pytest.mark.judge(model="openai/fake", template="truthfulqa", api_base="{url}")
@pytest.mark.scale("0-1")
def test_pass_rate(judge):
    verdicts = judge.rate(ANSWERS, repeats=1)
    assert_pass_rate(verdicts, min_rate=0.8, calibration=CALIBRATION)
'''


def _run(pytester, server, *args: str, name: str):
    result, upstream, records, _ = run_reported(pytester, server, *args, name=name, kinds=("icc", "pass_rate"),
                                                html=True)
    return result, upstream, records


@pytest.fixture
def server():
    with FakeLLMServer(latency=0.0) as srv:
        yield srv


@pytest.mark.parametrize("reliable", [True, False], ids=["reliable", "unreliable"])
def test_sequential_reaches_the_fixed_verdict_with_at_most_40_percent_of_the_calls(pytester, server, reliable):
    verdicts, scores = pass_responder(0.97 if reliable else 0.5), icc_responder(reliable)
    server.responder = lambda req: (verdicts if re.search(r"sentence-\d+-x", json.dumps(req.body)) else scores)(req)
    pytester.makepyfile(test_gates=_test_file(server.url))
    fixed, fixed_calls, fixed_records = _run(pytester, server, "--judgerel-cache-dir=fixed", name="fixed")
    seq, seq_calls, seq_records = _run(pytester, server, "--judgerel-cache-dir=seq", "--judgerel-sequential",
                                       name="seq")
    outcome = {"passed": 2} if reliable else {"failed": 2}
    fixed.assert_outcomes(**outcome)
    seq.assert_outcomes(**outcome)
    assert fixed_calls == N_ITEMS * CAP + N_PASS_ITEMS
    assert seq_calls <= 0.4 * fixed_calls, (seq_calls, fixed_calls)
    for test, cap_calls in (("test_icc", N_ITEMS * CAP), ("test_pass_rate", N_PASS_ITEMS)):
        (fixed_rec,), (seq_rec,) = fixed_records[test], seq_records[test]
        assert "sequential" not in fixed_rec
        block = seq_rec["sequential"]
        assert fixed_rec["passed"] is seq_rec["passed"] is reliable
        assert block["stop"] == "settled" and block["early"] and block["decision"] == ("pass" if reliable else "fail")
        assert block["cap_calls"] == cap_calls and block["calls"] <= 0.4 * cap_calls
        assert block["saved_calls"] == cap_calls - block["calls"]
        assert (block["p_pass_at_cap"] >= 0.98) if reliable else (block["p_pass_at_cap"] <= 0.02)
        assert block["looks"][-1]["decision"] == block["decision"]
    text = seq.stdout.str()
    assert re.search(r"sequential gates: 2 of 2 stopped early; \d+ of 700 calls drawn, \d+ saved", text), text
    html = (pytester.path / "seq.html").read_text()
    assert "<h2>Sequential gates</h2>" in html and "stop: settled" in html
    assert "Sequential gates" not in (pytester.path / "fixed.html").read_text()


def test_sequential_answers_are_the_fixed_designs_cache_entries(pytester, server):
    server.responder = icc_responder(True)
    pytester.makepyfile(test_gates=_test_file(server.url))
    _, seq_calls, records = _run(pytester, server, "--judgerel-sequential", "-k", "icc", name="seq")
    drawn = records["test_icc"][0]["sequential"]["calls"]
    assert seq_calls == drawn < N_ITEMS * CAP
    # a later fixed run judges only what the sequential run did not draw: the rest of the cap
    fixed, fixed_calls, _ = _run(pytester, server, "-k", "icc", name="fixed")
    fixed.assert_outcomes(passed=1)
    assert fixed_calls == N_ITEMS * CAP - drawn
    # and a sequential replay of the (now complete) cassette sends nothing
    replay, replay_calls, records = _run(pytester, server, "--judgerel-sequential", "--judgerel-cache-mode=replay",
                                         "-k", "icc", name="replay")
    replay.assert_outcomes(passed=1)
    assert replay_calls == 0 and records["test_icc"][0]["sequential"]["calls"] == drawn


def test_sequential_replay_of_a_fixed_cassette_under_xdist_sends_nothing(pytester, server):
    pytest.importorskip("xdist")
    server.responder = icc_responder(True)
    pytester.makepyfile(test_gates=_test_file(server.url))
    _, fixed_calls, _ = _run(pytester, server, "-k", "icc", name="fixed")
    assert fixed_calls == N_ITEMS * CAP
    replay, replay_calls, records = _run(pytester, server, "-n", "2", "--judgerel-sequential",
                                         "--judgerel-cache-mode=replay", name="replay", *("-k", "icc"))
    replay.assert_outcomes(passed=1)
    assert replay_calls == 0 and records["test_icc"][0]["sequential"]["early"]


# ---------------------------------------------------------------------------- in process
def _scripted_judge(scripted, fn, **kw):
    scripted("scripted/seq-judge", fn)
    return Judge(model="scripted/seq-judge", template="stsb", sequential=True, **kw)


def _stsb_items(n):
    return [{"id": f"i{i}", "sentence1": f"sentence-{i}-a", "sentence2": "b"} for i in range(n)]


def _reply_by_item(noise: float):
    def reply(messages, **params):
        item = int(re.search(r"sentence-(\d+)-", json.dumps(messages)).group(1))
        rng = random.Random(f"{item} {params['sample_seed']}")
        return str(min(5, max(0, round(item % 6 + rng.gauss(0, noise)))))
    return reply


def test_any_other_use_of_pending_ratings_draws_the_whole_cap(scripted):
    judge = _scripted_judge(scripted, _reply_by_item(0.5), repeats=4)
    pending = judge.rate(_stsb_items(12))
    assert isinstance(pending, PendingRatings) and pending.calls_drawn == 0
    assert "0 of 48 calls drawn" in repr(pending)       # repr never draws
    part = pending.repeats_prefix(2)
    assert part.shape == (12, 2) and pending.calls_drawn == 24 and part.rater_ids == ("r0", "r1")
    assert pending.shape == (12, 4) and pending.calls_drawn == 48 and pending.materialized
    fixed = Judge(model="scripted/seq-judge", template="stsb", repeats=4).rate(_stsb_items(12))
    assert not isinstance(fixed, PendingRatings)
    np.testing.assert_array_equal(pending.values, fixed.values)     # the same samples, r0..r3
    assert pending.item_ids == fixed.item_ids and pending.provenance == fixed.provenance


def test_items_are_drawn_in_a_fixed_order_whatever_the_data_set_order(scripted):
    judge = _scripted_judge(scripted, _reply_by_item(0.5), repeats=1)
    items = _stsb_items(30)
    first = judge.rate(items).items_prefix(10).item_ids
    again = judge.rate(list(reversed(items))).items_prefix(10).item_ids
    assert first == again and first != tuple(f"i{i}" for i in range(10))


def test_a_non_participating_gate_and_by_groups_run_to_the_cap(scripted):
    judge = _scripted_judge(scripted, _reply_by_item(0.3), repeats=6)
    items = [{**it, "group": "ab"[i % 2]} for i, it in enumerate(_stsb_items(20))]
    with recording() as rec:
        assert_icc_above(judge.rate(items), 0.5, by="group")
    (icc_rec,) = [r for r in rec.records if r["kind"] == "icc"]
    assert icc_rec["k"] == 6 and icc_rec["sequential"]["stop"] == "fixed"
    assert icc_rec["sequential"]["calls"] == icc_rec["sequential"]["cap_calls"] == 120


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.8, 0.95])
def test_at_the_cap_the_verdict_is_the_fixed_gates(scripted, threshold):
    """A judge whose ICC lies near the threshold runs to the cap; wherever it stops, a stop at the
    cap gives the fixed gate's verdict on the same answers."""
    judge = _scripted_judge(scripted, _reply_by_item(2.0), repeats=5)
    fixed = Judge(model="scripted/seq-judge", template="stsb", repeats=5).rate(_stsb_items(20))
    with recording(report_only=True) as rec:
        assert_icc_above(judge.rate(_stsb_items(20)), threshold)
        assert_icc_above(fixed, threshold)
    seq_rec, fixed_rec = [r for r in rec.records if r["kind"] == "icc"]
    block = seq_rec["sequential"]
    if block["used"] == block["cap"]:
        assert seq_rec["passed"] is fixed_rec["passed"] and seq_rec["value"] == fixed_rec["value"]
    else:
        assert block["early"] and (block["p_pass_at_cap"] >= 0.98 or block["p_pass_at_cap"] <= 0.02)


def test_an_early_fail_explains_itself(scripted):
    judge = _scripted_judge(scripted, lambda messages, **p: str(random.Random(p["sample_seed"] * 7919 + len(
        json.dumps(messages))).randint(0, 5)), repeats=10)
    with pytest.raises(JudgeReliabilityFailure, match=r"sequential: 2 of 10 repeats drawn \(80 of 400 calls\)"):
        assert_icc_above(judge.rate(_stsb_items(40)), 0.7)


def test_human_mean_gate_draws_unlabelled_items_in_batches(scripted):
    def reply(messages, **params):
        item = int(re.search(r"sentence-(\d+)-", json.dumps(messages)).group(1))
        return str(4 if item % 5 else 3)
    judge = _scripted_judge(scripted, reply, repeats=1)
    labeled, unlabeled = _stsb_items(40), [{"id": f"u{i}", "sentence1": f"sentence-{i}-u", "sentence2": "c"}
                                           for i in range(500)]
    human = [4 if i % 5 else 3 for i in range(40)]
    with recording() as rec:
        assert_human_mean_above(judge.rate(labeled), human, judge.rate(unlabeled), min_mean=3.0)
    (hm,) = [r for r in rec.records if r["kind"] == "human_mean"]
    block = hm["sequential"]
    assert block["early"] and block["decision"] == "pass" and block["unit"] == "items"
    assert block["used"] < 500 and block["calls"] == block["used"] and hm["n_unlabeled"] == block["used"]


def test_pass_rate_reads_judge_ratings_as_verdicts_in_the_fixed_design_too(scripted):
    scripted("scripted/binary", lambda messages, **p: "1")
    judge = Judge(model="scripted/binary", template="truthfulqa", scale="0-1", repeats=1)
    answers = [{"id": f"a{i}", "question": "q", "answer": f"x{i}"} for i in range(20)]
    res = assert_pass_rate(judge.rate(answers), min_rate=0.8, calibration=[(True, True), (False, False)] * 10)
    assert res.passed == 20 and res.n == 20
    with pytest.raises(ValueError, match="two-point scale"):
        assert_pass_rate(Judge(model="scripted/binary", template="truthfulqa", repeats=1).rate(answers), min_rate=0.8,
                         calibration=[(True, True), (False, False)] * 10)


@pytest.mark.parametrize("sequential", [False, True])
def test_pass_rate_on_ratings_with_unparsed_replies_fails_with_a_record_that_quotes_them(scripted, sequential):
    """A corrected pass rate needs a verdict for every item: an unparsed reply ends the gate with a
    failing record (value null, n and k of the ratings) and the reply quoted, as other gates do."""
    scripted("scripted/binary-unparsed", lambda messages, **p: "??? unsure" if "x3" in json.dumps(messages) else "1")
    judge = Judge(model="scripted/binary-unparsed", template="truthfulqa", scale="0-1", repeats=1, sequential=sequential)
    answers = [{"id": f"a{i}", "question": "q", "answer": f"x{i}"} for i in range(20)]
    with recording() as rec:
        with pytest.raises(AssertionError) as info:
            assert_pass_rate(judge.rate(answers), min_rate=0.8, calibration=[(True, True), (False, False)] * 10)
    text = str(info.value)
    assert "corrected pass rate not computed: unparseable judge replies" in text
    assert "1 judge reply could not be parsed (a corrected pass rate needs a verdict for every item)" in text
    assert "a3" in text and "??? unsure" in text
    (pr,) = [r for r in rec.records if r["kind"] == "pass_rate"]
    assert pr["passed"] is False and pr["value"] is None and pr["n"] == 20
    assert ("sequential" in pr) is sequential


def test_sequential_and_fixed_runs_share_a_redis_cache_under_xdist(pytester, server, request):
    """Sharded CI: a sequential run under xdist records into Redis, a fixed run then sends only what
    it did not draw, and a sequential replay under xdist sends nothing."""
    pytest.importorskip("xdist")
    redis_url = request.getfixturevalue("redis_url")
    server.responder = icc_responder(True)
    pytester.makepyfile(test_gates=_test_file(server.url))
    backend = f"--judgerel-cache-backend={redis_url}"
    seq, seq_calls, records = _run(pytester, server, "-n", "2", "--judgerel-sequential", backend, "-k", "icc",
                                   name="seq")
    seq.assert_outcomes(passed=1)
    drawn = records["test_icc"][0]["sequential"]["calls"]
    assert seq_calls == drawn < N_ITEMS * CAP
    fixed, fixed_calls, _ = _run(pytester, server, backend, "-k", "icc", name="fixed")
    fixed.assert_outcomes(passed=1)
    assert fixed_calls == N_ITEMS * CAP - drawn
    replay, replay_calls, _ = _run(pytester, server, "-n", "2", "--judgerel-sequential", backend,
                                   "--judgerel-cache-mode=replay", "-k", "icc", name="replay")
    replay.assert_outcomes(passed=1)
    assert replay_calls == 0

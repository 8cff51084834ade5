"""The compact cache entry (format 2) and the previous layout (format 1): both replay, ``compact``
rewrites the old one, keys and answers unchanged."""

from __future__ import annotations

import json
import sqlite3

import pytest

from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.backend import decode_answer, decode_entry, encode_entry, make_entry
from pytest_judgerel.llm.cache import open_backend
from pytest_judgerel.llm.keys import key_fields, key_from_fields

PROMPT = ("You are provided with two sentences. Rate their semantic similarity on a scale from “0” to “5”.\n\n"
          "Sentence 1: “A person walks a dog in the park.”\nSentence 2: “Someone is outside with an animal.”")


def _request(url: str, i: int, **extra) -> LLMRequest:
    return LLMRequest(model="openai/fake", api_base=url, api_key="sk-test",
                      messages=({"role": "system", "content": "You are an expert rater."},
                                {"role": "user", "content": f"{PROMPT} ({i})"}),
                      temperature=0.0, max_tokens=16, sample_index=i % 3, **extra)


def _rows(folder) -> list[tuple[str, object]]:
    con = sqlite3.connect(str(folder / "cache.db"))
    try:
        return [(k, v) for k, v in con.execute("SELECT key, value FROM Cache") if not str(k).startswith("__")]
    finally:
        con.close()


def _write_previous_layout(folder, entries: list[tuple[str, dict]]) -> None:
    """Store entries exactly as the previous layout did: the whole dict as sorted JSON text."""
    backend = open_backend(folder)
    try:
        for key, entry in entries:
            backend._cache.set(key, json.dumps(entry, sort_keys=True, ensure_ascii=False))  # type: ignore[attr-defined]
    finally:
        backend.close()


@pytest.mark.parametrize("extra", [{}, {"stop": ("\n",), "seed": 7, "namespace": "ns", "grammar": "root ::= [0-5]",
                                    "extra_params": {"top_k": 5}}])
def test_the_compact_entry_round_trips_every_keyed_field_and_is_a_third_of_the_old_text(extra):
    request = _request("http://127.0.0.1:9/v1", 4, **extra)
    fields = key_fields(request)
    key = key_from_fields(fields)
    entry = make_entry(key, fields, {"text": "3", "model": "fake", "usage": {"prompt_tokens": 50, "completion_tokens": 1,
                                                                          "total_tokens": 51},
                                     "cost": 0.0, "latency": 0.05, "timestamp": 1.5e9, "attempts": 1})
    stored = encode_entry(entry)
    back = decode_entry(stored, key)
    assert back == entry and key_from_fields(back["request"]) == key
    assert key.encode() not in stored and b"sk-test" not in stored
    old = json.dumps(entry, sort_keys=True, ensure_ascii=False).encode()
    assert len(stored) < len(old) / 2
    text = encode_entry(entry, compress=False)
    assert isinstance(text, str) and decode_entry(text, key) == entry
    assert decode_entry(stored[:-3], key) is None  # a truncated row is a miss, not an exception
    assert decode_answer(stored, key) == {"format": 2, "key": key, "response": entry["response"]}
    assert decode_answer(stored[:-3], key) is None
    assert decode_answer(old, key) == entry  # the previous layout: read whole


def test_a_hit_reads_the_answer_whatever_its_text_holds():
    """The response is found as the last member of the sorted JSON, even when the reply's text (or
    the prompt) spells the separator itself."""
    tricky = 'x,"r":{"text":"no"}} \\",\\"r\\":{ “3”'
    request = LLMRequest(model="openai/fake", messages=({"role": "user", "content": tricky},),
                         extra_params={"a": 0, "r": {"a": 1}})  # the request holds ,"r":{ too
    fields = key_fields(request)
    key = key_from_fields(fields)
    entry = make_entry(key, fields, {"text": tricky, "model": "m", "usage": {}, "cost": 0.0, "latency": 0.1,
                                     "timestamp": 2.0, "attempts": 2, "system_fingerprint": "fp_1"})
    assert decode_answer(encode_entry(entry), key)["response"] == entry["response"]
    assert decode_entry(encode_entry(entry), key) == entry


def test_a_cache_of_the_previous_layout_replays_and_compact_rewrites_it(fake_llm_server, tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    folder = tmp_path / "cache"
    requests = [_request(fake_llm_server.url, i) for i in range(6)]
    with LLMClient(LLMSettings(cache_dir=str(folder), cache_mode="record")) as client:
        answers = client.complete_many(requests)
    assert all(isinstance(v, bytes) for _, v in _rows(folder))  # written compact
    backend = open_backend(folder)
    entries = list(backend.iter_entries())
    backend.close()
    assert {e["format"] for _, e in entries} == {2}
    # the same answers in the previous layout (format 1: the whole entry as JSON text)
    old = tmp_path / "old"
    _write_previous_layout(old, [(k, {**e, "format": 1}) for k, e in entries])
    assert all(isinstance(v, str) for _, v in _rows(old))
    served = fake_llm_server.requests
    with LLMClient(LLMSettings(cache_dir=str(old), cache_mode="replay")) as client:
        replayed = client.complete_many(requests)
    assert [r.text for r in replayed] == [a.text for a in answers] and all(r.cached for r in replayed)
    assert fake_llm_server.requests == served  # replay sent nothing

    assert main(["cache", "stats", "--dir", str(old)]) == 0
    assert "6 entries in the previous layout" in capsys.readouterr().out
    assert main(["cache", "compact", "--dir", str(old)]) == 0
    out = capsys.readouterr().out
    assert "rewrote 6 entries" in out and "keys and answers unchanged" in out
    assert all(isinstance(v, bytes) for _, v in _rows(old))
    with LLMClient(LLMSettings(cache_dir=str(old), cache_mode="replay")) as client:
        assert [r.text for r in client.complete_many(requests)] == [a.text for a in answers]
    assert main(["cache", "compact", "--dir", str(old)]) == 0
    assert "nothing to rewrite" in capsys.readouterr().out
    assert main(["cache", "stats", "--dir", str(old)]) == 0
    assert "previous layout" not in capsys.readouterr().out


def test_salvage_and_export_read_both_layouts(fake_llm_server, tmp_path):
    from pytest_judgerel.llm.cache_admin import export_cache, salvage_cache

    folder = tmp_path / "cache"
    requests = [_request(fake_llm_server.url, i) for i in range(4)]
    with LLMClient(LLMSettings(cache_dir=str(folder), cache_mode="record")) as client:
        client.complete_many(requests[:2])
    backend = open_backend(folder)
    compact = dict(backend.iter_entries())
    backend.close()
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "other"), cache_mode="record")) as client:
        client.complete_many(requests[2:])
    backend = open_backend(tmp_path / "other")
    previous = [(k, {**e, "format": 1}) for k, e in backend.iter_entries()]
    backend.close()
    _write_previous_layout(folder, previous)  # one cache holding both layouts
    result = salvage_cache(folder)
    assert result.saved == 4 and result.unreadable == 0
    out = tmp_path / "all.jsonl"
    assert export_cache(folder, out) == 4
    keys = {json.loads(line)["key"] for line in out.read_text().splitlines()}
    assert keys == set(compact) | {k for k, _ in previous}


def test_an_entry_is_the_same_text_whichever_way_it_was_encoded():
    """The client's entry reuses the messages' JSON of its key; the text is the one a decoded (plain)
    entry encodes to, byte for byte, also when an extra parameter spells the model's own member."""
    from pytest_judgerel.llm.backend import decode_entry, encode_entry, make_entry

    for extra in ({}, {"x": {"a": 1, "model": "openai/j", "v": 1}}, {"model_hint": "openai/j"}):
        request = LLMRequest(model="openai/j", api_base="http://h:1/v1", extra_params=extra,
                             messages=[{"role": "system", "content": "rate “this”"}, {"role": "user", "content": "x"}])
        fields = key_fields(request)
        key = key_from_fields(fields)
        entry = make_entry(key, fields, {"text": "3", "model": "j", "usage": {"prompt_tokens": 2}, "cost": 0.0})
        text = encode_entry(entry, compress=False)
        plain = decode_entry(text, key)
        assert plain == entry and text == encode_entry(plain, compress=False)
        assert decode_entry(encode_entry(entry), key) == entry

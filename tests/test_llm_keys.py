"""Property tests of the cache key: what is and is not part of it."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.keys import cache_key, canonical_json, key_fields, key_from_fields
from pytest_judgerel.llm.request import LLMRequest

text = st.text(min_size=1, max_size=40)
numbers = st.floats(min_value=0.0, max_value=2.0, allow_nan=False, allow_infinity=False)
ints = st.integers(min_value=1, max_value=100_000)

base_requests = st.builds(
    LLMRequest,
    model=text.filter(lambda s: s.strip() != ""),
    messages=st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]),
                                             "content": st.text(max_size=60)}), min_size=1, max_size=4),
    temperature=st.one_of(st.none(), numbers),
    max_tokens=st.one_of(st.none(), ints),
    seed=st.one_of(st.none(), st.integers(min_value=0, max_value=2**31)),
    top_p=st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)),
    stop=st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3)),
    grammar=st.one_of(st.none(), st.text(min_size=1, max_size=30)),
    api_base=st.one_of(st.none(), st.sampled_from(["http://a:1/v1", "http://b:2/v1"])),
    namespace=st.text(max_size=10),
    sample_index=st.integers(min_value=0, max_value=50),
)


def _different(value, candidates):
    return next(c for c in candidates if c != value)


# each entry: a function producing a changed request that must get a different key
KEYED_CHANGES = {
    "model": lambda r: dataclasses.replace(r, model=r.model + "x"),
    "api_base": lambda r: dataclasses.replace(r, api_base=_different(r.api_base, [None, "http://c:3/v1", "http://d:4"])),
    "message_content": lambda r: dataclasses.replace(
        r, messages=r.messages[:-1] + ({**r.messages[-1], "content": r.messages[-1]["content"] + "."},)),
    "message_role": lambda r: dataclasses.replace(
        r, messages=r.messages[:-1] + ({**r.messages[-1],
                                        "role": _different(r.messages[-1]["role"], ["user", "assistant"])},)),
    "extra_message": lambda r: dataclasses.replace(r, messages=r.messages + ({"role": "user", "content": "more"},)),
    "temperature": lambda r: dataclasses.replace(r, temperature=_different(r.temperature, [0.25, 0.5])),
    "top_p": lambda r: dataclasses.replace(r, top_p=_different(r.top_p, [0.3, 0.9])),
    "max_tokens": lambda r: dataclasses.replace(r, max_tokens=_different(r.max_tokens, [7, 8])),
    "seed": lambda r: dataclasses.replace(r, seed=_different(r.seed, [None, 123457])),
    "stop": lambda r: dataclasses.replace(r, stop=_different(r.stop, [("\n\n\n",), None])),
    "response_format": lambda r: dataclasses.replace(r, response_format={"type": "json_object"}),
    "tools": lambda r: dataclasses.replace(r, tools=({"type": "function", "function": {"name": "f"}},)),
    "grammar": lambda r: dataclasses.replace(r, grammar=_different(r.grammar, ['root ::= "0"', None])),
    "extra_params": lambda r: dataclasses.replace(r, extra_params={"frequency_penalty": 0.5}),
    "namespace": lambda r: dataclasses.replace(r, namespace=r.namespace + "n"),
    "sample_index": lambda r: dataclasses.replace(r, sample_index=r.sample_index + 1),
}

UNKEYED_CHANGES = {
    "api_key": lambda r: dataclasses.replace(r, api_key="sk-other-secret"),
    "timeout": lambda r: dataclasses.replace(r, timeout=3.5),
    "metadata": lambda r: dataclasses.replace(r, metadata={"test": "tests/test_other.py::test_z", "x": 1}),
    "message_extra_field": lambda r: dataclasses.replace(
        r, messages=r.messages[:-1] + ({**r.messages[-1], "name": "bob"},)),
}


@pytest.mark.parametrize("change", sorted(KEYED_CHANGES))
@settings(max_examples=60, deadline=None)
@given(request=base_requests)
def test_every_keyed_field_changes_the_key(change, request):
    changed = KEYED_CHANGES[change](request)
    assert key_fields(changed) != key_fields(request)
    assert cache_key(changed) != cache_key(request)


@pytest.mark.parametrize("change", sorted(UNKEYED_CHANGES))
@settings(max_examples=40, deadline=None)
@given(request=base_requests)
def test_secrets_timeouts_and_metadata_do_not_change_the_key(change, request):
    assert cache_key(UNKEYED_CHANGES[change](request)) == cache_key(request)


@settings(max_examples=60, deadline=None)
@given(request=base_requests)
def test_key_recomputes_from_exported_fields(request):
    fields = key_fields(request)
    # the exported form goes through JSON text and back
    import json

    assert key_from_fields(json.loads(canonical_json(fields))) == cache_key(request)
    assert "api_key" not in json.loads(canonical_json(fields))  # no such field (a prompt may say "api_key")


def test_key_is_canonical_json_sha256():
    import hashlib

    request = LLMRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    text = canonical_json(key_fields(request))
    assert " " not in text.replace("hi", "")
    assert cache_key(request) == hashlib.sha256(text.encode()).hexdigest()
    # int and float temperature are the same sampling setting
    assert cache_key(dataclasses.replace(request, temperature=1)) == cache_key(
        dataclasses.replace(request, temperature=1.0))


@pytest.mark.parametrize("bad, cause", [
    ({"model": ""}, "model"),
    ({"messages": []}, "empty"),
    ({"messages": "hello"}, "sequence"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
    ({"messages": [{"role": "user", "content": 3}]}, "content"),
    ({"temperature": -1.0}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"sample_index": -1}, "sample_index"),
    ({"extra_params": {"api_key": "x"}}, "extra_params"),
    ({"grammar": 5}, "grammar"),
])
def test_bad_requests_raise_config_error_naming_the_field(bad, cause):
    fields = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **bad}
    with pytest.raises(ConfigError, match=cause):
        LLMRequest(**fields)


def test_api_key_not_in_repr():
    request = LLMRequest(model="m", messages=[{"role": "user", "content": "hi"}], api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(request)


# ------------------------------------------------------------------ the exact layout (a golden key)
FULL = LLMRequest(
    model="openai/gpt-x", messages=({"role": "system", "content": "Sé breve."}, {"role": "user", "content": "Rate 7"}),
    temperature=1, max_tokens=5, seed=3, top_p=0.5, stop=("\n",), response_format={"type": "json_object"},
    tools=({"type": "function", "function": {"name": "f"}},), grammar='root ::= "1"',
    extra_params={"presence_penalty": 0.1}, api_base="http://host:8/v1/", sample_index=2, namespace="ns",
    api_key="sk-secret", timeout=9.0, metadata={"test": "t"},
)


def test_key_fields_of_a_fully_specified_request():
    assert key_fields(FULL) == {
        "v": 1, "model": "openai/gpt-x", "api_base": "http://host:8/v1",  # trailing slash dropped
        "messages": [{"role": "system", "content": "Sé breve."}, {"role": "user", "content": "Rate 7"}],
        "temperature": 1.0, "top_p": 0.5, "max_tokens": 5, "seed": 3, "stop": ["\n"],
        "response_format": {"type": "json_object"}, "tools": [{"type": "function", "function": {"name": "f"}}],
        "grammar": 'root ::= "1"', "extra": {"presence_penalty": 0.1}, "namespace": "ns", "sample_index": 2,
    }
    assert type(key_fields(FULL)["temperature"]) is float
    # only the slashes at the end go: a base ending in another character keeps it
    assert key_fields(dataclasses.replace(FULL, api_base="http://h/X//"))["api_base"] == "http://h/X"
    assert key_fields(dataclasses.replace(FULL, api_base=""))["api_base"] is None


def test_canonical_json_is_sorted_compact_unescaped_and_refuses_nan():
    assert canonical_json({"b": 1, "a": [1.5, "é", None]}) == '{"a":[1.5,"é",null],"b":1}'
    with pytest.raises(ConfigError, match=r"^request field is not JSON-serialisable for the cache key: "
                                          r"Out of range float values are not JSON compliant"):
        canonical_json({"t": float("nan")})
    with pytest.raises(ConfigError, match=r"^request field is not JSON-serialisable for the cache key: .*set"):
        canonical_json({"t": {1, 2}})


def test_golden_cache_key_never_changes_without_a_key_version_bump():
    # sha256 of the canonical JSON (UTF-8) of key_fields(FULL), recorded once; a layout change that
    # does not bump KEY_VERSION would silently turn old cassettes into wrong hits or misses.
    import hashlib

    expected_text = ('{"api_base":"http://host:8/v1","extra":{"presence_penalty":0.1},"grammar":"root ::= \\"1\\"",'
                     '"max_tokens":5,"messages":[{"content":"Sé breve.","role":"system"},{"content":"Rate 7",'
                     '"role":"user"}],"model":"openai/gpt-x","namespace":"ns","response_format":{"type":'
                     '"json_object"},"sample_index":2,"seed":3,"stop":["\\n"],"temperature":1.0,"tools":[{"function":'
                     '{"name":"f"},"type":"function"}],"top_p":0.5,"v":1}')
    assert canonical_json(key_fields(FULL)) == expected_text
    assert cache_key(FULL) == hashlib.sha256(expected_text.encode("utf-8")).hexdigest()
    assert cache_key(FULL) == key_from_fields(key_fields(FULL))


@settings(max_examples=200, deadline=None)
@given(request=base_requests, extra=st.dictionaries(st.sampled_from(["model", "namespace", "a", "presence_penalty"]),
                                                    st.one_of(st.integers(0, 3), text,
                                                              st.dictionaries(st.sampled_from(["model", "namespace", "b"]),
                                                                              st.one_of(st.integers(0, 3), text))),
                                                    max_size=3))
def test_the_key_put_together_around_the_messages_is_the_canonical_one(request, extra):
    """key_from_fields encodes the messages apart and joins the texts: the digest is the sha256 of the
    canonical JSON of the whole dict, even when a nested value spells the model's own marker."""
    import hashlib

    nested = {k: v for k, v in extra.items() if k not in ("model", "namespace")}
    nested["inner"] = {"model": request.model, "namespace": request.namespace, **extra}
    request = dataclasses.replace(request, extra_params=nested)
    fields = key_fields(request)
    assert key_from_fields(fields) == hashlib.sha256(canonical_json(dict(fields)).encode()).hexdigest()
    if fields.messages_json is not None:
        assert fields.messages_json == canonical_json(fields["messages"])

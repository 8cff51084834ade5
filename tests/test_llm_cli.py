"""`python -m pytest_judgerel cache stats|export|import|prune`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_judgerel.__main__ import main
from pytest_judgerel.llm.disk_backend import DiskCacheBackend
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.llm.scripted import register_scripted

from llm_fixtures import make_client, unique_model


@pytest.fixture
def filled_cache(tmp_path):
    """A cache with 4 entries in namespace 'a' and 2 in namespace 'b', plus recorded hits."""
    model = unique_model()
    register_scripted(model, lambda messages, **p: "answer to " + messages[-1]["content"])
    requests = [LLMRequest(model=model, messages=[{"role": "user", "content": f"q{i}"}], namespace="a",
                           sample_index=i % 2) for i in range(4)]
    requests += [LLMRequest(model=model, messages=[{"role": "user", "content": f"z{i}"}], namespace="b")
                 for i in range(2)]
    directory = tmp_path / "cache"
    with make_client(directory) as client:
        client.complete_many(requests)
        client.complete_many(requests[:3])  # 3 hits
    return directory, requests, model


def test_stats(filled_cache, capsys):
    directory, _, model = filled_cache
    assert main(["cache", "stats", "--dir", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "entries: 6" in out
    assert "hit rate: 33.3% (3 hits, 6 misses)" in out
    assert main(["cache", "stats", "--dir", str(directory), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["entries"] == 6 and data["namespaces"] == {"a": 4, "b": 2} and data["models"] == {model: 6}
    assert data["size_bytes"] > 0


def test_export_is_sorted_reviewable_and_importable(filled_cache, tmp_path, capsys):
    directory, requests, model = filled_cache
    out = tmp_path / "cassette.jsonl"
    assert main(["cache", "export", "--dir", str(directory), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 6
    records = [json.loads(line) for line in lines]
    assert [r["request"]["namespace"] for r in records] == ["a"] * 4 + ["b"] * 2
    assert all(set(r) == {"key", "request", "response"} for r in records)
    assert records[0]["response"]["text"].startswith("answer to ")
    # exporting twice gives the same bytes (committable)
    again = tmp_path / "again.jsonl"
    main(["cache", "export", "--dir", str(directory), "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()

    only_b = tmp_path / "b.jsonl"
    main(["cache", "export", "--dir", str(directory), "--out", str(only_b), "--namespace", "b"])
    assert len(only_b.read_text().splitlines()) == 2

    fresh = tmp_path / "fresh"
    assert main(["cache", "import", str(out), "--dir", str(fresh)]) == 0
    with make_client(fresh, cache_mode="replay") as client:
        replayed = client.complete_many(requests)
    assert [r.text for r in replayed] == [f"answer to {r.messages[-1]['content']}" for r in requests]


def test_import_rejects_an_edited_line(filled_cache, tmp_path, capsys):
    directory, _, _ = filled_cache
    out = tmp_path / "cassette.jsonl"
    main(["cache", "export", "--dir", str(directory), "--out", str(out)])
    lines = out.read_text().splitlines()
    record = json.loads(lines[1])
    record["request"]["temperature"] = 0.9  # the answer would now be filed under the wrong request
    lines[1] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["cache", "import", str(out), "--dir", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "cassette.jsonl:2" in err and "does not match" in err


def test_prune_by_namespace_and_age(filled_cache, capsys):
    directory, _, _ = filled_cache
    assert not list((directory / "locks").glob("*.lock"))  # striped locks: no file per key
    assert main(["cache", "prune", "--dir", str(directory), "--namespace", "b"]) == 0
    assert "pruned 2" in capsys.readouterr().out
    assert not list((directory / "locks").glob("*.lock"))
    backend = DiskCacheBackend(directory)
    entries = list(backend.iter_entries())
    assert len(entries) == 4
    old_key, old_entry = entries[0]
    old_entry["response"]["timestamp"] -= 40 * 86400
    backend.set(old_key, old_entry)
    backend.close()
    assert main(["cache", "prune", "--dir", str(directory), "--older-than", "30"]) == 0
    assert "pruned 1" in capsys.readouterr().out
    backend = DiskCacheBackend(directory)
    assert old_key not in {k for k, _ in backend.iter_entries()} and len(list(backend.iter_entries())) == 3
    backend.close()


def test_prune_needs_a_criterion_and_missing_dir_is_an_error(tmp_path, capsys):
    assert main(["cache", "prune", "--dir", str(tmp_path)]) == 2
    assert "--older-than" in capsys.readouterr().err
    assert main(["cache", "stats", "--dir", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_module_entry_point_runs(filled_cache):
    directory, _, _ = filled_cache
    done = subprocess.run([sys.executable, "-m", "pytest_judgerel", "cache", "stats", "--dir", str(directory)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "entries: 6" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "pytest_judgerel", "nonsense"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr

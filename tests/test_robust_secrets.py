"""No API key in anything a pytest-judgerel run writes (cache, JSON/HTML reports, JUnit XML,
captured logs and terminal output), with keys in the environment and in a Judge."""

from __future__ import annotations


import pytest

from robust import projects


def test_scanner_finds_a_planted_secret_in_binary_files(tmp_path):
    (tmp_path / "a.db").write_bytes(b"\x00SQLite\x00" + projects.ENV_SECRET.encode() + b"\xff")
    (tmp_path / "b.txt").write_bytes(projects.OPTION_SECRET.encode("utf-16-le"))
    (tmp_path / "c.txt").write_text("clean")
    files, nbytes, leaks = projects.scan_for_secrets(tmp_path, [projects.ENV_SECRET, projects.OPTION_SECRET])
    assert files == 3 and nbytes > 0
    assert sorted(leaks) == [("a.db", projects.ENV_SECRET), ("b.txt", projects.OPTION_SECRET)]


@pytest.mark.parametrize("tb, backend", [
    ("short", "http"),
    ("auto", "http"),
    ("long", "http"),
    ("long", "litellm"),  # litellm's frames hold api_key=...: the longest tracebacks through it
])
def test_no_secret_in_any_written_file(tmp_path, tb, backend, monkeypatch):
    monkeypatch.setenv("JUDGEREL_BACKEND", backend)  # the pytest subprocess inherits it
    res = projects.secrets_run(str(tmp_path / "project"), tb=tb)
    # the run really exercised passing, failing-threshold and failing-call tests
    assert res.outcomes["passed"] >= 1 and res.outcomes["failed"] == 3, res.output_tail
    written = {p.name for p in (tmp_path / "project").rglob("*") if p.is_file()}
    assert {"junit.xml", "report.json", "report.html", "stdout.txt"} <= written
    assert any(n.endswith(".db") for n in written), "the diskcache SQLite file was scanned too"
    assert not res.leaks, f"secrets found in {res.leaks}"

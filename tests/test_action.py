"""The composite Action (action.yml): its comment step, run twice as GitHub would run it (a fake
``GITHUB_*`` environment, the step's own script) against a loopback stand-in for the comments
API, creates one comment and then edits it in place."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


class CommentsAPI(ThreadingHTTPServer):
    """The issue-comments endpoints of the GitHub REST API, recording every call."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.calls: list[tuple[str, str, dict]] = []
        self.comments: list[dict] = [{"id": 7, "body": "an unrelated comment"}]


class _Handler(BaseHTTPRequestHandler):
    server: CommentsAPI

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, code: int, body: object) -> None:
        raw = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _body(self) -> dict:
        assert self.headers["Authorization"] == "Bearer fake-token"
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")

    def do_GET(self) -> None:  # noqa: N802
        self.server.calls.append(("GET", self.path, self._body()))
        assert self.path.startswith("/repos/acme/judge/issues/12/comments")
        page = int(parse_qs(urlsplit(self.path).query)["page"][0])
        self._answer(200, self.server.comments[(page - 1) * 100:page * 100])

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.calls.append(("POST", self.path, body))
        self.server.comments.append({"id": 99, "body": body["body"]})
        self._answer(201, {"id": 99})

    def do_PATCH(self) -> None:  # noqa: N802
        body = self._body()
        self.server.calls.append(("PATCH", self.path, body))
        cid = int(self.path.rsplit("/", 1)[1])
        next(c for c in self.server.comments if c["id"] == cid)["body"] = body["body"]
        self._answer(200, {"id": cid})


def _python_on_path(tmp_path: Path) -> Path:
    """A ``bin`` folder whose ``python`` is this interpreter (its virtual environment included, so
    pytest finds the plugin's entry point), as ``actions/setup-python`` puts one on the PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return bindir


def _step(name: str) -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    return next(s for s in action["runs"]["steps"] if s["name"] == name)


def _expand(value: str, context: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: context[m.group(1)], value)


def test_the_comment_step_creates_one_comment_then_edits_it(tmp_path: Path) -> None:
    report = ROOT / "tests" / "data" / "markdown" / "report_3.json"
    (tmp_path / "judgerel-report.json").write_text(report.read_text())
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 12}}))
    step = _step("Comment on the pull request")
    assert "inputs.comment == 'true'" in step["if"] and "github.event.pull_request" in step["if"]
    context = {"inputs.report-name": "judgerel-report", "inputs.github-token": "fake-token"}
    api = CommentsAPI()
    threading.Thread(target=api.serve_forever, daemon=True).start()
    bindir = _python_on_path(tmp_path)
    try:
        env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
               "PYTHONPATH": str(ROOT), "GITHUB_API_URL": f"http://127.0.0.1:{api.server_address[1]}",
               "GITHUB_REPOSITORY": "acme/judge", "GITHUB_EVENT_PATH": str(event),
               "GITHUB_WORKFLOW": "judge gate", "GITHUB_EVENT_NAME": "pull_request",
               **{k: _expand(str(v), context) for k, v in step["env"].items()}}
        outs = [subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=120) for _ in range(2)]
    finally:
        api.shutdown()
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert "created comment 99" in outs[0].stdout and "updated comment 99" in outs[1].stdout
    writes = [(m, p) for m, p, _ in api.calls if m != "GET"]
    assert writes == [("POST", "/repos/acme/judge/issues/12/comments"),
                      ("PATCH", "/repos/acme/judge/issues/comments/99")]
    assert len(api.comments) == 2 and api.comments[0]["body"] == "an unrelated comment"
    body = api.comments[1]["body"]
    assert body.startswith("<!-- judgerel-comment: judge gate -->") and "| test | statistic" in body
    assert len(body) <= 65_536


def test_the_action_runs_the_plugin_with_the_cassette_replayed() -> None:
    run = _step("Run the judge tests (cassette replayed)")
    assert run["env"]["JUDGEREL_CACHE_MODE"] == "replay"
    assert "python -m pytest" in run["run"] and "--judgerel-json" in run["run"] and "--judgerel-html" in run["run"]
    upload = _step("Upload the reports")
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"


def test_the_run_step_writes_the_reports_the_summary_and_the_exit_code(tmp_path: Path) -> None:
    """The pytest step as GitHub runs it: the reports for the upload step, the step summary written
    by the plugin itself, pytest's exit status in GITHUB_OUTPUT for the last step."""
    (tmp_path / "test_d.py").write_text(
        "import numpy as np\nfrom pytest_judgerel import assert_icc_above\n\n"
        "def test_a():\n    assert_icc_above(np.array([[1, 1.1], [2, 2.2], [3, 2.9], [4, 4.1]]), 0.999)\n")
    step = _step("Run the judge tests (cassette replayed)")
    context = {"inputs.pytest-args": "test_d.py -p no:cacheprovider -p no:xdist", "inputs.report-name": "jr",
               "inputs.cache-dir": str(tmp_path / "cache")}
    bindir = _python_on_path(tmp_path)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           **{k: _expand(str(v), context) for k, v in step["env"].items()}}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr  # the step itself never fails: the last step does
    assert output.read_text().strip() == "exit-code=1"  # ICC below 0.999: the gate failed
    assert (tmp_path / "jr.json").exists() and (tmp_path / "jr.html").exists()
    assert "## judgerel: ❌ failed" in summary.read_text(encoding="utf-8")
    last = _step("Fail when the gate failed")
    code = subprocess.run(["bash", "-e", "-c", last["run"]], env={**env, "JR_EXIT": "1"}, timeout=30).returncode
    assert code == 1


def test_comment_pages_through_the_comments_and_skips_outside_a_pull_request(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture) -> None:
    from pytest_judgerel.__main__ import main
    from pytest_judgerel.report.comment import GitHub, comment_marker, post_or_update

    api = CommentsAPI()
    marker = comment_marker("judge gate")
    api.comments = [{"id": 1000 + i, "body": "other"} for i in range(100)]
    threading.Thread(target=api.serve_forever, daemon=True).start()
    gh = GitHub(f"http://127.0.0.1:{api.server_address[1]}", "acme/judge", "fake-token")
    try:
        assert post_or_update(gh, 12, marker + "\nfirst", marker) == ("created", 99)
        # the marked comment is the 101st: found on the second page and edited
        assert post_or_update(gh, 12, marker + "\nagain", marker) == ("updated", 99)
        assert any("page=2" in p for m, p, _ in api.calls if m == "GET")
        assert api.comments[100]["body"] == marker + "\nagain" and len(api.comments) == 101
    finally:
        api.shutdown()
    report = ROOT / "tests" / "data" / "markdown" / "report_3.json"
    for var in ("GITHUB_EVENT_PATH", "GITHUB_TOKEN"):
        os.environ.pop(var, None)
    assert main(["report", "comment", str(report)]) == 0
    assert "no comment posted" in capsys.readouterr().out

"""Generated pytest projects run in a subprocess: 8 xdist workers over one cache with overlapping
keys, and every file the plugin writes scanned for the API keys in use."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ._common import subprocess_env
from .judging import JUDGE_MODEL, NUMBER_TEMPLATE

# =============================================================================== pytest runs in a subprocess
ROBUST_TEMPLATE_LITERAL = repr(NUMBER_TEMPLATE)


def _run_pytest(project: Path, args: Sequence[str], env_extra: dict[str, str] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess:
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    env = subprocess_env()
    env.update(env_extra or {})
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=project, capture_output=True, text=True,
                          env=env, timeout=timeout)


_XDIST_TESTS = '''
import json, os, pytest

TEMPLATE = {template}
N_TESTS, WIDTH, STRIDE, REPEATS = {n_tests}, {width}, {stride}, {repeats}

def items_of(k):
    return [{{"id": f"it{{i}}", "sentence1": f"Sentence number {{i}} about topic {{i % 7}}.",
              "sentence2": f"Another sentence {{i * 3 % 11}} on topic {{i % 5}}."}}
            for i in range(k * STRIDE, k * STRIDE + WIDTH)]

@pytest.mark.parametrize("k", range(N_TESTS))
@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(REPEATS)
def test_overlapping(judge, k):
    r = judge.with_(api_key="sk-xdist").rate(items_of(k))
    assert not r.parse_failures
    out = {{f"{{iid}}/{{rid}}": float(r.values[i, j]) for i, iid in enumerate(r.item_ids)
            for j, rid in enumerate(r.rater_ids)}}
    with open(os.path.join(os.environ["ROBUST_OUT"], f"t{{k}}.json"), "w") as fh:
        json.dump(out, fh)
'''


@dataclass
class XdistResult:
    """``workers`` xdist workers rating overlapping items through one cache and one server."""

    workers: int
    tests: int
    passed: int
    distinct_keys: int
    upstream_requests: int
    cache_entries: int
    corrupt_entries: int  # unreadable, key != hash(request), or text not a score on the scale
    inconsistent_cells: int  # the same (item, repeat) rated differently by two tests
    returncode: int
    output_tail: str = ""

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and self.passed == self.tests and self.corrupt_entries == 0
                and self.inconsistent_cells == 0 and self.upstream_requests == self.distinct_keys
                and self.cache_entries == self.distinct_keys)


def xdist_shared_cache_run(workers: int = 8, n_tests: int = 16, width: int = 12, stride: int = 4,
                           repeats: int = 2, latency: float = 0.05, workdir: str | None = None) -> XdistResult:
    """Run a generated suite with ``-n workers``; test k rates items [k*stride, k*stride+width)."""
    from pytest_judgerel.testing.fake_server import FakeLLMServer
    from pytest_judgerel.llm.cache import open_backend
    from pytest_judgerel.llm.keys import key_from_fields
    from pytest_judgerel.judging.parsing import parse_score

    project = Path(workdir or tempfile.mkdtemp(prefix="judgerel-xdist-"))
    project.mkdir(parents=True, exist_ok=True)
    out_dir = project / "out"
    out_dir.mkdir(exist_ok=True)
    (project / "test_overlap.py").write_text(_XDIST_TESTS.format(
        template=ROBUST_TEMPLATE_LITERAL, n_tests=n_tests, width=width, stride=stride, repeats=repeats),
        encoding="utf-8")
    distinct_items = {i for k in range(n_tests) for i in range(k * stride, k * stride + width)}
    with FakeLLMServer(latency=latency) as srv:
        proc = _run_pytest(project, ["-n", str(workers), "-q", f"--judge-model={JUDGE_MODEL}",
                                     f"--judge-api-base={srv.url}", f"--judgerel-cache-dir={project / 'cache'}",
                                     "--judgerel-progress=false"],
                           {"ROBUST_OUT": str(out_dir)})
        upstream = srv.requests
    corrupt, entries = 0, 0
    backend = open_backend(project / "cache")
    try:
        for key, entry in backend.iter_entries():
            entries += 1
            try:
                ok = key == entry["key"] == key_from_fields(entry["request"])
                parse_score(entry["response"]["text"], "0-10")
            except Exception:
                ok = False
            corrupt += not ok
    finally:
        backend.close()
    seen: dict[str, float] = {}
    inconsistent = 0
    for f in sorted(out_dir.glob("t*.json")):
        for cell, v in json.loads(f.read_text()).items():
            if cell in seen and seen[cell] != v:
                inconsistent += 1
            seen.setdefault(cell, v)
    passed = sum(1 for _ in out_dir.glob("t*.json")) if proc.returncode == 0 else 0
    return XdistResult(workers=workers, tests=n_tests, passed=passed, distinct_keys=len(distinct_items) * repeats,
                       upstream_requests=upstream, cache_entries=entries, corrupt_entries=corrupt,
                       inconsistent_cells=inconsistent, returncode=proc.returncode,
                       output_tail=(proc.stdout + proc.stderr)[-3000:])


# =============================================================================== secrets
ENV_SECRET = "sk-secret-env-7f3a9c1e5b2d4f6a8c0e"
OPTION_SECRET = "sk-secret-opt-2b4d6f8a0c1e3a5b7d9f"

_SECRETS_TESTS = '''
import logging, os, pytest
from pytest_judgerel import assert_agreement, assert_icc_above

TEMPLATE = {template}
ITEMS = [{{"id": f"s{{i}}", "sentence1": f"Secret test sentence {{i}}.", "sentence2": f"Other {{i % 3}}."}}
         for i in range(10)]

@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_env_key_passes(judge):
    r = judge.rate(ITEMS)
    print("rated", r.shape)
    logging.getLogger("user").warning("rated %s", r.shape)
    assert_icc_above(r, -1.0)

@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_option_key_fails_threshold(judge):
    judge = judge.with_(api_key=os.environ["ROBUST_OPTION_KEY"])
    r = judge.rate(ITEMS[:6])
    humans = 10 - r.values  # a human panel that disagrees: the assertion fails and reports
    assert_agreement(r, humans, min_icc=0.9, scale="0-10")

@pytest.mark.judge(template=TEMPLATE, api_base="{broken_url}")
@pytest.mark.scale("0-10")
@pytest.mark.repeats(1)
def test_env_key_call_error(judge):
    judge.rate(ITEMS[:2])

@pytest.mark.judge(template=TEMPLATE, api_base="{broken_url}")
@pytest.mark.scale("0-10")
@pytest.mark.repeats(1)
def test_option_key_call_error(judge):
    judge = judge.with_(api_key=os.environ["ROBUST_OPTION_KEY"])
    judge.rate(ITEMS[:2])
'''


@dataclass
class SecretsResult:
    """Every file written by a pytest run with API keys in the environment and in a Judge."""

    files_scanned: int
    bytes_scanned: int
    leaks: list[tuple[str, str]]  # (file, which secret)
    outcomes: dict[str, int]
    returncode: int
    output_tail: str = ""

    @property
    def ok(self) -> bool:
        return not self.leaks and self.files_scanned > 0


def scan_for_secrets(root: Path, secrets: Sequence[str]) -> tuple[int, int, list[tuple[str, str]]]:
    """Grep every file under ``root`` (binary too, e.g. SQLite files) for each secret,
    also in UTF-16 and base64 spellings."""
    import base64

    needles = []
    for s in secrets:
        needles += [(s, s.encode()), (s, s.encode("utf-16-le")), (s, base64.b64encode(s.encode())[:24])]
    files = nbytes = 0
    leaks = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        files += 1
        nbytes += len(data)
        for name, needle in needles:
            if needle in data:
                leaks.append((str(p.relative_to(root)), name))
    return files, nbytes, leaks


def secrets_run(workdir: str | None = None, showlocals: bool = False, tb: str = "auto") -> SecretsResult:
    """A pytest run (passing, failing and erroring judge tests; -l, --tb=long, DEBUG logs, JUnit
    with logs, JSON and HTML reports, history, cache) with ``OPENAI_API_KEY`` set and a Judge
    ``api_key``; its stdout/stderr are saved into the project and every file is grepped."""
    from pytest_judgerel.testing.fake_server import FakeLLMServer, FaultPlan

    project = Path(workdir or tempfile.mkdtemp(prefix="judgerel-secrets-"))
    project.mkdir(parents=True, exist_ok=True)
    with FakeLLMServer(latency=0.005) as srv, \
            FakeLLMServer(latency=0.0, faults=FaultPlan(rate=1.0, kinds=("500",))) as broken:
        (project / "test_secrets.py").write_text(_SECRETS_TESTS.format(
            template=ROBUST_TEMPLATE_LITERAL, broken_url=broken.url), encoding="utf-8")
        proc = _run_pytest(project, [
            *(["-l"] if showlocals else []), f"--tb={tb}", "-rA", "-v", "--log-level=DEBUG", "-o", "junit_logging=all",
            "-o", "log_cli=true", "--log-cli-level=DEBUG",
            "--junitxml=junit.xml", "--judgerel-json=report.json", "--judgerel-html=report.html",
            "--judgerel-history=history", f"--judge-model={JUDGE_MODEL}", f"--judge-api-base={srv.url}",
            f"--judgerel-cache-dir={project / 'cache'}", "--judgerel-max-attempts=2",
        ], {"OPENAI_API_KEY": ENV_SECRET, "ROBUST_OPTION_KEY": OPTION_SECRET, "LITELLM_LOG": "DEBUG"})
    (project / "stdout.txt").write_text(proc.stdout, encoding="utf-8")
    (project / "stderr.txt").write_text(proc.stderr, encoding="utf-8")
    files, nbytes, leaks = scan_for_secrets(project, [ENV_SECRET, OPTION_SECRET])
    outcomes = {}
    for word in ("passed", "failed", "error"):
        import re

        m = re.search(rf"(\d+) {word}", proc.stdout.splitlines()[-1] if proc.stdout.strip() else "")
        outcomes[word] = int(m.group(1)) if m else 0
    return SecretsResult(files_scanned=files, bytes_scanned=nbytes, leaks=leaks, outcomes=outcomes,
                         returncode=proc.returncode, output_tail=(proc.stdout + proc.stderr)[-3000:])

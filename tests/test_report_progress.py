"""Judge-call progress: counts, throttling, and output that leaves pytest's lines and capture intact."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_judgerel.plugin.progress import JudgeProgress


class FakeWriter:
    def __init__(self, width: int = 100) -> None:
        self.fullwidth = width
        self.current = ""

    @property
    def width_of_current_line(self) -> int:
        return len(self.current)


class FakeTerminal:
    """Keeps the raw byte stream so a tiny terminal emulator can replay it."""

    def __init__(self, prefix: str = "tests/test_x.py ..", width: int = 100) -> None:
        self._tw = FakeWriter(width)
        self._tw.current = prefix
        self.raw = prefix
        self.lines: list[str] = []

    def write_raw(self, text: str, flush: bool = False) -> None:
        self.raw += text

    def write_line(self, text: str) -> None:
        self.raw += "\n" + text + "\n"
        self.lines.append(text)


def screen(raw: str) -> list[str]:
    """Replay \\r, \\b and \\n like a terminal; return the visible lines (right-stripped)."""
    raw = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    lines, cur, pos = [], [], 0
    for ch in raw:
        if ch == "\n":
            lines.append("".join(cur).rstrip())
            cur, pos = [], 0
        elif ch == "\r":
            pos = 0
        elif ch == "\b":
            pos = max(0, pos - 1)
        else:
            if pos < len(cur):
                cur[pos] = ch
            else:
                cur.append(ch)
            pos += 1
    lines.append("".join(cur).rstrip())
    return lines


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_counts_and_status_text() -> None:
    p = JudgeProgress(FakeTerminal(), tty=False, min_interval=1e9)
    p.set_total(4)
    for cached in (True, False, True):
        p.on_call_done(cached)
    assert p.status_text() == "judgerel: 3/4 calls, hit rate 67% (session 3 calls)"
    p.set_total(2)
    p.on_call_done(False)
    assert (p.batch_done, p.batch_total, p.session_done, p.session_hits) == (1, 2, 4, 2)
    p.add_total(3)
    assert p.status_text().startswith("judgerel: 1/5 calls")
    with pytest.raises(ValueError, match="call count >= 0"):
        p.set_total(-1)
    with pytest.raises(ValueError, match="min_interval"):
        JudgeProgress(FakeTerminal(), min_interval=-1)


def test_tty_status_is_appended_then_erased_exactly() -> None:
    term = FakeTerminal("tests/test_x.py ..")
    clock = Clock()
    p = JudgeProgress(term, tty=True, clock=clock)
    p.set_total(10)
    for i in range(10):
        clock.t += 0.05
        p.on_call_done(i % 2 == 0)
    shown = screen(term.raw)[-1]
    assert shown.startswith("tests/test_x.py ..  [judgerel: 10/10 calls, hit rate 50%")
    p.clear()
    assert screen(term.raw) == ["tests/test_x.py .."]
    # refreshed at most every 0.2 s plus the final call: not once per call
    assert 2 <= term.raw.count("[judgerel:") <= 5
    p.clear()  # idempotent
    assert screen(term.raw) == ["tests/test_x.py .."]


def test_tty_status_never_wraps_the_line() -> None:
    term = FakeTerminal("x" * 60, width=80)
    p = JudgeProgress(term, tty=True)
    p.set_total(3)
    p.on_call_done(False)
    assert "[judgerel" not in term.raw  # 80 - 60 - 1 - 7 columns left: too narrow, nothing shown
    term2 = FakeTerminal("x" * 30, width=80)
    p2 = JudgeProgress(term2, tty=True)
    p2.set_total(3)
    p2.on_call_done(False)
    assert len(screen(term2.raw)[-1]) <= 80 - 1 - len(" [100%]")


def test_non_tty_writes_at_most_one_line_per_interval() -> None:
    term = FakeTerminal()
    clock = Clock()
    p = JudgeProgress(term, tty=False, min_interval=10.0, clock=clock)
    p.set_total(100)
    for _ in range(100):
        clock.t += 0.5  # 50 s in total
        p.on_call_done(False)
    assert len(term.lines) == 5  # at 10, 20, 30, 40 and 50 s
    assert term.lines[0].startswith("judgerel: 20/100 calls")
    quick = FakeTerminal()
    q = JudgeProgress(quick, tty=False, min_interval=10.0, clock=Clock())
    q.set_total(5)
    for _ in range(5):
        q.on_call_done(True)
    assert quick.lines == []  # a batch shorter than the interval prints nothing


CONFTEST = '''
import pytest
from pytest_judgerel.plugin.progress import JudgeProgress

PROGRESS = []

@pytest.hookimpl(trylast=True)  # after the terminal reporter exists (plugin.py configures trylast too)
def pytest_configure(config):
    PROGRESS.append(JudgeProgress.from_config(config, min_interval=0.0))

@pytest.fixture
def progress():
    return PROGRESS[0]
'''

TESTS = '''
def test_long(progress):
    print("inside-test-output")
    if progress is not None:
        progress.set_total(5)
        for i in range(5):
            progress.on_call_done(cached=i % 2 == 0)
    assert False, "fail to show the captured output"

def test_after():
    pass
'''


def test_non_tty_progress_lines_do_not_enter_capture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_p=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 1
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "test_p.py ",
        "judgerel: 1/5 calls, hit rate 100% (session 1 calls)",
        "test_p.py ",
        "judgerel: 2/5 calls, hit rate 50% (session 2 calls)",
        "test_p.py ",
        "judgerel: 3/5 calls, hit rate 67% (session 3 calls)",
        "test_p.py ",
        "judgerel: 4/5 calls, hit rate 50% (session 4 calls)",
        "test_p.py ",
        "judgerel: 5/5 calls, hit rate 60% (session 5 calls)",
        "test_p.py F. *[[]100%[]]",  # the result letters continue after the re-printed prefix
        "*Captured stdout call*",
        "inside-test-output",
        "*1 failed, 1 passed*",
    ])
    captured = out.split("Captured stdout call", 1)[1].split("short test summary", 1)[0]
    assert "judgerel:" not in captured


def test_xdist_workers_get_no_progress(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_p=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(failed=1, passed=1)
    assert "judgerel: 1/5" not in result.stdout.str()


def _run_in_pty(args: list[str], cwd: Path) -> str:
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = {**os.environ, "PY_COLORS": "0", "COLUMNS": "120"}
    proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_tty_progress_leaves_the_result_line_intact(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_p=TESTS)
    raw = _run_in_pty([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_p.py"], pytester.path)
    assert "[judgerel: " in raw  # the status was shown on the terminal
    lines = screen(raw)
    result_line = next(line for line in lines if line.startswith("test_p.py"))
    assert re.fullmatch(r"test_p\.py F\. +\[100%\]", result_line), result_line
    assert not any("[judgerel: " in line for line in lines), [line for line in lines if "[judgerel" in line]
    assert any("1 failed, 1 passed" in line for line in lines)


def test_from_config_returns_one_registered_instance(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
import pytest
from pytest_judgerel.plugin.progress import JudgeProgress

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    a = JudgeProgress.from_config(config)
    b = JudgeProgress.from_config(config)
    assert a is b and config.pluginmanager.get_plugin("judgerel-progress") is a
    print("SAME", a is b)
""")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["SAME True"])

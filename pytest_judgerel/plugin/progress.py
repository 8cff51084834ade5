"""Visible progress of judge calls that never corrupts pytest's output or capture.

The LLM client (or a judge) calls :meth:`JudgeProgress.set_total` when a batch
starts and :meth:`JudgeProgress.on_call_done` after each call (from any thread).

* On a TTY the status is appended to the current terminal line (after pytest's
  dots or the ``-v`` test name) and erased with backspaces before pytest writes
  again (the object is a pytest plugin whose ``tryfirst`` log hooks clear it), so
  the finished line is exactly what pytest would have printed.  Refreshed at most
  every 0.2 s; not shown when the line has no room.
* Otherwise (CI logs) one full line at most every ``min_interval`` seconds
  (default 30, env ``JUDGEREL_PROGRESS_INTERVAL``), only for batches running
  longer than that, followed by pytest's current line prefix (file name, or the
  test name with ``-v``) so pytest's next letter or word lands after it.

Writes go through pytest's terminal reporter with capture suspended
(``CaptureManager.global_and_fixture_disabled``, as live logging does), so the
status never lands in a test's captured output.  Under xdist only the
controller has a terminal; workers get ``None`` from :meth:`from_config`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Callable

import pytest

TTY_REFRESH = 0.2
DEFAULT_INTERVAL = 30.0
_PROGRESS_COLUMN = len(" [100%]")


class JudgeProgress:
    """Counts judge calls (done / expected, cache hits) and shows them on the terminal."""

    def __init__(self, terminal: Any, *, capture: Any = None, tty: bool = False,
                 min_interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        if min_interval < 0:
            raise ValueError(f"min_interval must be >= 0, got {min_interval!r}")
        self.terminal = terminal
        self.capture = capture
        self.tty = bool(tty)
        self.min_interval = float(min_interval)
        self.clock = clock
        self._lock = threading.RLock()
        self.batch_total = 0
        self.batch_done = 0
        self.batch_hits = 0
        self.session_done = 0
        self.session_hits = 0
        self._batch_started = clock()
        self._last_render = float("-inf")
        self._shown = 0  # characters of the status currently on the TTY line
        self.lines_written = 0

    # ------------------------------------------------------------ construction
    @classmethod
    def from_config(cls, config: pytest.Config, *, min_interval: float | None = None) -> "JudgeProgress | None":
        """A registered progress display for this process, or ``None`` (xdist worker, ``-qq``, no terminal)."""
        if hasattr(config, "workerinput"):
            return None
        existing = config.pluginmanager.get_plugin("judgerel-progress")
        if existing is not None:
            if min_interval is not None:
                existing.min_interval = min_interval
            return existing
        tr = config.pluginmanager.getplugin("terminalreporter")
        if tr is None or (getattr(config.option, "verbose", 0) or 0) < -1:
            return None
        if min_interval is None:
            try:
                min_interval = float(os.environ.get("JUDGEREL_PROGRESS_INTERVAL", DEFAULT_INTERVAL))
            except ValueError:
                min_interval = DEFAULT_INTERVAL
        tty = bool(tr.isatty()) if callable(getattr(tr, "isatty", None)) else bool(getattr(tr, "isatty", False))
        obj = cls(tr, capture=config.pluginmanager.getplugin("capturemanager"), tty=tty,
                  min_interval=min_interval)
        config.pluginmanager.register(obj, "judgerel-progress")
        return obj

    # ------------------------------------------------------------ public API
    def set_total(self, n: int) -> None:
        """A batch of ``n`` calls starts now (the display counts this batch's calls out of ``n``)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"set_total needs a call count >= 0, got {n!r}")
        with self._lock:
            self.batch_total, self.batch_done, self.batch_hits = n, 0, 0
            self._batch_started = self.clock()

    def add_total(self, n: int) -> None:
        """``n`` more calls join the running batch."""
        with self._lock:
            self.batch_total += int(n)

    def on_call_done(self, cached: bool) -> None:
        """One call finished (``cached``: answered from the cache)."""
        with self._lock:
            self.batch_done += 1
            self.session_done += 1
            if cached:
                self.batch_hits += 1
                self.session_hits += 1
            now = self.clock()
            complete = self.batch_total and self.batch_done >= self.batch_total
            if self.tty:
                if complete or now - self._last_render >= TTY_REFRESH:
                    self._render_tty()
                    self._last_render = now
            elif (now - self._batch_started >= self.min_interval and now - self._last_render >= self.min_interval):
                self._write_line(self.status_text())
                self._last_render = now

    def status_text(self) -> str:
        total = f"/{self.batch_total}" if self.batch_total else ""
        rate = f"{self.session_hits / self.session_done:.0%}" if self.session_done else "-"
        return f"judgerel: {self.batch_done}{total} calls, hit rate {rate} (session {self.session_done} calls)"

    def clear(self) -> None:
        """Erase the TTY status (called before pytest writes)."""
        with self._lock:
            if self._shown:
                n, self._shown = self._shown, 0
                self._raw("\b" * n + " " * n + "\b" * n)

    # ------------------------------------------------------------ output
    @contextlib.contextmanager
    def _uncaptured(self):
        cm = getattr(self.capture, "global_and_fixture_disabled", None)
        if cm is None:
            yield
        else:
            with cm():
                yield

    def _raw(self, text: str) -> None:
        with self._uncaptured():
            self.terminal.write_raw(text, flush=True)

    def _render_tty(self) -> None:
        tw = getattr(self.terminal, "_tw", None)
        width = getattr(tw, "fullwidth", 80)
        used = getattr(tw, "width_of_current_line", 0)
        room = width - used - 1 - _PROGRESS_COLUMN
        text = "  [" + self.status_text() + "]"
        if room < 24:
            self.clear()
            return
        text = text[:room]
        erase = "\b" * self._shown + " " * self._shown + "\b" * self._shown if self._shown else ""
        self._shown = len(text)
        self._raw(erase + text)

    def _write_line(self, text: str) -> None:
        """A full line; then pytest's current line prefix again, so its next letter lands after it."""
        tr = self.terminal
        cur = getattr(tr, "currentfspath", None)
        prefix = None
        if isinstance(cur, os.PathLike):
            try:
                prefix = os.path.relpath(os.fspath(cur), os.fspath(getattr(tr, "startpath", os.getcwd()))) + " "
            except ValueError:
                prefix = os.fspath(cur) + " "
        elif isinstance(cur, str) and cur:
            prefix = cur
        with self._uncaptured():
            if prefix is None:
                tr.write_line(text)
            else:
                tr.write("\n" + text + "\n" + prefix, flush=True)
        self.lines_written += 1

    # ------------------------------------------------------------ pytest hooks
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.clear()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: Any) -> None:
        self.clear()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.clear()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        self.clear()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if config.pluginmanager.is_registered(self):
            config.pluginmanager.unregister(self)

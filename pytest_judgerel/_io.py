"""Atomic file writes, the one home for every file the package writes, and the check of an
input file's path (stdlib only).

Each write goes to a temp file in the destination folder and is moved into place with
``os.replace``: a reader never sees half a file and a crash leaves the old file intact.
Files get the mode a plain ``open()`` would give them (``0o666`` less the umask), never
``mkstemp``'s private ``0o600``: reports and baselines are meant to be shared.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

__all__ = ["write_text_atomic", "write_jsonl_atomic", "file_mode"]


def _umask() -> int:
    try:  # Linux >= 4.7 reports it without changing it (os.umask would, briefly, for every thread)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def file_mode() -> int:
    """The mode ``open(path, "w")`` would create a file with: ``0o666 & ~umask``."""
    return 0o666 & ~_umask()


def write_text_atomic(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` to ``path`` through a temp file + ``os.replace``; return the absolute path."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".judgerel-", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> Path:
    """Write one JSON object per line atomically (see :func:`write_text_atomic`)."""
    text = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)
    return Path(write_text_atomic(path, text))


def input_path(path: str | os.PathLike[str], what: str, base: str | os.PathLike[str] | None = None) -> Path:
    """An existing input file: ``path`` as given when absolute, else relative to ``base``
    (the rootdir for markers and fixtures) or the working directory.  A missing file raises
    :class:`~pytest_judgerel.errors.ConfigError` that says what the path was relative to."""
    from pytest_judgerel.errors import ConfigError

    p = Path(path).expanduser()
    anchor = Path(base) if base is not None else Path.cwd()
    full = p if p.is_absolute() else anchor / p
    if not full.is_file():
        where = "" if p.is_absolute() else (
            f" (relative paths resolve against the {'rootdir' if base is not None else 'working directory'} "
            f"{anchor}, so it looked for {full})")
        raise ConfigError(f"{what} file {str(path)!r} does not exist{where}")
    return full

"""Atomic file writes and checked JSON reads for reports, baselines and history runs.

Only the controller process writes, once, at session end; every write goes to
a temp file in the destination directory and is moved into place with
``os.replace`` (readers never see half a file; no cross-device rename).
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from .schema import ReportFormatError


def dumps(data: Any) -> str:
    """Stable, reviewable JSON: sorted keys, two-space indent, no NaN."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"


def write_text_atomic(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` to ``path`` through a temp file + ``os.replace``; return the absolute path."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".judgerel-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> str:
    """Write ``data`` as stable JSON (see :func:`dumps`) atomically; return the absolute path."""
    return write_text_atomic(path, dumps(data))


def read_json(path: str | os.PathLike[str], what: str = "file") -> Any:
    """Load JSON, raising :class:`ReportFormatError` that names the file and the problem."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise ReportFormatError(f"{what} {os.fspath(path)!r} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ReportFormatError(f"{what} {os.fspath(path)!r} is not valid JSON: {exc}") from None
    except OSError as exc:
        raise ReportFormatError(f"{what} {os.fspath(path)!r} cannot be read: {exc}") from None

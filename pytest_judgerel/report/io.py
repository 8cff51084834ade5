"""Stable JSON dumps and checked JSON reads for reports, baselines and history runs.

:func:`dumps` gives the reviewable form every JSON output is written in (sorted keys, two-space
indent, no NaN); :func:`write_json_atomic` writes it through
:func:`pytest_judgerel._io.write_text_atomic`; :func:`read_json` names the file and the problem
when an input cannot be read.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .._io import write_text_atomic
from .schema import ReportFormatError

__all__ = ["dumps", "write_json_atomic", "read_json"]


def dumps(data: Any) -> str:
    """Stable, reviewable JSON: sorted keys, two-space indent, no NaN."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"


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

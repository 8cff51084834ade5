"""Session-end outputs and the CI gate: write JSON (and other outputs), return
the reasons that should fail the session (never raise: the summary must print)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any


def write_json_atomic(path: str, data: Any) -> None:
    """Write JSON through a temp file and ``os.replace`` (readers never see half a file)."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".judgerel-", suffix=".json", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def apply_outputs(session: Any, report: dict[str, Any]) -> list[str]:
    """Write the configured outputs; return the gate's failure reasons."""
    s = session.settings
    reasons: list[str] = []
    if s.json:
        write_json_atomic(s.json, report)
    return reasons

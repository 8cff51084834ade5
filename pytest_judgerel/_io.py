"""Small file helpers shared across the package (stdlib only)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> Path:
    """Write one JSON object per line through a temp file and ``os.replace``:
    a reader never sees half a file, and a crash leaves the old file intact."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    tmp.replace(p)
    return p

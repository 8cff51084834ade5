"""What every probe shares: the project root and the subprocess environment."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS_FILE = ROOT / "tests" / "data" / "malformed_replies.jsonl"


def subprocess_env() -> dict[str, str]:
    """The environment of a probe's subprocess: offline litellm, the project root and tests/ importable."""
    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("LITELLM_OFFLINE_MODE", "true")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env

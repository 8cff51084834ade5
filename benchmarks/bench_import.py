"""Plugin import overhead: `pytest --co -q` on an empty project, with and without
the plugin (`-p no:judgerel`), measured in the same run.

Goal: < 50 ms added per pytest invocation.  Prints the added time and the ratio
against the bare run (the anchor), medians of interleaved runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15
GOAL_MS = 50.0


def _time(cmd: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "test_empty.py").write_text("def test_nothing():\n    pass\n")
        base = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
        with_plugin, without = [], []
        _time(base, tmp)  # warm the file cache and .pyc files
        for _ in range(RUNS):
            with_plugin.append(_time(base, tmp))
            without.append(_time(base + ["-p", "no:judgerel"], tmp))
        w, wo = statistics.median(with_plugin), statistics.median(without)
        added_ms = (w - wo) * 1000
        verdict = "PASS" if added_ms < GOAL_MS else "FAIL"
        print(f"plugin_import_overhead: added={added_ms:.1f}ms (with {w*1000:.0f}ms, without {wo*1000:.0f}ms, "
              f"ratio={w/wo:.3f}x) goal<{GOAL_MS:.0f}ms {verdict}")
        return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

"""The package's types hold: mypy checks it with the strictness stated in pyproject.toml
([tool.mypy]) and finds no error; py.typed ships, so users' type checkers read the annotations.

mypy comes with the ``dev`` extra (installed by ``./run tests`` and CI).  Where it is missing the
test skips, except in CI (``CI`` set), where a skip would hide a broken install: it fails.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_is_shipped():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    assert (ROOT / "pytest_judgerel" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["pytest_judgerel"]
    assert any(dep.startswith("mypy") for dep in config["project"]["optional-dependencies"]["dev"])


def test_mypy_finds_no_error_in_the_package(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("mypy is not installed in CI: install the 'dev' extra")
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout

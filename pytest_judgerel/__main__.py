"""``python -m pytest_judgerel`` / ``judgerel``: maintenance commands.

Only the assembly: each top-level command's room registers its argparse subparser
(``register(subparsers)``, each parser sets ``func``), and the module runs only the command
asked for.  Add a command by listing its room's ``register`` in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

#: command -> the module whose ``register(subparsers)`` adds it (imported only to build the parser)
COMMANDS: dict[str, str] = {
    "baseline": "pytest_judgerel.report.accept",
    "cache": "pytest_judgerel.llm.cache_cli",
    "report": "pytest_judgerel.report.cli",  # also adds "history"
    "study": "pytest_judgerel.study.cli",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="judgerel", description="pytest-judgerel maintenance commands")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from pytest_judgerel.errors import JudgerelError

    try:
        return int(args.func(args) or 0)
    except (JudgerelError, OSError) as exc:
        print(f"judgerel: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

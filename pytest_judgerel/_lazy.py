"""Lazy public names of a package (PEP 562).

A submodule loads on the first use of one of its names, so importing a package (which every
pytest run of a user with the plugin installed does for the top level) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``.

    ``exports`` maps each public name to its submodule, absolute (``"pytest_judgerel.llm.client"``)
    or relative to the package (``"profiles"``); a resolved name is stored in ``namespace`` (the
    package's globals), so the next access is a plain attribute lookup.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = module if module.startswith(package.split(".")[0] + ".") else f"{package}.{module}"
        value = getattr(importlib.import_module(where), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


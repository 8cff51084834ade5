"""Lazy public names of a package (PEP 562), and the old import paths of modules that moved.

A submodule loads on the first use of one of its names; a module imported by its old path
(``pytest_judgerel.assertions``, which became ``pytest_judgerel.gates.reliability``) is the new
module itself, with a :class:`DeprecationWarning` naming the new path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

__all__ = ["lazy_exports", "MovedModules"]


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


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers imports of the old module paths in ``moved`` (``{old: new}``) with the new module
    object itself, so ``import``, ``from ... import`` and monkeypatching by the old path reach the
    real module.  Finds nothing else: every other import goes on to the normal finders."""

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = self.moved[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias spec on the real module: give it back its own
        module.__spec__ = self._real_spec

    def install(self) -> None:
        """Add this finder to ``sys.meta_path`` once (a finder for the same old paths is replaced)."""
        sys.meta_path[:] = [f for f in sys.meta_path
                            if not (isinstance(f, MovedModules) and f.moved.keys() == self.moved.keys())]
        sys.meta_path.append(self)

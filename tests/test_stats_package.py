"""The lazy public surface of pytest_judgerel.stats (PEP 562 module __getattr__), exercised at run time."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import pytest

import pytest_judgerel.stats as stats


def test_exported_names_are_the_objects_of_their_submodules():
    homes = {"icc": "icc", "icc_table": "icc", "ICCResult": "icc", "koo_li_band": "icc", "FORMS": "icc",
             "nmae": "agreement", "pearson": "agreement", "krippendorff_alpha": "agreement",
             "bootstrap_ci": "agreement", "BootstrapResult": "agreement",
             "scale_consistency": "consistency", "ScaleConsistencyResult": "consistency"}
    for name, module in homes.items():
        assert getattr(stats, name) is getattr(importlib.import_module(f"pytest_judgerel.stats.{module}"), name)
        assert name in stats.__all__ and name in dir(stats)
    assert stats.icc is importlib.import_module("pytest_judgerel.stats.icc").icc  # the function, not the module


def test_public_names_of_the_ranking_module_resolve_and_private_ones_do_not():
    ranking = importlib.import_module("pytest_judgerel.stats.ranking")
    assert stats.mipsa is ranking.mipsa and stats.RankingResult is ranking.RankingResult
    assert hasattr(ranking, "_pair_signs")
    with pytest.raises(AttributeError, match=r"^module 'pytest_judgerel\.stats' has no attribute '_pair_signs'$"):
        stats._pair_signs  # noqa: B018
    with pytest.raises(AttributeError, match=r"^module 'pytest_judgerel\.stats' has no attribute 'nope'$"):
        stats.nope  # noqa: B018


# every submodule file except icc.py (``stats.icc`` is the function), listed from the directory, not from the package
SUBMODULES = sorted(m.name for m in pkgutil.iter_modules(stats.__path__) if m.name != "icc")


def test_the_submodule_list_is_read_from_the_directory():
    assert {"_input", "agreement", "ranking", "oneway", "preference"} <= set(SUBMODULES) and "icc" not in SUBMODULES


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodules_resolve_through_the_package_when_not_yet_bound(name, monkeypatch):
    module = importlib.import_module(f"pytest_judgerel.stats.{name}")
    monkeypatch.delattr(stats, name)  # as before the first import of the submodule
    assert stats.__getattr__(name) is module is sys.modules[f"pytest_judgerel.stats.{name}"]


def test_a_missing_other_submodule_is_skipped_but_any_other_import_error_is_raised(monkeypatch):
    monkeypatch.setattr(stats, "_OTHER_SUBMODULES", ("not_there", "ranking"))
    assert stats.__getattr__("mipsa") is importlib.import_module("pytest_judgerel.stats.ranking").mipsa
    with pytest.raises(AttributeError):
        stats.__getattr__("no_such_name")


    class _MissingDependency:  # the submodule exists but needs a package that is not installed
        @staticmethod
        def import_module(name, package=None):
            raise ModuleNotFoundError("No module named 'somedep'", name="somedep")

    monkeypatch.setattr(stats, "importlib", _MissingDependency)
    with pytest.raises(ModuleNotFoundError, match="somedep"):
        stats.__getattr__("anything")

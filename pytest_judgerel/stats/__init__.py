"""Pure statistics for judge reliability: ICC, agreement, Krippendorff, consistency, ranking,
repeats planning, verdict stability, bias probes, judge-error-corrected pass rates,
prediction-powered human-scale means, the effective number of judges, sequential looks and
silent judge drift (anchor comparison, the CUSUM monitor, attribution).

Importing this package is cheap: submodules (and numpy/scipy) load on first use
of a name, through a module-level ``__getattr__`` (PEP 562).  Every function
accepts a 2-D items x raters array-like or any object with ``to_matrix()``.

Note: ``pytest_judgerel.stats.icc`` is the *function*; import the module's other
names with ``from pytest_judgerel.stats.icc import ICCResult`` (works as usual).
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from typing import Any

_EXPORTS: dict[str, str] = {
    # icc.py
    "icc": "icc", "icc_table": "icc", "ICCResult": "icc", "ICCTable": "icc",
    "koo_li_band": "icc", "canonical_form": "icc", "FORMS": "icc",
    # agreement.py
    "nmae": "agreement", "NMAEResult": "agreement", "pearson": "agreement", "spearman": "agreement",
    "kendall": "agreement", "CorrelationResult": "agreement", "krippendorff_alpha": "agreement",
    "KrippendorffResult": "agreement", "spearman_brown": "agreement", "bootstrap_ci": "agreement",
    "BootstrapResult": "agreement",
    # consistency.py
    "scale_consistency": "consistency", "ScaleConsistencyResult": "consistency",
    # oneway.py
    "icc_oneway": "oneway", "OneWayICCResult": "oneway",
    # planning.py
    "repeats_needed": "planning", "RepeatsNeeded": "planning", "equivalence_power": "planning",
    "equivalence_sample_size": "planning", "EquivalencePlan": "planning",
    # icc_batch.py, stability.py
    "icc_values": "icc_batch", "icc_statistic": "icc_batch", "ICCStatistic": "icc_batch",
    "verdict_stability": "stability", "VerdictStability": "stability",
    "MIN_ITEMS_OVER_REPEATS": "stability",
    # proportion.py, bias.py
    "wilson_interval": "proportion", "Proportion": "proportion",
    "clopper_pearson": "proportion", "ExactProportion": "proportion",
    "position_consistency": "bias", "PositionConsistency": "bias", "paired_shift": "bias", "PairedShift": "bias",
    "sign_test_p": "bias", "equivalence_test": "bias", "Equivalence": "bias",
    # pass_rate.py
    "corrected_pass_rate": "pass_rate", "CorrectedPassRate": "pass_rate", "JudgeCalibration": "pass_rate",
    # preference.py
    "self_preference_test": "preference", "SelfPreferenceTest": "preference",
    "aligned_self_preference": "preference",
    # ppi.py, effective.py
    "ppi_mean": "ppi", "ppi_mean_by": "ppi", "ppi_mean_difference": "ppi", "PPIMean": "ppi",
    "PPIDifference": "ppi", "HumanMean": "ppi",
    "effective_judges": "effective", "EffectiveJudges": "effective",
    # anchor_drift.py, anchor_noise.py, cusum.py, drift_attribution.py
    "anchor_comparison": "anchor_drift", "AnchorComparison": "anchor_drift",
    "staged_anchor_comparison": "anchor_drift", "designed_shift_level": "anchor_drift",
    "reference_samples_for": "anchor_drift",
    "NoiseRatio": "anchor_noise",
    "drift_monitor": "cusum", "DriftMonitor": "cusum", "MonitorStep": "cusum", "cusum_decision_limit": "cusum",
    "attribute_change": "drift_attribution", "DriftAttribution": "drift_attribution",
    # interval.py
    "Interval": "interval", "format_estimate": "interval", "format_interval": "interval",
    # sequential.py
    "icc_sequential_look": "sequential", "pass_rate_sequential_look": "sequential",
    "human_mean_sequential_look": "sequential", "SequentialLook": "sequential", "LookSchedule": "sequential",
    "repeats_schedule": "sequential", "items_schedule": "sequential", "pass_rate_cutoff": "sequential",
    "PassRateCutoff": "sequential", "icc_fixed_verdict": "sequential", "FixedVerdict": "sequential",
    "pass_rate_schedule": "sequential",
    # sequential_pass_rate.py
    "pass_rate_stops": "sequential_pass_rate", "PassRateStops": "sequential_pass_rate",
    "pass_rate_pass_from": "sequential_pass_rate",
    "pass_rate_operating": "sequential_pass_rate", "PassRateOperating": "sequential_pass_rate",
    "boundaries_operating": "sequential_pass_rate",
    # sequential_plan.py
    "plan_icc": "sequential_plan", "plan_pass_rate": "sequential_plan", "PlannedCalls": "sequential_plan",
    # pairwise.py, bradley_terry.py, verdict_agreement.py, jury.py
    "win_rate": "pairwise", "WinRate": "pairwise", "ppi_win_rate": "pairwise", "consistent_verdict": "pairwise",
    "BradleyTerry": "bradley_terry",
    # sequential_pairwise.py
    "comparison_sequential_look": "sequential_pairwise", "comparison_schedule": "sequential_pairwise",
    "cohens_kappa": "verdict_agreement", "gwet_ac1": "verdict_agreement",
    "VerdictAgreement": "verdict_agreement", "Coefficient": "verdict_agreement",
    "combine_verdicts": "jury", "JuryVerdicts": "jury", "JURY_RULES": "jury",
}
# Submodules whose names other helpers own; their public names resolve lazily too.
_OTHER_SUBMODULES = ("ranking",)

__all__ = sorted(_EXPORTS)


@functools.lru_cache(maxsize=1)
def _submodules() -> frozenset[str]:
    """The submodule files of this package, read from its directory ("icc" is the function)."""
    import pkgutil

    return frozenset(m.name for m in pkgutil.iter_modules(__path__) if m.name != "icc")


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is not None:
        return getattr(importlib.import_module(f".{module_name}", __name__), name)
    if name in _submodules():
        return importlib.import_module(f".{name}", __name__)
    for other in _OTHER_SUBMODULES:
        try:
            module = importlib.import_module(f".{other}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{other}":
                raise
            continue
        if hasattr(module, name) and not name.startswith("_"):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _StatsPackage(types.ModuleType):
    """Keep ``stats.icc`` bound to the function when the import system binds the submodule."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "icc" and isinstance(value, types.ModuleType) and hasattr(value, "icc"):
            value = value.icc
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _StatsPackage

"""pytest-judgerel: test whether an LLM judge can be trusted, as ordinary pytest tests.

Public names are imported lazily (PEP 562) so that ``import pytest_judgerel``
(which every pytest run of a user with the plugin installed does) stays cheap.
"""

from __future__ import annotations

from ._lazy import MovedModules, lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Ratings": "pytest_judgerel.ratings",
    "Scale": "pytest_judgerel.scales",
    "NAMED_SCALES": "pytest_judgerel.scales",
    "assert_icc_above": "pytest_judgerel.gates.reliability",
    "assert_scale_consistent": "pytest_judgerel.gates.reliability",
    "assert_agreement": "pytest_judgerel.gates.reliability",
    "assert_nmae_below": "pytest_judgerel.gates.reliability",
    "agreement": "pytest_judgerel.gates.reliability",
    "JudgeReliabilityFailure": "pytest_judgerel.gates.reliability",
    "assert_position_consistent": "pytest_judgerel.gates.probes",
    "assert_no_length_bias": "pytest_judgerel.gates.probes",
    "assert_no_self_preference": "pytest_judgerel.gates.probes",
    "assert_pass_rate": "pytest_judgerel.gates.probes",
    "assert_injection_resistant": "pytest_judgerel.probes.injection",  # its gate: gates/injection.py
    "assert_human_mean_above": "pytest_judgerel.gates.human_mean",
    "assert_human_mean_difference": "pytest_judgerel.gates.human_mean",
    "assert_mindeval_score": "pytest_judgerel.mindeval.assertions",
    "assert_judge_agrees_with_humans": "pytest_judgerel.mindeval.assertions",
    "Judge": "pytest_judgerel.judging.judge",
    "JudgePanel": "pytest_judgerel.judging.judge",
    "load_template": "pytest_judgerel.judging.templates",
    "load_dataset": "pytest_judgerel.judging.datasets",
    "load_seed001_release": "pytest_judgerel.study.release",
    "JudgerelError": "pytest_judgerel.errors",
    "ReliabilityError": "pytest_judgerel.errors",
    "RatingsError": "pytest_judgerel.errors",
    "ScaleError": "pytest_judgerel.errors",
    "ParseError": "pytest_judgerel.errors",
    "ConfigError": "pytest_judgerel.errors",
    "LLMCallError": "pytest_judgerel.errors",
    "CacheMissError": "pytest_judgerel.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


#: modules that moved into the sub-packages (issue 27): their old import paths keep working
MOVED_MODULES = {
    f"pytest_judgerel.{old}": f"pytest_judgerel.{new}"
    for old, new in {
        "assertions": "gates.reliability", "probe_assertions": "gates.probes",
        "human_mean_assertions": "gates.human_mean", "gate_conclusion": "gates.conclusion",
        "gate_stats": "gates.stability", "judge": "judging.judge", "parsing": "judging.parsing",
        "datasets": "judging.datasets", "templates": "judging.templates", "settings": "session.settings",
        "context": "session.context", "recording": "session.recording",
        "seed001_release": "study.release", "study_reproduce": "study.reproduce",
        "study_html": "study.html", "study_cli": "study.cli",
    }.items()
}
MovedModules(MOVED_MODULES).install()

__getattr__ = lazy_exports(__name__, _EXPORTS, globals())[0]


def __dir__() -> list[str]:
    return __all__

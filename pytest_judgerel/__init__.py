"""pytest-judgerel: test whether an LLM judge can be trusted, as ordinary pytest tests.

Public names are imported lazily (PEP 562) so that ``import pytest_judgerel``
(which every pytest run of a user with the plugin installed does) stays cheap.
"""

from __future__ import annotations

from ._lazy import lazy_exports

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
    "assert_position_consistent": "pytest_judgerel.gates.bias",
    "assert_no_length_bias": "pytest_judgerel.gates.bias",
    "assert_no_self_preference": "pytest_judgerel.gates.bias",
    "assert_pass_rate": "pytest_judgerel.gates.pass_rate",
    "assert_injection_resistant": "pytest_judgerel.gates.injection",
    "assert_human_mean_above": "pytest_judgerel.gates.human_mean",
    "assert_human_mean_difference": "pytest_judgerel.gates.human_mean",
    "assert_mindeval_score": "pytest_judgerel.gates.mindeval",
    "assert_judge_agrees_with_humans": "pytest_judgerel.gates.mindeval",
    "assert_not_worse": "pytest_judgerel.gates.pairwise",
    "assert_better": "pytest_judgerel.gates.pairwise",
    "assert_ranking": "pytest_judgerel.gates.pairwise",
    "assert_verdict_agreement": "pytest_judgerel.gates.verdict_agreement",
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


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())[0]


def __dir__() -> list[str]:
    return __all__

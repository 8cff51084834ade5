"""Bias probes: run a judge on designed inputs and measure one bias each.

* :func:`position_bias` -- each pair judged in both orders (Zheng et al. 2023, section 3.3);
* :func:`length_bias` -- each item judged as is and with content-free padding;
* :func:`self_preference` -- outputs tagged with the model that wrote them, against a reference;
* :func:`injection_probe` -- low-quality items judged clean and with attacks in the judged text.

Gate the results with :func:`~pytest_judgerel.assert_position_consistent`,
:func:`~pytest_judgerel.assert_no_length_bias`, :func:`~pytest_judgerel.assert_no_self_preference` and
:func:`~pytest_judgerel.assert_injection_resistant`.
Every call of a probe goes through the judge's own client, model and endpoint.  Names are
imported lazily, like the rest of the package.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "position_bias": "position", "PositionBiasResult": "position",
    "length_bias": "length", "LengthBiasResult": "length", "verbose_padding": "length",
    "FILLER_SENTENCES": "length",
    "self_preference": "preference", "SelfPreferenceProbeResult": "preference",
    "parse_pairwise_verdict": "pytest_judgerel.judging.pairwise",
    "pairwise_template": "pytest_judgerel.judging.pairwise", "PAIRWISE_TEMPLATE": "pytest_judgerel.judging.pairwise",
    "PAIRWISE_CAUSES": "pytest_judgerel.judging.pairwise",
    "injection_probe": "injection", "InjectionResult": "injection", "AttackOutcome": "injection",
    "FamilyTally": "injection", "DEFAULT_MARGIN": "injection",
    "Attack": "attack_battery", "ATTACKS": "attack_battery", "ATTACK_FAMILIES": "attack_battery",
    "DEFAULT_INJECTION_ITEMS": "attack_battery",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

"""Shared set-up of the examples.

The examples run offline on the embedded model (SmolLM2-135M through llama.cpp)
when no model is configured.  That model is not a judge: measured on 24 STS-B
pairs it agrees with nobody (human ICC(A,1) ~0.00, inter-scale ICC 0.18).  Gates
that only a real judge can meet use the ``real_judge`` fixture: they skip on the
embedded model with a reason that says so, and run for any configured model
(``--judge-model=...``).  Nothing is weakened to make the weak model pass.
"""

import pytest

WEAK_MODEL_REASON = (
    "the embedded {model} is a 135M-parameter model, not a judge (measured on STS-B: no agreement "
    "with humans, inter-scale ICC 0.18); this gate runs for any real model: --judge-model=<litellm model>"
)


@pytest.fixture
def is_embedded_model(judgerel_endpoint) -> bool:
    return judgerel_endpoint.embedded


@pytest.fixture
def real_judge(judgerel_endpoint):
    """Skip the gate on the embedded model, with the reason; run it for any real model."""
    if judgerel_endpoint.embedded:
        pytest.skip(WEAK_MODEL_REASON.format(model=judgerel_endpoint.model))


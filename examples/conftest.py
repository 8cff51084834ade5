"""Shared set-up of the examples.

The examples run offline on the embedded model (SmolLM2-135M through llama.cpp)
when no model is configured.  That model is not a judge: measured on 24 STS-B
pairs it agrees with nobody (human ICC(A,1) ~0.00, inter-scale ICC 0.18).  Gates
that only a real judge can meet request the plugin's ``real_judge`` fixture: they skip
on the embedded model with a reason that says so, and run for any configured model
(``--judge-model=...``).  Nothing is weakened to make the weak model pass.
"""

import pytest


@pytest.fixture
def is_embedded_model(judgerel_endpoint) -> bool:
    return judgerel_endpoint.embedded


# `real_judge` (skip on the embedded model, with the reason) is the plugin's own fixture.

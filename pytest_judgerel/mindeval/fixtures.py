"""Builders behind the MindEval fixtures (``mindeval_judge``, ``interaction``).

The patient LM and the judge default to the session's model (``--judge-model``,
else the embedded model); ``@pytest.mark.patients(turns=...)`` sets the number
of turns (default 20, as in seed 004).  The ``clinician`` fixture is the system
under test: override it in a conftest with a model name, a callable
``fn(messages) -> str`` or an object with a ``respond(messages)`` method.
"""

from __future__ import annotations

from typing import Any


def _model(settings: Any) -> str:
    if settings.model:
        return settings.model
    from pytest_judgerel.llm import default_model

    return default_model()


def _turns(node: Any) -> int:
    mark = node.get_closest_marker("patients")
    return int(mark.kwargs.get("turns", 20)) if mark is not None else 20


def make_judge(node: Any, client: Any, settings: Any):
    """The 5-axis MindEval judge on the session's model."""
    from pytest_judgerel.mindeval.judge import MindEvalJudge

    return MindEvalJudge(_model(settings), client, api_base=settings.api_base,
                         temperature=settings.temperature, max_tokens=settings.max_tokens,
                         reask=settings.reask)


def make_interaction(node: Any, patient: Any, clinician: Any, client: Any, settings: Any):
    """One simulated conversation (cached turn by turn, so a re-run resumes)."""
    from pytest_judgerel.mindeval.interaction import run_interaction

    extra = {}
    if settings.api_base:  # a local OpenAI-compatible server serves the patient (and a model clinician)
        extra["patient_api_base"] = settings.api_base
        if isinstance(clinician, str):
            extra["clinician_api_base"] = settings.api_base
    return run_interaction(patient, clinician, client, patient_model=_model(settings), turns=_turns(node), **extra)

"""Builders behind the MindEval fixtures (pytest wing) (``mindeval_judge``, ``interaction``).

The patient LM and the judge run on the session's endpoint (``--judge-model`` and
``--judge-api-base``, else the embedded model).  ``@pytest.mark.patients(turns=...,
variant=...)`` sets the number of turns (default 20, as in seed 004) and the patient
prompt.  The ``clinician`` fixture is the system under test: override it in a conftest
with an Endpoint, a model name (served by ``--judge-api-base`` when set), a callable
``fn(messages) -> str`` or an object with a ``respond(messages)`` method.
"""

from __future__ import annotations

from typing import Any

def patient_settings(node: Any) -> dict[str, Any]:
    """Turns, patient prompt and per-turn token cap from ``@pytest.mark.patients`` (defaults: 20
    turns, the full prompt of Figure 7 with the backstory of Figures 5-6, no cap).  On the embedded model the backstory
    is grammar-constrained to four paragraphs (``--judgerel-constrain=auto``), so the full
    prompt runs there too."""
    mark = node.get_closest_marker("patients")
    kwargs = mark.kwargs if mark is not None else {}
    out: dict[str, Any] = {"turns": int(kwargs.get("turns", 20)), "patient_variant": kwargs.get("variant") or "default"}
    if kwargs.get("max_tokens") is not None:  # a cap per turn: small local models may not stop by themselves
        from ..mindeval.interaction import SamplingSettings

        cap = SamplingSettings(max_tokens=int(kwargs["max_tokens"]))
        out.update(patient_sampling=cap, clinician_sampling=cap)
    return out


def make_judge(node: Any, client: Any, settings: Any, endpoint: Any):
    """The 5-axis MindEval judge on the session's endpoint."""
    from ..mindeval.judge import MindEvalJudge

    constrain = settings.constrain
    for mark in node.iter_markers("judge"):  # the closest judge marker's constrain wins
        if mark.kwargs.get("constrain") is not None:
            constrain = mark.kwargs["constrain"]
            break
    # temperature, max tokens and re-ask: the session's, as for a MindEvalJudge built in a test body
    return MindEvalJudge(endpoint, client, constrain=constrain)


def make_interaction(node: Any, patient: Any, clinician: Any, client: Any, settings: Any, endpoint: Any):
    """One simulated conversation (cached turn by turn, so a re-run resumes)."""
    from ..mindeval.interaction import run_interaction

    if isinstance(clinician, str):
        from ..llm.endpoint import resolve_endpoint

        # a model name in the session is served by the session's server (an in-process one by none)
        clinician = resolve_endpoint(clinician, default=endpoint)
    return run_interaction(patient, clinician, client, patient_model=endpoint, constrain=settings.constrain,
                           **patient_settings(node))

"""MindEval (Pombal et al. 2025, arXiv:2511.18491) as a library: patient profiles, backstories,
patient/clinician interactions, the 5-axis whole-conversation judge, human annotations and
meta-evaluation.  Names are imported lazily (no numpy, scipy or litellm at import time).
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    # profiles
    "PatientProfile": "profiles", "ATTRIBUTE_KEYS": "profiles", "sample_profiles": "profiles",
    "violations": "profiles", "rule_set_of": "profiles", "load_profiles": "profiles", "save_profiles": "profiles",
    "marginal_frequencies": "profiles", "format_marginals": "profiles", "is_severe": "profiles",
    # prompts
    "render_profile_prompt": "prompts", "render_patient_prompt": "prompts",
    "render_clinician_prompt": "prompts", "render_judge_prompt": "prompts", "load_prompt": "prompts",
    # backstory
    "generate_backstories": "backstory", "backstory_request": "backstory", "ContextWindowError": "backstory",
    "context_overflow": "backstory",
    # interaction
    "Interaction": "interaction", "Turn": "interaction", "SamplingSettings": "interaction",
    "run_interactions": "interaction", "run_interaction": "interaction", "arun_interactions": "interaction",
    "InteractionError": "interaction", "save_interactions": "interaction", "load_interactions": "interaction",
    # judge
    "AXES": "judge", "AXIS_ABBREVIATIONS": "judge", "MindEvalJudge": "judge", "JudgeScore": "judge",
    "FewShotExample": "judge", "parse_judge_reply": "judge", "render_conversation": "judge",
    # annotations
    "AnnotatedConversation": "annotations", "load_human_annotations": "annotations",
    "human_score_matrix": "annotations", "AnnotatorAgreement": "annotations",
    "annotator_agreement": "annotations", "fewshot_examples": "annotations",
    # metrics
    "verbosity": "metrics", "interaction_score": "metrics", "system_scores": "metrics",
    "breakdown": "metrics", "kendall_vs_annotators": "metrics", "judge_mipsa": "metrics",
    "repeated_judge_summary": "metrics", "ranking_agreement": "metrics", "leaderboard": "metrics",
    "aligned_scores": "metrics", "judge_self_preference": "metrics",
    # its gates (in gates/)
    "assert_mindeval_score": "pytest_judgerel.gates.mindeval",
    "assert_judge_agrees_with_humans": "pytest_judgerel.gates.mindeval",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

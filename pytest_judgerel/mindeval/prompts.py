"""The MindEval prompts (Pombal et al. 2025, arXiv:2511.18491, appendix A), as text templates.

Files in ``mindeval/prompts/`` reproduce the paper's figures:

* ``profile_generation.txt`` -- Figures 5-6, backstory (profile) generation;
* ``patient.txt`` -- Figure 7, the patient LM prompt; ablations ``patient_no_format.txt``
  (Figure 8, no formatting instructions) and ``patient_role_only.txt`` (Figure 9);
* ``clinician.txt`` -- Figure 10, the default clinician prompt (member context only);
* ``judge.txt`` -- Figures 11-12, the judge prompt with the 5-axis rubric.  The paper prints the
  start of its first few-shot example (member "Joseph") and then omits the examples; we replace
  that part by ``${fewshot_examples}``, filled from user-supplied examples (see
  :mod:`pytest_judgerel.mindeval.judge`).  Tag spellings (``critierion_1``, ``critrion_4``) are
  kept as printed;
* ``length_penalty.txt`` -- Figure 13 (appendix D.3).  The seed text of the paper breaks off
  after "(>10"; the rest of that first sentence is our own wording of what appendix D.3 and
  the authors' release say: more than 10% of the therapist's turns longer than 4 sentences
  lowers all criteria, AI-Specific Communication Quality most.  Neither sets a cap (the
  figure's next sentence warns against capping).  The paper says the block goes at the end
  of the prompt; the authors' release puts it after the member details, just before the
  conversation, so that the output instruction stays last.  We follow the release.

Placeholders use :class:`string.Template` syntax (``${name}``); rendering is strict: a missing
value raises :class:`~pytest_judgerel.errors.ConfigError`.
"""

from __future__ import annotations

import functools
import string
from importlib import resources
from typing import Any, Mapping

from pytest_judgerel.errors import ConfigError

__all__ = [
    "PROMPT_NAMES",
    "PATIENT_VARIANTS",
    "load_prompt",
    "render",
    "render_profile_prompt",
    "render_patient_prompt",
    "render_clinician_prompt",
    "render_judge_prompt",
    "PATIENT_OPENING",
    "SHORT_TURNS_INSTRUCTION",
]

PROMPT_NAMES = (
    "profile_generation", "patient", "patient_no_format", "patient_role_only",
    "clinician", "judge", "length_penalty",
)
#: patient prompt variants: the default (Figure 7) and the two ablations (Figures 8-9)
PATIENT_VARIANTS = {"default": "patient", "no_format": "patient_no_format", "role_only": "patient_role_only"}

#: the patient's fixed first message (the clinician produces the first generated turn)
PATIENT_OPENING = "Hello"

#: appended to the clinician prompt for the paper's short-turn ablation (section 4.2)
SHORT_TURNS_INSTRUCTION = "Keep each of your turns to at most 4 sentences."


@functools.lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """Raw text of prompt ``name`` (one of :data:`PROMPT_NAMES`)."""
    if name not in PROMPT_NAMES:
        raise ConfigError(f"unknown MindEval prompt {name!r}; known: {PROMPT_NAMES}")
    return resources.files("pytest_judgerel.mindeval").joinpath("prompts").joinpath(f"{name}.txt").read_text(encoding="utf-8")


def render(name_or_text: str, values: Mapping[str, Any], *, is_text: bool = False) -> str:
    """Substitute ``${...}`` placeholders strictly (missing keys raise ConfigError)."""
    text = name_or_text if is_text else load_prompt(name_or_text)
    try:
        return string.Template(text).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise ConfigError(f"prompt {name_or_text if not is_text else '<text>'} needs a value for {exc.args[0]!r}") from exc
    except ValueError as exc:
        raise ConfigError(f"malformed placeholder in prompt: {exc}") from exc


def _attribute_values(profile: Any) -> dict[str, Any]:
    attrs = dict(profile.attributes()) if hasattr(profile, "attributes") else dict(profile)
    attrs.setdefault("education_level", attrs.get("education"))
    return attrs


def render_profile_prompt(profile: Any) -> str:
    """Figures 5-6 with the profile's 25 attributes."""
    return render("profile_generation", _attribute_values(profile))


def render_patient_prompt(profile: Any, variant: str = "default") -> str:
    """Figure 7 (``variant="default"``), 8 (``"no_format"``) or 9 (``"role_only"``).

    The default and no-format variants need the backstory (``profile.member_narrative``).
    """
    if variant not in PATIENT_VARIANTS:
        raise ConfigError(f"patient prompt variant must be one of {sorted(PATIENT_VARIANTS)}, got {variant!r}")
    values = _attribute_values(profile)
    narrative = getattr(profile, "member_narrative", None) if not isinstance(profile, Mapping) else profile.get(
        "member_narrative"
    )
    if variant != "role_only" and not narrative:
        raise ConfigError(
            f"patient prompt variant {variant!r} needs a backstory: generate one with "
            "mindeval.backstory.generate_backstories or load profiles.jsonl with member_narrative"
        )
    values["member_narrative"] = narrative or ""
    return render(PATIENT_VARIANTS[variant], values)


def render_clinician_prompt(profile: Any, short_turns: bool = False) -> str:
    """Figure 10: member context only (never the backstory, never the rubric)."""
    text = render("clinician", _attribute_values(profile))
    if short_turns:
        text = text.rstrip("\n") + "\n\n" + SHORT_TURNS_INSTRUCTION + "\n"
    return text


#: the conversation block of ``judge.txt``; the length guideline is inserted just before it
_JUDGE_CONVERSATION_BLOCK = "<conversation>\n${conversation_str}\n</conversation>"


def render_judge_prompt(
    profile: Any,
    conversation_str: str,
    fewshot_examples: str = "",
    length_penalty: bool = False,
    output_format_hint: str | None = None,
) -> str:
    """Figures 11-12 (+ Figure 13 when ``length_penalty``) for one conversation.

    ``fewshot_examples`` is pre-rendered example text.  ``output_format_hint`` (used when there
    are no examples, whose targets otherwise show the format) is inserted in their place.
    The length guideline goes after the member details, before the conversation (as in the
    authors' release).
    """
    values = _attribute_values(profile)
    block = fewshot_examples.strip("\n")
    if output_format_hint:
        block = (block + "\n\n" + output_format_hint).strip("\n")
    values.update(conversation_str=conversation_str, fewshot_examples=block)
    template = load_prompt("judge")
    if length_penalty:
        head, sep, tail = template.rpartition(_JUDGE_CONVERSATION_BLOCK)
        if not sep:  # pragma: no cover - judge.txt ships with the block
            raise ConfigError("the judge prompt has no <conversation> block to put the length guideline before")
        template = head + load_prompt("length_penalty").strip("\n") + "\n\n" + sep + tail
    return render(template, values, is_text=True)

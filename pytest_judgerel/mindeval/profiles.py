"""MindEval patient profiles: attribute pools, a constrained seeded sampler, profiles.jsonl I/O.

The 25 attribute keys follow MindEval (Pombal et al. 2025, arXiv:2511.18491, section 2.1 and
appendix A, Figures 4-6).  The value pools below are this project's own.  The constraint kinds
are those of the authors' generator (release: mindeval/variables.py): severity -> exercise/sleep
(a severe patient may still be "inconsistently active"); age gates education, finances and
relationship status; living situation depends on relationship status; retired only above 60;
stay-at-home parent only when living with children; unemployed/stay-at-home -> profession
"none"; no "mostly partner" support without a partner; program goal depends on severity (both
severe: reduce anxiety or depression; only one severe: reduce that one; both minimal: neither).
Realism rules of our own: profession needs its education level, children in the home need
age >= 24, a goal never targets an absent symptom, "Lesbian"/"Gay" follow gender identity.

:func:`violations` checks a profile against the rules of the generator whose labels it uses
(:func:`rule_set_of`): ours for our pools, the authors' rules for their labels, so the 50
profiles of the release's ``profiles.jsonl`` are checked by the rules that produced them.

Reproducibility: all profiles draw from one ``numpy.random.Generator(PCG64(seed))``, one block
of ``Generator.random`` doubles per profile (numpy specifies that stream bit-for-bit across
platforms; picks are ``int(u * k)``, exact in IEEE arithmetic).  No global random state is touched
and nothing is re-seeded mid-profile (the release re-seeds Python's global ``random`` three
times per profile, which couples attributes).

Run ``python -m pytest_judgerel.mindeval.profiles 100000`` to print marginal frequencies.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pytest_judgerel.errors import ConfigError

__all__ = [
    "ATTRIBUTE_KEYS",
    "PatientProfile",
    "sample_profiles",
    "violations",
    "rule_set_of",
    "RULE_SETS",
    "is_severe",
    "load_profiles",
    "save_profiles",
    "marginal_frequencies",
    "format_marginals",
    "SEVERITY_LEVELS",
]

ATTRIBUTE_KEYS: tuple[str, ...] = (
    "name", "sex", "gender_identity", "sexual_orientation", "age", "race",
    "thought_process", "general_outlook", "conversation_style", "recent_mood",
    "education", "profession", "employment_status", "financial_situation", "support_system",
    "siblings", "relationship_status", "living_situation", "exercise", "sleep_quality",
    "attitude_towards_mindfulness", "region", "depressive_symptoms", "anxious_symptoms",
    "program_goal",
)

# Aliases seen in MindEval prompts/files (Figure 6 uses education_level and region_of_residence;
# the release's human_annotations.jsonl spells recent_mood "mood" and program_goal "interaction_goal").
_ALIASES = {"education_level": "education", "region_of_residence": "region", "sleep": "sleep_quality",
            "mood": "recent_mood", "interaction_goal": "program_goal"}

# ----------------------------------------------------------------------------- pools (our own)

SEVERITY_LEVELS = ("minimal to no", "mild", "moderate", "severe")
MIN_AGE, MAX_AGE = 21, 69

_FEMININE_NAMES = (
    "Amara", "Beatriz", "Chloe", "Dalia", "Esperanza", "Fatima", "Grace", "Hana", "Imani", "Jasmine",
    "Keiko", "Leilani", "Mariana", "Nadia", "Olivia", "Priya", "Rosa", "Sofia", "Tamika", "Valentina",
    "Wen", "Yasmin", "Zoe", "Ngozi", "Ingrid", "Lucia", "Meera", "Aisha", "Catherine", "Deborah",
)
_MASCULINE_NAMES = (
    "Andre", "Bilal", "Carlos", "Darnell", "Eitan", "Felipe", "Gregory", "Hiroshi", "Ibrahim", "Jamal",
    "Kwame", "Liam", "Mateo", "Nikhil", "Omar", "Patrick", "Rafael", "Samuel", "Tuan", "Victor",
    "Wei", "Xavier", "Yusuf", "Thomas", "Dmitri", "Kenji", "Luis", "Michael", "Robert", "Tyrone",
)
_NEUTRAL_NAMES = (
    "Alex", "Avery", "Blake", "Casey", "Dakota", "Eden", "Emerson", "Jordan", "Kai", "Morgan",
    "Noor", "Parker", "Quinn", "Reese", "Riley", "Rowan", "Sage", "Skyler", "Taylor", "Robin",
)

_SEXES = ("Female", "Male", "Intersex")
_SEX_WEIGHTS = (0.49, 0.49, 0.02)
_CIS = {"Female": "Woman", "Male": "Man"}
_TRANS_OR_NONBINARY = {
    "Female": ("Transgender man", "Non-binary", "Genderqueer", "Genderfluid", "Agender"),
    "Male": ("Transgender woman", "Non-binary", "Genderqueer", "Genderfluid", "Agender"),
    "Intersex": ("Woman", "Man", "Non-binary", "Genderqueer"),
}
_P_GENDER_DIFFERS = 0.06

_ORIENTATIONS_OTHER = ("Gay", "Lesbian", "Bisexual", "Pansexual", "Asexual", "Queer")
_P_HETEROSEXUAL = 0.80
_MAN_IDENTIFIED = ("Man", "Transgender man")
_WOMAN_IDENTIFIED = ("Woman", "Transgender woman")


def _orientations_for(gender: str) -> tuple[str, ...]:
    """"Lesbian" is not offered to man-identified people, nor "Gay" (as distinct from lesbian)
    to woman-identified people."""
    if gender in _MAN_IDENTIFIED:
        return tuple(o for o in _ORIENTATIONS_OTHER if o != "Lesbian")
    if gender in _WOMAN_IDENTIFIED:
        return tuple(o for o in _ORIENTATIONS_OTHER if o != "Gay")
    return _ORIENTATIONS_OTHER

_RACES = (
    "White", "Black or African American", "Hispanic or Latino", "East Asian", "South Asian",
    "Southeast Asian", "Middle Eastern or North African", "Native American or Alaska Native",
    "Native Hawaiian or Pacific Islander", "Multiracial",
)

_THOUGHT_PROCESSES = (
    "linear and methodical, likes to reason step by step",
    "jumps between topics when anxious",
    "tends to ruminate on past conversations",
    "quick to catastrophize small setbacks",
    "concrete and practical, uncomfortable with abstract talk",
    "overthinks decisions and second-guesses choices",
    "notices details others miss but struggles to see the bigger picture",
    "slow to process feelings, often understands them days later",
    "loses the thread when tired",
    "self-critical inner commentary that runs in the background",
)
_OUTLOOKS = (
    "cautiously hopeful",
    "pessimistic about change but willing to try",
    "cynical about institutions, warm with close people",
    "optimistic in public, doubtful in private",
    "resigned, expects things to stay the same",
    "pragmatic, focused on what can be fixed",
    "swings between hope and discouragement",
    "grateful for small things despite hardship",
)
_CONVERSATION_STYLES = (
    "Short answers at first and opens up slowly once trust builds.",
    "Talks a lot and tells stories with many side details.",
    "Uses humor to deflect when topics get personal.",
    "Direct and blunt, dislikes vague questions.",
    "Polite and agreeable on the surface, hesitant to disagree openly.",
    "Asks many questions back and wants to know the reasoning behind suggestions.",
    "Guarded, changes the subject when something feels too close.",
    "Thoughtful and measured, pauses to find the right words.",
    "Apologizes often and worries about taking up too much time.",
    "Emotional and expressive, words come out quickly when upset.",
)
_MOODS = (
    "irritable", "flat", "anxious", "tired", "sad", "restless", "hopeful", "overwhelmed",
    "numb", "frustrated", "lonely", "calm but low",
)

# (label, rank, minimum age)
_EDUCATION = (
    ("did not finish high school", 0, 21),
    ("high school diploma or GED", 1, 21),
    ("some college, no degree", 2, 21),
    ("trade school or vocational certificate", 2, 21),
    ("associate degree", 3, 21),
    ("bachelor's degree", 4, 22),
    ("master's degree", 5, 24),
    ("doctoral or professional degree", 6, 27),
)
_EDU_RANK = {label: rank for label, rank, _ in _EDUCATION}
_EDU_MIN_AGE = {label: age for label, _, age in _EDUCATION}

# (profession, minimum education rank)
_PROFESSIONS = (
    ("Warehouse associate", 0), ("Line cook", 0), ("House cleaner", 0), ("Delivery driver", 0),
    ("Retail sales associate", 1), ("Bus driver", 1), ("Home health aide", 1), ("Security guard", 1),
    ("Electrician", 2), ("Hair stylist", 2), ("Auto mechanic", 2), ("Administrative assistant", 1),
    ("Dental hygienist", 3), ("Paralegal", 3), ("Licensed practical nurse", 3), ("IT support technician", 2),
    ("Accountant", 4), ("Graphic designer", 4), ("Elementary school teacher", 4), ("Software developer", 4),
    ("Social worker", 4), ("Marketing coordinator", 4), ("Registered nurse", 4), ("Journalist", 4),
    ("Civil engineer", 4), ("Librarian", 5), ("Physical therapist", 6), ("Pharmacist", 6),
    ("Physician", 6), ("Lawyer", 6), ("University lecturer", 5), ("Small business owner", 0),
)

_EMPLOYED_STATUSES = (
    "employed full time", "employed part time", "self-employed", "working variable hours",
)
_STATUS_STUDENT = "full-time student"
_STATUS_UNEMPLOYED = "unemployed and looking for work"
_STATUS_DISABILITY = "on medical leave"
_STATUS_STAY_HOME = "stay-at-home parent"
_STATUS_RETIRED = "retired"
_NO_PROFESSION_STATUSES = (_STATUS_UNEMPLOYED, _STATUS_STAY_HOME)

# (label, minimum age)
_FINANCES = (
    ("struggling to cover basic expenses", 21),
    ("living paycheck to paycheck", 21),
    ("tight budget with a small emergency fund", 21),
    ("carrying significant debt", 21),
    ("stable income, modest savings", 25),
    ("financially comfortable with savings and retirement accounts", 32),
    ("financially secure, owns a home outright", 40),
)
_FIN_MIN_AGE = dict(_FINANCES)

# (label, minimum age)
_RELATIONSHIPS = (
    ("single", 21), ("dating", 21), ("dating multiple people", 21), ("in a long-term relationship", 21),
    ("engaged", 21), ("married", 24), ("separated", 26), ("divorced", 26), ("widowed", 30),
)
_REL_MIN_AGE = dict(_RELATIONSHIPS)
_NO_PARTNER_STATUSES = ("single", "divorced", "widowed", "dating", "dating multiple people")

_LIVING_ALONE = ("alone", "alone with a pet")
_LIVING_WITH_PARENTS = "with parents"
_LIVING_ROOMMATES = "with roommates"
_LIVING_PARTNER = "with partner"
_LIVING_SPOUSE = "with spouse"
_LIVING_PARTNER_KIDS = "with partner and children"
_LIVING_SPOUSE_KIDS = "with spouse and children"
_LIVING_KIDS = "with their children as a single parent"
_LIVING_EXTENDED = "with extended family"
_CHILDREN_LIVING = (_LIVING_PARTNER_KIDS, _LIVING_SPOUSE_KIDS, _LIVING_KIDS)
_CHILDREN_MIN_AGE = 24

_LIVING_BY_RELATIONSHIP: dict[str, tuple[str, ...]] = {
    "single": _LIVING_ALONE + (_LIVING_ROOMMATES, _LIVING_WITH_PARENTS, _LIVING_KIDS, _LIVING_EXTENDED),
    "dating": _LIVING_ALONE + (_LIVING_ROOMMATES, _LIVING_WITH_PARENTS, _LIVING_KIDS),
    "dating multiple people": _LIVING_ALONE + (_LIVING_ROOMMATES, _LIVING_WITH_PARENTS),
    "in a long-term relationship": (_LIVING_PARTNER, _LIVING_PARTNER_KIDS) + _LIVING_ALONE + (_LIVING_ROOMMATES,),
    "engaged": (_LIVING_PARTNER, _LIVING_PARTNER_KIDS, _LIVING_ALONE[0]),
    "married": (_LIVING_SPOUSE, _LIVING_SPOUSE_KIDS, _LIVING_EXTENDED),
    "separated": _LIVING_ALONE + (_LIVING_KIDS, _LIVING_WITH_PARENTS, _LIVING_ROOMMATES),
    "divorced": _LIVING_ALONE + (_LIVING_KIDS, _LIVING_ROOMMATES, _LIVING_WITH_PARENTS),
    "widowed": _LIVING_ALONE + (_LIVING_KIDS, _LIVING_EXTENDED),
}

_SUPPORT = (
    "mostly partner", "a few close friends", "parents and siblings", "a faith community",
    "an online peer group", "coworkers more than family", "very limited support",
    "a mix of friends and family",
)
_SUPPORT_PARTNER = "mostly partner"

_SIBLINGS = (
    "no siblings", "one older sister", "one younger brother", "two older brothers",
    "an older brother and a younger sister", "a twin sister", "three siblings, middle child",
    "half-siblings from a parent's second marriage", "one younger sister, estranged",
)

# exercise and sleep: the first `_LOW_END` entries are the low end allowed under severe symptoms.
# The authors' generator lets a severe patient be "inconsistently active, goes through phases" (and up
# to "moderately active"), so that label, which both pools share, is inside the low end here too.
_EXERCISE = (
    "rarely exercises, mostly sedentary",
    "stopped exercising in recent months",
    "occasional short walks",
    "inconsistently active, goes through phases",
    "walks or cycles most days",
    "exercises several times a week as part of routine",
)
_SLEEP = (
    "5 hours or fewer, wakes exhausted",
    "takes over an hour to fall asleep most nights",
    "wakes at 3 or 4 am and cannot get back to sleep",
    "sleeps 10 or more hours and still feels tired",
    "irregular schedule, sleep varies a lot night to night",
    "sleeps about 7 hours, mostly restful",
    "generally sleeps well",
)
_EXERCISE_LOW_END = 4
_SLEEP_LOW_END = 4

_MINDFULNESS = (
    "curious but has never tried it",
    "tried a meditation app and gave up",
    "skeptical, thinks it is not for them",
    "practices breathing exercises now and then",
    "meditates regularly",
    "prefers prayer or spiritual practice",
    "finds sitting still makes anxiety worse",
)
_REGIONS = ("urban", "suburban", "rural")

_GOAL_ANX = "reduce anxiety symptoms"
_GOAL_DEP = "reduce depressive symptoms"
_GOALS_OTHER = (
    "improve sleep", "manage work stress", "improve relationships", "build self-esteem",
    "cope with a recent life change", "build healthier daily routines",
)

_SEVERITY_FILTERS = (None, "severe", "non_severe")
_SEVERITY_ALIASES = {"not_severe": "non_severe", "non-severe": "non_severe", "nonsevere": "non_severe"}


# ----------------------------------------------------------------------------- data model

@dataclass(frozen=True)
class PatientProfile:
    """One simulated patient: the 25 MindEval attributes, plus the backstory once generated.

    ``depressive_symptoms``/``anxious_symptoms`` hold the phrase used in prompts, e.g.
    ``"severe depressive symptoms"``.  ``extra`` keeps unknown keys of loaded files.
    """

    name: str
    sex: str
    gender_identity: str
    sexual_orientation: str
    age: int
    race: str
    thought_process: str
    general_outlook: str
    conversation_style: str
    recent_mood: str
    education: str
    profession: str
    employment_status: str
    financial_situation: str
    support_system: str
    siblings: str
    relationship_status: str
    living_situation: str
    exercise: str
    sleep_quality: str
    attitude_towards_mindfulness: str
    region: str
    depressive_symptoms: str
    anxious_symptoms: str
    program_goal: str
    member_narrative: str | None = None
    member_narrative_thinking_trace: str | None = None
    profile_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def attributes(self) -> dict[str, Any]:
        """The 25 attributes as a dict (keys in :data:`ATTRIBUTE_KEYS` order)."""
        return {k: getattr(self, k) for k in ATTRIBUTE_KEYS}

    def with_backstory(self, narrative: str, thinking_trace: str | None = None) -> "PatientProfile":
        return replace(self, member_narrative=narrative, member_narrative_thinking_trace=thinking_trace)

    @property
    def depressive_level(self) -> str:
        return _severity_level(self.depressive_symptoms)

    @property
    def anxious_level(self) -> str:
        return _severity_level(self.anxious_symptoms)

    @property
    def severe(self) -> bool:
        return is_severe(self)

    def to_record(self) -> dict[str, Any]:
        """A MindEval ``profiles.jsonl`` record."""
        rec: dict[str, Any] = {
            "member_attributes": {**self.attributes(), **dict(self.extra)},
            "member_narrative": self.member_narrative,
            "member_narrative_thinking_trace": self.member_narrative_thinking_trace,
        }
        if self.profile_id is not None:
            rec["profile_id"] = self.profile_id
        return rec

    @classmethod
    def from_attributes(cls, attrs: Mapping[str, Any], **kwargs: Any) -> "PatientProfile":
        """Build from a mapping of the 25 keys (aliases such as ``education_level`` accepted)."""
        if not isinstance(attrs, Mapping):
            raise ConfigError(f"profile attributes must be a mapping, got {type(attrs).__name__}")
        norm: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in attrs.items():
            key = _ALIASES.get(k, k)
            (norm if key in ATTRIBUTE_KEYS else extra)[key] = v
        missing = [k for k in ATTRIBUTE_KEYS if k not in norm]
        if missing:
            raise ConfigError(f"profile attributes are missing {missing}")
        try:
            norm["age"] = int(norm["age"])
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"profile age must be an integer, got {norm['age']!r}") from exc
        for k in ATTRIBUTE_KEYS:
            if k != "age":
                norm[k] = str(norm[k])
        return cls(**norm, extra=extra, **kwargs)


def _severity_level(phrase: str) -> str:
    text = phrase.lower()
    for level in ("minimal to no", "severe", "moderate", "mild"):
        if text.startswith(level):
            return level
    raise ConfigError(f"cannot read a severity level from {phrase!r}")


def is_severe(profile: PatientProfile) -> bool:
    """True when depressive or anxious symptoms are severe (the paper's "severe" group)."""
    return profile.depressive_level == "severe" or profile.anxious_level == "severe"


# ----------------------------------------------------------------------------- sampler

class _Draw:
    """Consumes one block of uniform doubles per profile from a ``numpy.random.Generator``.

    ``Generator.random`` output is specified bit-for-bit by numpy for PCG64, and
    ``int(u * k)`` on IEEE doubles is exact, so picks are identical on every platform.  One
    block per profile (instead of one generator call per attribute) keeps 100,000 profiles fast.
    """

    BLOCK = 32

    def __init__(self, rng: Any):
        self.u = rng.random(self.BLOCK).tolist()
        self.i = 0

    def _next(self) -> float:
        if self.i >= len(self.u):  # pragma: no cover - the sampler uses fewer than BLOCK draws
            raise ConfigError("internal error: profile draw block exhausted")
        v = self.u[self.i]
        self.i += 1
        return v

    def pick(self, options: Sequence[Any]) -> Any:
        if not options:
            raise ConfigError("internal error: empty option list")
        return options[min(int(self._next() * len(options)), len(options) - 1)]

    def integer(self, low: int, high_inclusive: int) -> int:
        return low + min(int(self._next() * (high_inclusive - low + 1)), high_inclusive - low)

    def chance(self, p: float) -> bool:
        return self._next() < p

    def weighted(self, options: Sequence[Any], weights: Sequence[float]) -> Any:
        u = self._next() * sum(weights)
        acc = 0.0
        for opt, w in zip(options, weights):
            acc += w
            if u < acc:
                return opt
        return options[-1]


def _symptom_levels(d: _Draw, severity: str | None) -> tuple[str, str]:
    combos = [(a, b) for a in SEVERITY_LEVELS for b in SEVERITY_LEVELS]
    if severity == "severe":
        combos = [c for c in combos if "severe" in c]
    elif severity == "non_severe":
        combos = [c for c in combos if "severe" not in c]
    return d.pick(combos)


def _allowed_goals(dep: str, anx: str) -> tuple[str, ...]:
    """The goals this project's sampler allows: the authors' rule (both severe: reduce anxiety or
    depression; both minimal: neither) plus two of our own, stricter choices: only one severe:
    reduce that one, and no goal targets an absent symptom.  The authors' release does not follow
    the single-severe choice, so :func:`violations` checks their profiles by their rule alone."""
    if dep == "severe" and anx == "severe":
        return (_GOAL_ANX, _GOAL_DEP)
    if anx == "severe":
        return (_GOAL_ANX,)
    if dep == "severe":
        return (_GOAL_DEP,)
    goals: list[str] = []
    if anx != "minimal to no":
        goals.append(_GOAL_ANX)
    if dep != "minimal to no":
        goals.append(_GOAL_DEP)
    return tuple(goals) + _GOALS_OTHER


def _sample_one(rng: Any, severity: str | None) -> PatientProfile:
    d = _Draw(rng)
    sex = d.weighted(_SEXES, _SEX_WEIGHTS)
    if sex == "Intersex":
        gender = d.pick(_TRANS_OR_NONBINARY["Intersex"])
    elif d.chance(_P_GENDER_DIFFERS):
        gender = d.pick(_TRANS_OR_NONBINARY[sex])
    else:
        gender = _CIS[sex]
    orientation = "Heterosexual" if d.chance(_P_HETEROSEXUAL) else d.pick(_orientations_for(gender))
    if gender in ("Woman", "Transgender woman"):
        name = d.pick(_FEMININE_NAMES + _NEUTRAL_NAMES[:6])
    elif gender in ("Man", "Transgender man"):
        name = d.pick(_MASCULINE_NAMES + _NEUTRAL_NAMES[:6])
    else:
        name = d.pick(_NEUTRAL_NAMES)
    age = d.integer(MIN_AGE, MAX_AGE)
    race = d.pick(_RACES)
    dep, anx = _symptom_levels(d, severity)
    severe = "severe" in (dep, anx)

    education = d.pick([e for e, _, min_age in _EDUCATION if age >= min_age])
    relationship = d.pick([r for r, min_age in _RELATIONSHIPS if age >= min_age])
    living_options = _LIVING_BY_RELATIONSHIP[relationship]
    if age < _CHILDREN_MIN_AGE:
        living_options = tuple(x for x in living_options if x not in _CHILDREN_LIVING)
    living = d.pick(living_options)

    statuses = list(_EMPLOYED_STATUSES) + [_STATUS_STUDENT, _STATUS_UNEMPLOYED, _STATUS_DISABILITY]
    if living in _CHILDREN_LIVING:
        statuses.append(_STATUS_STAY_HOME)
    if age > 60:
        statuses.append(_STATUS_RETIRED)
    employment = d.pick(statuses)
    if employment in _NO_PROFESSION_STATUSES:
        profession = "none"
    elif employment == _STATUS_STUDENT:
        profession = "student"
    else:
        edu_rank = _EDU_RANK[education]
        job = d.pick([p for p, need in _PROFESSIONS if need <= edu_rank])
        profession = f"former {job.lower()}" if employment == _STATUS_RETIRED else job

    finances = d.pick([f for f, min_age in _FINANCES if age >= min_age])
    support_options = [s for s in _SUPPORT if not (s == _SUPPORT_PARTNER and relationship in _NO_PARTNER_STATUSES)]
    support = d.pick(support_options)
    exercise = d.pick(_EXERCISE[:_EXERCISE_LOW_END] if severe else _EXERCISE)
    sleep = d.pick(_SLEEP[:_SLEEP_LOW_END] if severe else _SLEEP)
    goal = d.pick(_allowed_goals(dep, anx))
    return PatientProfile(
        name=name, sex=sex, gender_identity=gender, sexual_orientation=orientation, age=age, race=race,
        thought_process=d.pick(_THOUGHT_PROCESSES), general_outlook=d.pick(_OUTLOOKS),
        conversation_style=d.pick(_CONVERSATION_STYLES), recent_mood=d.pick(_MOODS),
        education=education, profession=profession, employment_status=employment,
        financial_situation=finances, support_system=support, siblings=d.pick(_SIBLINGS),
        relationship_status=relationship, living_situation=living, exercise=exercise, sleep_quality=sleep,
        attitude_towards_mindfulness=d.pick(_MINDFULNESS), region=d.pick(_REGIONS),
        depressive_symptoms=f"{dep} depressive symptoms", anxious_symptoms=f"{anx} anxious symptoms",
        program_goal=goal,
    )


def sample_profiles(n: int, seed: int, severity: str | None = None) -> list[PatientProfile]:
    """Sample ``n`` constrained profiles reproducibly.

    ``severity``: ``None`` (all), ``"severe"`` (depressive or anxious symptoms severe) or
    ``"non_severe"`` (neither; ``"not_severe"`` is accepted too).  One ``Generator(PCG64(seed))`` stream is consumed profile after
    profile, so ``sample_profiles(10, s)[:5] == sample_profiles(5, s)``.  Profile ids are ``"s{seed}-{i}"``.
    """
    import numpy as np

    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError(f"n must be a non-negative int, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be a non-negative int, got {seed!r}")
    severity = _SEVERITY_ALIASES.get(severity, severity) if isinstance(severity, str) else severity
    if severity not in _SEVERITY_FILTERS:
        raise ConfigError(f"severity must be one of {_SEVERITY_FILTERS}, got {severity!r}")
    rng = np.random.Generator(np.random.PCG64(seed))
    return [replace(_sample_one(rng, severity), profile_id=f"s{seed}-{i}") for i in range(n)]


# ----------------------------------------------------------------------------- the authors' generator
# The rules of the authors' sampler (SWORDHealth/mind-eval, mindeval/variables.py, sample_one_profile)
# over the labels it uses for the constrained attributes, so that profiles from the release's
# profiles.jsonl are checked against the rules that produced them.  Facts only: the labels these
# rules read and the ages, not the release's value pools.  Not checked, because that would need
# the release's long value lists: financial situation by age and education, profession by
# education, names by gender.

_A_GENDERS = ("Male", "Female", "Non-Binary")
# relationship status -> minimum age (<= 27: the first three; <= 33: + long-term; 34-49: + married;
# 50+: + divorced, widowed)
_A_RELATIONSHIP_MIN_AGE = {
    "single": 21, "dating multiple people": 21, "in a relationship, not married": 21,
    "in a long-term relationship, not married": 28, "married": 34, "divorced": 50, "widowed": 50,
}
_A_LIVING = {
    "single": ("alone", "with roommates"),
    "dating multiple people": ("alone with a cat", "with one roommate"),
    "in a relationship, not married": ("alone", "with one roommate"),
    "in a long-term relationship, not married": ("with partner", "with partner and pet"),
    "married": ("with spouse and children", "with spouse and dog"),
    "divorced": ("alone", "with shared custody kids", "with their child", "with their children",
                 "with roommate after split"),
    "widowed": ("alone", "alone in family home", "with adult children who moved back"),
}
_A_PARENT_HOMES = ("with spouse and children", "with their child", "with their children")
# education -> minimum age (< 23: the first three; 23-26: + dropped out of college; 27-29: + bachelor's)
_A_EDUCATION_MIN_AGE = {
    "high school dropout, later got GED": 21, "high school graduate": 21,
    "trade school or community college graduate": 21, "dropped out of college": 23, "bachelor's degree": 27,
    "master's degree": 30, "professional degree (JD/MD/etc)": 30, "PhD or doctorate": 30,
}
_A_EMPLOYMENT = ("employed full time", "employed part time", "working variable hours", "unemployed", "retired",
                 "working as stay-at-home parent")
_A_NO_PROFESSION = ("unemployed", "working as stay-at-home parent")
_A_NO_PARTNER = ("single", "divorced", "widowed", "dating multiple people")
# exercise levels from least to most active; severe symptoms allow the first six
_A_EXERCISE = (
    "inactive", "hardly ever", "barely active, occasional walks", "inconsistently active, goes through phases",
    "somewhat active", "moderately active, regular but not intense", "active",
    "quite active, exercise is part of routine", "very active", "highly active, trains almost daily",
    "extremely active, fitness is a major priority",
)
_A_EXERCISE_SEVERE = 6
# sleep options are recognised by their leading hours: the three restful ones are excluded under
# severe symptoms, and the 10-12+ hours one exists only under severe symptoms
_A_SLEEP_RESTFUL = ("7-8 hours/night", "7.5-8 hours/night", "8-9 hours/night")
_A_SLEEP_SEVERE_ONLY = ("sleeps 10-12+ hours",)
_A_GOAL_ANX = "Reduce feelings of anxiety"
_A_GOAL_DEP = "Reduce feelings of depression"

RULE_SETS = ("auto", "project", "authors")


def _project_rules(p: PatientProfile, dep: str, anx: str) -> dict[str, str]:
    """Broken rules of this project's sampler, ``{rule: message}`` (values of our pools)."""
    out: dict[str, str] = {}
    severe = "severe" in (dep, anx)
    if p.sexual_orientation in _ORIENTATIONS_OTHER and p.sexual_orientation not in _orientations_for(p.gender_identity):
        out["orientation"] = f"orientation {p.sexual_orientation!r} with gender identity {p.gender_identity!r}"
    if severe and p.exercise in _EXERCISE[_EXERCISE_LOW_END:]:
        out["exercise"] = f"severe symptoms but exercise {p.exercise!r}"
    if severe and p.sleep_quality in _SLEEP[_SLEEP_LOW_END:]:
        out["sleep"] = f"severe symptoms but sleep {p.sleep_quality!r}"
    if p.education in _EDU_MIN_AGE and p.age < _EDU_MIN_AGE[p.education]:
        out["education"] = f"education {p.education!r} at age {p.age}"
    if p.financial_situation in _FIN_MIN_AGE and p.age < _FIN_MIN_AGE[p.financial_situation]:
        out["financial"] = f"financial situation {p.financial_situation!r} at age {p.age}"
    if p.relationship_status in _REL_MIN_AGE and p.age < _REL_MIN_AGE[p.relationship_status]:
        out["relationship"] = f"relationship {p.relationship_status!r} at age {p.age}"
    allowed_living = _LIVING_BY_RELATIONSHIP.get(p.relationship_status)
    if allowed_living is not None and p.living_situation not in allowed_living:
        out["living"] = f"living {p.living_situation!r} with relationship {p.relationship_status!r}"
    if p.living_situation in _CHILDREN_LIVING and p.age < _CHILDREN_MIN_AGE:
        out["children"] = f"living with children at age {p.age}"
    if p.employment_status == _STATUS_RETIRED and p.age <= 60:
        out["retired"] = f"retired at age {p.age}"
    if p.employment_status == _STATUS_STAY_HOME and p.living_situation not in _CHILDREN_LIVING:
        out["stay_home"] = f"stay-at-home parent living {p.living_situation!r}"
    if p.employment_status in _NO_PROFESSION_STATUSES and p.profession != "none":
        out["profession"] = f"{p.employment_status!r} with profession {p.profession!r}"
    if p.profession == "none" and p.employment_status in _EMPLOYED_STATUSES + (_STATUS_RETIRED,):
        out["profession"] = f"{p.employment_status!r} without a profession"
    job = p.profession[len("former "):].capitalize() if p.profession.startswith("former ") else p.profession
    need = dict((k.lower(), v) for k, v in _PROFESSIONS).get(job.lower())
    if need is not None and p.education in _EDU_RANK and _EDU_RANK[p.education] < need:
        out["profession_education"] = f"profession {p.profession!r} needs more than {p.education!r}"
    if p.support_system == _SUPPORT_PARTNER and p.relationship_status in _NO_PARTNER_STATUSES:
        out["mostly_partner"] = f"'mostly partner' support while {p.relationship_status!r}"
    if p.program_goal not in _allowed_goals(dep, anx) and p.program_goal in (_GOAL_ANX, _GOAL_DEP) + _GOALS_OTHER:
        out["goal"] = f"goal {p.program_goal!r} with {dep} depression and {anx} anxiety"
    return out


def _authors_rules(p: PatientProfile, dep: str, anx: str) -> dict[str, str]:
    """Broken rules of the authors' generator, ``{rule: message}`` (values of their labels)."""
    out: dict[str, str] = {}
    severe = "severe" in (dep, anx)
    if severe and p.exercise in _A_EXERCISE[_A_EXERCISE_SEVERE:]:
        out["exercise"] = f"severe symptoms but exercise {p.exercise!r}"
    if severe and p.sleep_quality.startswith(_A_SLEEP_RESTFUL):
        out["sleep"] = f"severe symptoms but sleep {p.sleep_quality!r}"
    if not severe and p.sleep_quality.startswith(_A_SLEEP_SEVERE_ONLY):
        out["sleep"] = f"sleep {p.sleep_quality!r} without severe symptoms"
    if p.education in _A_EDUCATION_MIN_AGE and p.age < _A_EDUCATION_MIN_AGE[p.education]:
        out["education"] = f"education {p.education!r} at age {p.age}"
    if p.relationship_status in _A_RELATIONSHIP_MIN_AGE and p.age < _A_RELATIONSHIP_MIN_AGE[p.relationship_status]:
        out["relationship"] = f"relationship {p.relationship_status!r} at age {p.age}"
    allowed_living = _A_LIVING.get(p.relationship_status)
    if allowed_living is not None and p.living_situation not in allowed_living:
        out["living"] = f"living {p.living_situation!r} with relationship {p.relationship_status!r}"
    if p.employment_status == "retired" and p.age <= 60:
        out["retired"] = f"retired at age {p.age}"
    if p.employment_status == "working as stay-at-home parent" and p.living_situation not in _A_PARENT_HOMES:
        out["stay_home"] = f"stay-at-home parent living {p.living_situation!r}"
    if p.employment_status in _A_NO_PROFESSION and p.profession != "none":
        out["profession"] = f"{p.employment_status!r} with profession {p.profession!r}"
    if p.profession == "none" and p.employment_status in _A_EMPLOYMENT and p.employment_status not in _A_NO_PROFESSION:
        out["profession"] = f"{p.employment_status!r} without a profession"
    if p.support_system == _SUPPORT_PARTNER and p.relationship_status in _A_NO_PARTNER:
        out["mostly_partner"] = f"'mostly partner' support while {p.relationship_status!r}"
    # the authors' goal rule constrains two cases only: both severe -> one of the two "reduce"
    # goals; both minimal -> neither of them.  One severe level alone leaves the goal free (their
    # release pairs e.g. severe anxiety with other goals)
    reduce = (_A_GOAL_ANX, _A_GOAL_DEP)
    if dep == anx == "severe" and p.program_goal not in reduce:
        out["goal"] = f"goal {p.program_goal!r} with {dep} depression and {anx} anxiety (needs one of {reduce})"
    if dep == anx == "minimal to no" and p.program_goal in reduce:
        out["goal"] = f"goal {p.program_goal!r} without depressive or anxious symptoms"
    return out


_PROJECT_LABELS = {
    "gender_identity": {"Man", "Woman", "Non-binary", "Genderqueer", "Genderfluid", "Agender",
                        "Transgender man", "Transgender woman"},
    "education": set(_EDU_RANK),
    "employment_status": set(_EMPLOYED_STATUSES) | {_STATUS_STUDENT, _STATUS_UNEMPLOYED, _STATUS_DISABILITY,
                                                    _STATUS_STAY_HOME, _STATUS_RETIRED},
    "relationship_status": set(_REL_MIN_AGE),
    "living_situation": {x for v in _LIVING_BY_RELATIONSHIP.values() for x in v},
    "exercise": set(_EXERCISE),
    "program_goal": {_GOAL_ANX, _GOAL_DEP, *_GOALS_OTHER},
}
_AUTHORS_LABELS = {
    "gender_identity": set(_A_GENDERS),
    "education": set(_A_EDUCATION_MIN_AGE),
    "employment_status": set(_A_EMPLOYMENT),
    "relationship_status": set(_A_RELATIONSHIP_MIN_AGE),
    "living_situation": {x for v in _A_LIVING.values() for x in v},
    "exercise": set(_A_EXERCISE),
    "program_goal": {_A_GOAL_ANX, _A_GOAL_DEP},
}


def rule_set_of(profile: PatientProfile) -> tuple[str, ...]:
    """Which generator's labels ``profile`` uses: ``("project",)``, ``("authors",)`` or both
    when its constrained attributes carry no label of one generator only (or as many of each)."""
    own = theirs = 0
    for attr, ours in _PROJECT_LABELS.items():
        value = getattr(profile, attr)
        in_ours, in_theirs = value in ours, value in _AUTHORS_LABELS[attr]
        own += in_ours and not in_theirs
        theirs += in_theirs and not in_ours
    if own > theirs:
        return ("project",)
    if theirs > own:
        return ("authors",)
    return ("project", "authors")


def violations(profile: PatientProfile, rules: str = "auto") -> list[str]:
    """Every broken constraint of ``profile`` as a readable message (empty list = valid).

    ``rules``: ``"project"`` (this project's sampler and pools), ``"authors"`` (the rules of
    the authors' generator over their labels, for the release's ``profiles.jsonl``) or
    ``"auto"`` (default): the rules of the generator whose labels the profile uses
    (:func:`rule_set_of`); when that is undecided, a rule counts as broken only if both rule
    sets say so.  Values a rule cannot read (another generator's labels) do not break it.
    """
    if rules not in RULE_SETS:
        raise ConfigError(f"rules must be one of {RULE_SETS}, got {rules!r}")
    p = profile
    out: list[str] = []
    missing = [k for k in ATTRIBUTE_KEYS if getattr(p, k, None) in (None, "")]
    if missing:
        out.append(f"empty attributes: {missing}")
    if not (MIN_AGE <= p.age <= MAX_AGE):
        out.append(f"age {p.age} outside {MIN_AGE}-{MAX_AGE}")
    try:
        dep, anx = p.depressive_level, p.anxious_level
    except ConfigError as exc:
        out.append(str(exc))
        return out
    chosen = rule_set_of(p) if rules == "auto" else (rules,)
    checks = {"project": _project_rules, "authors": _authors_rules}
    found = [checks[name](p, dep, anx) for name in chosen]
    broken = [rule for rule in found[0] if all(rule in f for f in found[1:])]
    out += [found[0][rule] for rule in broken]
    return out


# ----------------------------------------------------------------------------- profiles.jsonl

def load_profiles(path: str | Path) -> list[PatientProfile]:
    """Read a MindEval ``profiles.jsonl`` (``member_attributes``, ``member_narrative``,
    ``member_narrative_thinking_trace`` per line).  Bad lines raise :class:`ConfigError`
    naming the line number."""
    out: list[PatientProfile] = []
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from exc
            if not isinstance(rec, dict) or "member_attributes" not in rec:
                raise ConfigError(f"{p}:{lineno}: record has no 'member_attributes'")
            try:
                prof = PatientProfile.from_attributes(
                    rec["member_attributes"],
                    member_narrative=rec.get("member_narrative"),
                    member_narrative_thinking_trace=rec.get("member_narrative_thinking_trace"),
                    profile_id=str(rec.get("profile_id", f"{p.stem}-{len(out)}")),
                )
            except ConfigError as exc:
                raise ConfigError(f"{p}:{lineno}: {exc}") from exc
            out.append(prof)
    return out


def save_profiles(profiles: Iterable[PatientProfile], path: str | Path) -> Path:
    """Write profiles as MindEval ``profiles.jsonl`` (atomic replace)."""
    from pytest_judgerel._io import write_jsonl_atomic

    return write_jsonl_atomic(path, (prof.to_record() for prof in profiles))


# ----------------------------------------------------------------------------- marginals

def marginal_frequencies(profiles: Sequence[PatientProfile], keys: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """Share of each value per attribute (age in decades; name omitted unless asked)."""
    keys = keys or [k for k in ATTRIBUTE_KEYS if k != "name"]
    n = len(profiles)
    if n == 0:
        raise ConfigError("marginal_frequencies needs at least one profile")
    out: dict[str, dict[str, float]] = {}
    for k in keys:
        if k == "age":
            counts = Counter(f"{(p.age // 10) * 10}s" for p in profiles)
        else:
            counts = Counter(str(getattr(p, k)) for p in profiles)
        out[k] = {v: c / n for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}
    return out


def format_marginals(freqs: Mapping[str, Mapping[str, float]]) -> str:
    """Markdown table ``| attribute | value | share |``."""
    lines = ["| attribute | value | share |", "|---|---|---:|"]
    for k, values in freqs.items():
        for i, (v, share) in enumerate(values.items()):
            lines.append(f"| {k if i == 0 else ''} | {v} | {share:.3f} |")
    return "\n".join(lines)


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Print marginal frequencies of sampled MindEval profiles")
    ap.add_argument("n", type=int, nargs="?", default=100000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--severity", choices=["severe", "non_severe"], default=None)
    ap.add_argument("--keys", nargs="*", default=None)
    args = ap.parse_args(argv)
    profs = sample_profiles(args.n, args.seed, severity=args.severity)
    print(f"{args.n} profiles, seed {args.seed}, severity filter {args.severity}")
    print(format_marginals(marginal_frequencies(profs, args.keys)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())

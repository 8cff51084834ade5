"""MindEval's human annotations: the release's ``data/human_annotations.jsonl``, the human-human
agreement of the paper's Table 3, and the judge's few-shot examples built from them.

File layout (the authors' release, SWORDHealth/mind-eval; MindEval section 3.2; details in
docs/mindeval.md): one conversation per line, with ``id``, ``model`` (the clinician system),
``messages`` (the clinician speaking first), ``member_attributes`` (the patient's profile, with
``recent_mood`` as ``mood`` and ``program_goal`` as ``interaction_goal``) and ratings under FLAT
dotted keys ``criterion_1.responses`` ... ``criterion_10.responses`` (no criterion 5) and
``criterion11.responses``: integers 0-6, one per annotator, whose ids are in ``<key>.users`` and
statuses in ``<key>.status``.  The annotator order changes from line to line, so ratings are
aligned by annotator id, never by position.

Patients: the file has no patient id; a patient is its ``member_attributes`` without
``interaction_goal``, which differs between the three conversations of one patient.

Axes (appendix C: each of the first four unfolds into two sub-criteria, averaged):

    CAC = mean(c1, c2)   EPC = mean(c3, c4)   AR = mean(c6, c7)   TRA = mean(c8, c9)   ASCQ = c10

``criterion11`` is loaded but used by no axis (the paper does not describe it).

Zeros: appendix C defines anchors 1-6 only, and the file holds zeros.  ``zero_means="score"``
(default) keeps 0 as a score, ``"not_applicable"`` treats it as missing.  The default is the
reading of the authors' own numbers: their five few-shot examples equal the annotator means only
when 0 counts as a score, and it reproduces Table 3 more closely (docs/mindeval.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_judgerel.errors import RatingsError

__all__ = [
    "DEFAULT_AXIS_SUBCRITERIA",
    "ZERO_CONVENTIONS",
    "RELEASE_FEWSHOT_IDS",
    "AnnotatedConversation",
    "AnnotatorAgreement",
    "load_human_annotations",
    "axis_scores_from_subcriteria",
    "human_score_matrix",
    "annotator_ids",
    "patient_key",
    "annotator_agreement",
    "fewshot_examples",
]

DEFAULT_AXIS_SUBCRITERIA: dict[str, tuple[int, ...]] = {
    "CAC": (1, 2), "EPC": (3, 4), "AR": (6, 7), "TRA": (8, 9), "ASCQ": (10,),
}

#: ``zero_means`` values: 0 is a score (the default), or 0 means "not applicable" (missing)
ZERO_CONVENTIONS = ("score", "not_applicable")

#: keys of ``member_attributes`` that belong to one conversation, not to the patient
PER_CONVERSATION_KEYS = ("interaction_goal",)

#: the five annotated conversations whose annotator-mean scores are the few-shot examples of the
#: release's judge prompt (matched on the file: member details, conversation and scores agree)
RELEASE_FEWSHOT_IDS = (
    "39c23252-89be-4d7a-add9-9c70795dc37d",
    "84b12e0c-0e5e-4a92-8b18-abc819a76686",
    "954182de-82b4-4524-9259-2a26f98e972e",
    "b6a96d89-22b0-4f47-952c-040164a78b5a",
    "b718d324-212a-438e-9d50-69693bb4e132",
)

_RATING_KEY = re.compile(r"^criterion_?(\d+)\.responses$")
_SUBMITTED = "submitted"


def axis_scores_from_subcriteria(
    sub: Mapping[int, float], mapping: Mapping[str, Sequence[int]] = DEFAULT_AXIS_SUBCRITERIA
) -> dict[str, float]:
    """Axis = mean of its available sub-criteria (NaN if none); keys in ``mapping`` order."""
    out = {}
    for axis, crits in mapping.items():
        vals = [sub.get(c, math.nan) for c in crits]
        vals = [v for v in vals if not math.isnan(v)]
        out[axis] = sum(vals) / len(vals) if vals else math.nan
    return out


def patient_key(attributes: Mapping[str, Any], ignore: Sequence[str] = PER_CONVERSATION_KEYS) -> str:
    """A stable id for the patient described by ``attributes`` (``name-age-<12 hex digits>``):
    a hash of the attributes without the per-conversation keys in ``ignore``."""
    kept = {k: v for k, v in attributes.items() if k not in ignore}
    digest = hashlib.sha1(json.dumps(kept, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]
    return f"{kept.get('name', 'patient')}-{kept.get('age', '')}-{digest}"


@dataclass(frozen=True)
class AnnotatedConversation:
    """One conversation with its human scores.

    ``annotators`` are the annotator ids, sorted; ``sub_scores[a]`` maps criterion number ->
    value (NaN = missing) and ``axis_scores[a]`` axis abbreviation -> value for ``annotators[a]``.
    ``patient`` is the ``member_attributes`` object and ``patient_id`` its :func:`patient_key`.
    """

    conversation_id: str
    patient_id: str
    system: str
    messages: tuple[dict[str, Any], ...]
    annotators: tuple[str, ...]
    sub_scores: tuple[dict[int, float], ...]
    axis_scores: tuple[dict[str, float], ...]
    patient: Mapping[str, Any]
    raw: Mapping[str, Any]

    def _index(self, annotator: int | str) -> int:
        if isinstance(annotator, str):
            if annotator not in self.annotators:
                raise RatingsError(f"conversation {self.conversation_id}: no annotator {annotator!r}")
            return self.annotators.index(annotator)
        return annotator

    def annotator_mean(self, annotator: int | str) -> float:
        """Mean of the available axes for one annotator (the interaction's average score)."""
        vals = [v for v in self.axis_scores[self._index(annotator)].values() if not math.isnan(v)]
        return sum(vals) / len(vals) if vals else math.nan

    def axis(self, axis: str, annotator: int | str) -> float:
        return self.axis_scores[self._index(annotator)][axis]

    def mean_axis_scores(self) -> dict[str, float]:
        """Per axis, the mean over the annotators who scored it (the paper's example targets)."""
        out = {}
        for axis in self.axis_scores[0] if self.axis_scores else ():
            vals = [s[axis] for s in self.axis_scores if not math.isnan(s[axis])]
            out[axis] = sum(vals) / len(vals) if vals else math.nan
        return out

    def profile(self) -> Any:
        """The patient as a :class:`~pytest_judgerel.mindeval.profiles.PatientProfile`
        (``mood`` and ``interaction_goal`` read as ``recent_mood`` and ``program_goal``)."""
        from pytest_judgerel.mindeval.profiles import PatientProfile

        return PatientProfile.from_attributes(self.patient, profile_id=self.patient_id)


def _ratings(rec: Mapping[str, Any], where: str, zero_means: str) -> tuple[dict[str, dict[int, float]], list[int]]:
    """{annotator id: {criterion: value}} from the flat ``criterion_N.responses`` keys."""
    per: dict[str, dict[int, float]] = {}
    crits: list[int] = []
    for key, values in rec.items():
        m = _RATING_KEY.match(str(key))
        if not m or values is None:
            continue
        crit = int(m.group(1))
        crits.append(crit)
        users = rec.get(f"{key}.users")
        if not isinstance(values, list):
            raise RatingsError(f"{where}: {key!r} must be a list of scores, got {type(values).__name__}")
        if not isinstance(users, list) or len(users) != len(values):
            raise RatingsError(f"{where}: {key!r} needs {key + '.users'!r}, a list of {len(values)} annotator ids "
                               "(ratings are aligned by annotator id)")
        if len(set(map(str, users))) != len(users):
            raise RatingsError(f"{where}: {key + '.users'!r} names an annotator twice: {users}")
        status = rec.get(f"{key}.status")
        if status is not None and (not isinstance(status, list) or len(status) != len(values)):
            raise RatingsError(f"{where}: {key + '.status'!r} must list one status per rating")
        for j, (v, u) in enumerate(zip(values, users)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v <= 6):
                raise RatingsError(f"{where}: {key!r} holds {v!r}; ratings are numbers 0-6")
            x = float(v)
            if (zero_means == "not_applicable" and x == 0) or (status is not None and status[j] != _SUBMITTED):
                x = math.nan
            per.setdefault(str(u), {})[crit] = x
    return per, sorted(set(crits))


def load_human_annotations(
    path: str | Path,
    axis_subcriteria: Mapping[str, Sequence[int]] = DEFAULT_AXIS_SUBCRITERIA,
    zero_means: str = "score",
    per_conversation_keys: Sequence[str] = PER_CONVERSATION_KEYS,
) -> list[AnnotatedConversation]:
    """Read the release's ``human_annotations.jsonl`` (layout in the module docstring).

    ``zero_means``: ``"score"`` (default; 0 is a score) or ``"not_applicable"`` (0 is
    missing), the project's convention since the paper is silent.  A rating whose status is
    not ``submitted`` is missing.  ``per_conversation_keys`` are left out of the patient's
    identity.  Bad lines raise :class:`~pytest_judgerel.errors.RatingsError` with ``path:line``.
    """
    if zero_means not in ZERO_CONVENTIONS:
        raise RatingsError(f"zero_means must be one of {ZERO_CONVENTIONS}, got {zero_means!r}")
    p = Path(path)
    out: list[AnnotatedConversation] = []
    seen: set[str] = set()
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{p}:{lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RatingsError(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(rec, dict):
                raise RatingsError(f"{where}: expected a JSON object")
            for key in ("id", "model", "member_attributes"):
                if rec.get(key) in (None, ""):
                    raise RatingsError(f"{where}: no {key!r} (the release's layout has id, model, member_attributes, "
                                       "messages and criterion_N.responses keys)")
            cid = str(rec["id"])
            if cid in seen:
                raise RatingsError(f"{where}: conversation id {cid} appears twice")
            seen.add(cid)
            attrs = rec["member_attributes"]
            if not isinstance(attrs, Mapping):
                raise RatingsError(f"{where}: 'member_attributes' must be an object")
            messages = rec.get("messages") or []
            if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
                raise RatingsError(f"{where}: 'messages' must be a list of role/content objects")
            per, crits = _ratings(rec, where, zero_means)
            if not crits:
                raise RatingsError(f"{where}: no criterion_N.responses fields (flat keys with dots, as in the release)")
            annotators = tuple(sorted(per))
            subs = tuple({c: per[a].get(c, math.nan) for c in crits} for a in annotators)
            out.append(AnnotatedConversation(
                conversation_id=cid,
                patient_id=patient_key(attrs, per_conversation_keys),
                system=str(rec["model"]),
                messages=tuple(dict(m) for m in messages),
                annotators=annotators,
                sub_scores=subs,
                axis_scores=tuple(axis_scores_from_subcriteria(s, axis_subcriteria) for s in subs),
                patient=dict(attrs),
                raw=rec,
            ))
    if not out:
        raise RatingsError(f"{p}: no annotated conversations")
    return out


def human_score_matrix(conversations: Sequence[AnnotatedConversation], axis: str | None = None) -> Any:
    """conversations x annotators ndarray (NaN = missing) of one axis, or of the mean of the axes
    (``axis=None``).  Columns are the annotator ids in sorted order (:func:`annotator_ids`),
    aligned by id across conversations."""
    import numpy as np

    names = annotator_ids(conversations)
    col = {a: j for j, a in enumerate(names)}
    mat = np.full((len(conversations), len(names)), np.nan)
    for i, c in enumerate(conversations):
        for j, a in enumerate(c.annotators):
            mat[i, col[a]] = c.annotator_mean(j) if axis is None else c.axis_scores[j][axis]
    return mat


def annotator_ids(conversations: Sequence[AnnotatedConversation]) -> tuple[str, ...]:
    """Every annotator id of ``conversations``, sorted (the columns of :func:`human_score_matrix`)."""
    return tuple(sorted({a for c in conversations for a in c.annotators}))


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Human-human agreement in the layout of MindEval Table 3 (Tables 13-17 per axis).

    ``kendall[i][j]``: Kendall tau (scipy tau-b) across all conversations between annotators
    ``i`` and ``j``; ``mipsa[i][j]``: MIPSA (equation 1), patients as interactions and systems
    compared within a patient.  ``kendall_vs_others[i]`` / ``mipsa_vs_others[i]``: annotator
    ``i`` against the per-conversation mean of the other annotators (the paper's "Avg. P" for
    an annotator, section 3.2).  Diagonals are NaN.
    """

    annotators: tuple[str, ...]
    axis: str | None
    kendall: tuple[tuple[float, ...], ...]
    mipsa: tuple[tuple[float, ...], ...]
    kendall_vs_others: tuple[float, ...]
    mipsa_vs_others: tuple[float, ...]
    n_conversations: int
    n_patients: int
    ties: str
    variant: str

    def reordered(self, annotators: Sequence[str]) -> "AnnotatorAgreement":
        """The same statistics with the annotators in the order of ``annotators`` (ids)."""
        if sorted(annotators) != sorted(self.annotators):
            raise RatingsError(f"reordered() needs a permutation of {self.annotators}, got {tuple(annotators)}")
        idx = [self.annotators.index(a) for a in annotators]
        pick = lambda m: tuple(tuple(m[i][j] for j in idx) for i in idx)  # noqa: E731
        return AnnotatorAgreement(
            tuple(annotators), self.axis, pick(self.kendall), pick(self.mipsa),
            tuple(self.kendall_vs_others[i] for i in idx), tuple(self.mipsa_vs_others[i] for i in idx),
            self.n_conversations, self.n_patients, self.ties, self.variant,
        )

    def to_table(self, labels: Sequence[str] | None = None) -> str:
        """Markdown table as in Table 3: Kendall tau below the diagonal, MIPSA above."""
        names = list(labels) if labels is not None else list(self.annotators)
        if len(names) != len(self.annotators):
            raise RatingsError(f"{len(names)} labels for {len(self.annotators)} annotators")
        k = len(names)
        lines = ["| annotator | " + " | ".join(names) + " | mean of the others |",
                 "|---" * (k + 2) + "|"]
        for i in range(k):
            cells = ["" if i == j else f"{(self.kendall if j < i else self.mipsa)[i][j]:.4f}" for j in range(k)]
            lines.append(f"| {names[i]} | " + " | ".join(cells) + f" | {self.mipsa_vs_others[i]:.4f} |")
        lines.append("| mean of the others | " + " | ".join(f"{v:.4f}" for v in self.kendall_vs_others) + " | |")
        return "\n".join(lines)


def annotator_agreement(
    conversations: Sequence[AnnotatedConversation], axis: str | None = None, *, ties: str = "sign",
    variant: str = "b",
) -> AnnotatorAgreement:
    """Kendall tau and MIPSA between every pair of annotators and of each annotator against the
    mean of the others, on one axis or on the mean of the axes (``axis=None``).

    ``ties``: the MIPSA tie policy of :func:`pytest_judgerel.stats.ranking.mipsa`; ``variant``:
    the Kendall variant (``"b"`` or ``"c"``).
    """
    import numpy as np

    from pytest_judgerel.mindeval.metrics import judge_mipsa, kendall_vs_annotators

    if not conversations:
        raise RatingsError("annotator_agreement needs annotated conversations")
    names = annotator_ids(conversations)
    if len(names) < 3:
        raise RatingsError(f"annotator_agreement needs at least 3 annotators (each against the mean of the "
                           f"others), got {len(names)}")
    mat = human_score_matrix(conversations, axis)
    patients = [c.patient_id for c in conversations]
    systems = [c.system for c in conversations]
    k = len(names)
    tau = np.full((k, k), np.nan)
    mip = np.full((k, k), np.nan)
    tau_others, mip_others = [], []
    for i in range(k):
        others = [j for j in range(k) if j != i]
        kt = kendall_vs_annotators(list(mat[:, i]), mat[:, others], variant=variant)
        mp = judge_mipsa(list(mat[:, i]), mat[:, others], patients, systems, ties=ties)
        for pos, j in enumerate(others):
            tau[i, j], mip[i, j] = kt.per_annotator[pos], mp.per_annotator[pos]
        tau_others.append(kt.vs_average)
        mip_others.append(mp.vs_average)
    return AnnotatorAgreement(
        annotators=names, axis=axis,
        kendall=tuple(tuple(float(v) for v in row) for row in tau),
        mipsa=tuple(tuple(float(v) for v in row) for row in mip),
        kendall_vs_others=tuple(float(v) for v in tau_others),
        mipsa_vs_others=tuple(float(v) for v in mip_others),
        n_conversations=len(conversations), n_patients=len(set(patients)), ties=ties, variant=variant,
    )


def fewshot_examples(
    conversations: Sequence[AnnotatedConversation], ids: Sequence[str] = RELEASE_FEWSHOT_IDS
) -> list[Any]:
    """Judge few-shot examples from annotated conversations: member details, the conversation
    and, as target, the mean of the annotators' axis scores (MindEval section 3.2, footnote 8).

    With the release's file and the default ``ids`` this rebuilds the five examples of the
    authors' judge prompt, which the paper omits (use ``zero_means="score"``, the default, to
    get their exact targets).  Like the release's, these conversations start with the
    therapist; the mismatch warning of :class:`~pytest_judgerel.mindeval.judge.FewShotExample`
    is not raised for them.
    """
    from pytest_judgerel.mindeval.judge import FewShotExample

    by_id = {c.conversation_id: c for c in conversations}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise RatingsError(f"few-shot conversation(s) {missing} are not among the {len(by_id)} loaded conversations")
    out = []
    for i in ids:
        conv = by_id[i]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="MindEval few-shot example starts with the therapist")
            out.append(FewShotExample(conv.profile(), list(conv.messages), conv.mean_axis_scores()))
    return out

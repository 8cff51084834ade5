"""Loader for MindEval's human annotations (``data/human_annotations.jsonl`` of the release).

The release holds 60 conversations (20 patients x 3 clinician models), each scored by 4
psychologists on sub-criteria fields ``criterion_1`` ... ``criterion_4``, ``criterion_6`` ...
``criterion_10`` and ``criterion11`` (integers 0-6).  Axis scores follow the paper's appendix C
(each of the first four axes unfolds into two sub-criteria, averaged):

    CAC = mean(c1, c2)   EPC = mean(c3, c4)   AR = mean(c6, c7)   TRA = mean(c8, c9)   ASCQ = c10

``0`` is read as "not applicable" and treated as missing (``NaN``); an axis whose sub-criteria
are all missing is ``NaN``.  ``criterion11`` is kept in ``sub_scores`` but used by no axis.
Field spellings ``criterion_N`` and ``criterionN`` are both accepted.

The loader accepts three layouts, since the exact record shape is not documented:
1. one record per conversation, annotator scores in ``annotations``/``annotators``/``ratings``
   (a list of dicts with criterion fields and optionally ``annotator``);
2. one record per conversation, each criterion field a list (one value per annotator);
3. one record per (conversation, annotator) with an ``annotator`` field (grouped by id).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_judgerel.errors import RatingsError

__all__ = [
    "DEFAULT_AXIS_SUBCRITERIA",
    "AnnotatedConversation",
    "load_human_annotations",
    "axis_scores_from_subcriteria",
    "human_score_matrix",
]

DEFAULT_AXIS_SUBCRITERIA: dict[str, tuple[int, ...]] = {
    "CAC": (1, 2), "EPC": (3, 4), "AR": (6, 7), "TRA": (8, 9), "ASCQ": (10,),
}

_CRITERION_RE = re.compile(r"^criterion_?(\d+)$", re.IGNORECASE)
_ID_FIELDS = ("conversation_id", "interaction_id", "id", "uid")
_PATIENT_FIELDS = ("profile_id", "patient_id", "member_id", "profile_idx", "profile")
_SYSTEM_FIELDS = ("clinician_model", "model", "system", "companion_model", "therapist_model")
_ANNOTATION_LIST_FIELDS = ("annotations", "annotators", "ratings", "human_annotations")


def _criteria_in(obj: Mapping[str, Any]) -> dict[int, Any]:
    out = {}
    for k, v in obj.items():
        m = _CRITERION_RE.match(str(k))
        if m:
            out[int(m.group(1))] = v
    return out


def _value(v: Any, where: str, zero_is_missing: bool) -> float:
    if v is None or v == "":
        return math.nan
    try:
        x = float(v)
    except (TypeError, ValueError) as exc:
        raise RatingsError(f"{where}: criterion value {v!r} is not a number") from exc
    if math.isnan(x):
        return math.nan
    if zero_is_missing and x == 0:
        return math.nan
    if not (0 <= x <= 6):
        raise RatingsError(f"{where}: criterion value {v!r} outside 0-6")
    return x


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


@dataclass(frozen=True)
class AnnotatedConversation:
    """One conversation with its human scores.

    ``sub_scores[a]`` maps criterion number -> value (NaN = missing) for annotator ``a``;
    ``axis_scores[a]`` maps axis abbreviation -> value.
    """

    conversation_id: str
    patient_id: str | None
    system: str | None
    messages: tuple[dict[str, Any], ...]
    annotators: tuple[str, ...]
    sub_scores: tuple[dict[int, float], ...]
    axis_scores: tuple[dict[str, float], ...]
    raw: Mapping[str, Any]

    def annotator_mean(self, annotator: int | str) -> float:
        """Mean of the available axes for one annotator (the paper's "average score")."""
        idx = self.annotators.index(annotator) if isinstance(annotator, str) else annotator
        vals = [v for v in self.axis_scores[idx].values() if not math.isnan(v)]
        return sum(vals) / len(vals) if vals else math.nan

    def axis(self, axis: str, annotator: int | str) -> float:
        idx = self.annotators.index(annotator) if isinstance(annotator, str) else annotator
        return self.axis_scores[idx][axis]


def _first(rec: Mapping[str, Any], names: Sequence[str]) -> Any:
    for n in names:
        if n in rec and rec[n] not in (None, ""):
            return rec[n]
    return None


def load_human_annotations(
    path: str | Path,
    axis_subcriteria: Mapping[str, Sequence[int]] = DEFAULT_AXIS_SUBCRITERIA,
    zero_is_missing: bool = True,
) -> list[AnnotatedConversation]:
    """Read a MindEval-format ``human_annotations.jsonl`` (see the module docstring)."""
    p = Path(path)
    grouped: dict[str, dict[str, Any]] = {}
    order: list[str] = []
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
            cid = _first(rec, _ID_FIELDS)
            cid = str(cid) if cid is not None else f"line{lineno}"
            per_annotator: list[tuple[str, dict[int, float]]] = []
            lst = _first(rec, _ANNOTATION_LIST_FIELDS)
            top = _criteria_in(rec)
            if isinstance(lst, list):
                for j, ann in enumerate(lst):
                    if not isinstance(ann, Mapping):
                        raise RatingsError(f"{where}: annotation {j} is not an object")
                    crit = _criteria_in(ann.get("scores", ann) if isinstance(ann.get("scores"), Mapping) else ann)
                    if not crit:
                        raise RatingsError(f"{where}: annotation {j} has no criterion fields")
                    name = str(ann.get("annotator", ann.get("annotator_id", j)))
                    per_annotator.append((name, {c: _value(v, f"{where} criterion {c}", zero_is_missing)
                                                 for c, v in crit.items()}))
            elif top and all(isinstance(v, list) for v in top.values()):
                lengths = {len(v) for v in top.values()}
                if len(lengths) != 1:
                    raise RatingsError(f"{where}: criterion lists have different lengths {sorted(lengths)}")
                names = rec.get("annotator_ids") or [str(j) for j in range(lengths.pop())]
                for j, name in enumerate(names):
                    per_annotator.append((str(name), {c: _value(v[j], f"{where} criterion {c}", zero_is_missing)
                                                      for c, v in top.items()}))
            elif top:
                name = str(_first(rec, ("annotator", "annotator_id", "rater")) or "0")
                per_annotator.append((name, {c: _value(v, f"{where} criterion {c}", zero_is_missing)
                                             for c, v in top.items()}))
            else:
                raise RatingsError(f"{where}: no criterion_N / criterionN fields found")
            entry = grouped.get(cid)
            if entry is None:
                messages = rec.get("messages") or rec.get("conversation") or []
                if not isinstance(messages, list):
                    raise RatingsError(f"{where}: 'messages' must be a list of role/content objects")
                entry = grouped[cid] = {
                    "patient": _first(rec, _PATIENT_FIELDS), "system": _first(rec, _SYSTEM_FIELDS),
                    "messages": tuple(dict(m) for m in messages), "ann": [], "raw": rec,
                }
                order.append(cid)
            entry["ann"].extend(per_annotator)
    out = []
    for cid in order:
        e = grouped[cid]
        names = [n for n, _ in e["ann"]]
        if len(set(names)) != len(names):
            raise RatingsError(f"conversation {cid}: annotator names repeat {names}")
        subs = tuple(s for _, s in e["ann"])
        out.append(AnnotatedConversation(
            conversation_id=cid,
            patient_id=None if e["patient"] is None else str(e["patient"]),
            system=None if e["system"] is None else str(e["system"]),
            messages=e["messages"],
            annotators=tuple(names),
            sub_scores=subs,
            axis_scores=tuple(axis_scores_from_subcriteria(s, axis_subcriteria) for s in subs),
            raw=e["raw"],
        ))
    if not out:
        raise RatingsError(f"{p}: no annotated conversations")
    return out


def human_score_matrix(conversations: Sequence[AnnotatedConversation], axis: str | None = None) -> Any:
    """conversations x annotators ndarray (NaN = missing) of one axis, or of the mean of the axes
    (``axis=None``).  Annotators are aligned by name across conversations."""
    import numpy as np

    names: list[str] = []
    for c in conversations:
        for a in c.annotators:
            if a not in names:
                names.append(a)
    mat = np.full((len(conversations), len(names)), np.nan)
    for i, c in enumerate(conversations):
        for j, a in enumerate(c.annotators):
            col = names.index(a)
            mat[i, col] = c.annotator_mean(j) if axis is None else c.axis_scores[j][axis]
    return mat

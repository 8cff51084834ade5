"""Length-bias probe: each item judged as is and with content-free padding.

Verbosity bias (Zheng et al. 2023, section 3.3; Saito et al. 2023, arXiv:2310.10076): a judge
that scores a longer answer higher although it says nothing more.  ``length_bias(judge,
items)`` rates every item with the judge itself (``judge.rate``) and again with one field
padded by sentences that carry no content, and reports the paired mean score shift on the
[0, 1]-normalised scale with Student's paired t interval and test
(:func:`pytest_judgerel.stats.paired_shift`).  A judge without length bias shows a shift
near 0; a positive shift means padding alone raised the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ConfigError

__all__ = ["FILLER_SENTENCES", "verbose_padding", "LengthBiasResult", "length_bias"]

FILLER_SENTENCES = (
    "Thank you for the question; here is my answer.",
    "I have tried to be careful and thorough in putting this answer together.",
    "It is worth taking a moment to consider the question as it was asked.",
    "With that in mind, the answer above is my response to it.",
    "I hope this is clear and useful.",
    "Please let me know if anything should be explained in a different way.",
    "Thank you again for reading this answer to the end.",
)
"""Sentences that add length and no content (used in this order, cyclically)."""


def verbose_padding(text: str, factor: float = 2.0, min_sentences: int = 3) -> str:
    """``text`` wrapped in :data:`FILLER_SENTENCES`: at least ``min_sentences`` of them, and
    enough to make it at least ``factor`` times as long.

    Deterministic: the first filler sentence goes before the text, the others after it in a
    fixed cycle.  Replace it with your own ``pad=`` callable for a domain where these
    sentences would be out of place.
    """
    if not isinstance(text, str):
        raise ConfigError(f"verbose_padding pads text, got {type(text).__name__}")
    if not factor > 1:
        raise ConfigError(f"factor must be above 1, got {factor!r}")
    if isinstance(min_sentences, bool) or not isinstance(min_sentences, int) or min_sentences < 1:
        raise ConfigError(f"min_sentences must be a positive integer, got {min_sentences!r}")
    body = text.strip()
    before = FILLER_SENTENCES[0]
    after: list[str] = []
    target = factor * max(len(text), 1)

    def padded() -> str:
        return f"{before} {body}" + ("\n\n" + " ".join(after) if after else "")

    while 1 + len(after) < min_sentences or len(padded()) < target:
        after.append(FILLER_SENTENCES[1 + len(after) % (len(FILLER_SENTENCES) - 1)])
    return padded()


@dataclass(frozen=True)
class LengthBiasResult:
    """Outcome of :func:`length_bias`.  ``shift`` is the :class:`~pytest_judgerel.stats.PairedShift`
    of normalised scores (padded - original); ``item_shifts`` per item (None when an item lacks
    a score in either version); ``original``/``padded`` the judge's Ratings; ``length_ratio`` the
    mean character ratio padded / original of the padded field."""

    shift: Any
    item_shifts: dict[str, float | None]
    original: Any
    padded: Any
    scale: Any
    field: str
    length_ratio: float
    provenance: dict[str, Any] = dc_field(default_factory=dict)

    @property
    def value(self) -> float:
        return self.shift.mean

    @property
    def parse_failures(self) -> tuple[Any, ...]:
        return tuple(self.original.parse_failures) + tuple(self.padded.parse_failures)

    @property
    def n_omitted(self) -> int:
        return sum(v is None for v in self.item_shifts.values())

    def largest_shifts(self, limit: int = 5) -> list[tuple[str, float]]:
        known = [(i, s) for i, s in self.item_shifts.items() if s is not None and s > 0]
        return sorted(known, key=lambda t: -t[1])[:limit]

    def __str__(self) -> str:
        return (f"length shift {self.shift.mean:+.4f} on [0, 1] {self.shift.interval.format(signed=True)}, "
                f"paired t p = {self.shift.p:.3g}, n = {self.shift.n} items "
                f"(field {self.field!r} padded to {self.length_ratio:.1f}x its length)")


def length_bias(judge: Any, items: Any, *, field: str = "answer", pad: Callable[[str], str] | None = None,
                repeats: int = 1, confidence: float = 0.95) -> LengthBiasResult:
    """Rate ``items`` as they are and with ``field`` padded; the paired shift of normalised scores.

    ``pad`` maps the field's text to its padded version (default :func:`verbose_padding`); it
    must make the text longer.  With ``repeats`` > 1 each version is the mean of that many
    samples per item.  Uses ``judge.rate``: the judge's template, scale, model and client.
    """
    from ..judging.judge import item_rows
    from ..stats.bias import paired_shift

    padder = pad or verbose_padding
    rows = item_rows(items)
    templ_fields = getattr(getattr(judge, "_template", None), "fields", ())
    if templ_fields and field not in templ_fields:
        raise ConfigError(f"length_bias pads field {field!r}, which template {judge.template_name!r} does not use "
                          f"(its fields: {list(templ_fields)}); pass field=...")
    padded_rows, ratios = {}, []
    for iid, item in rows:
        text = item.get(field)
        if not isinstance(text, str):
            raise ConfigError(f"item {iid!r}: field {field!r} must be text, got {type(text).__name__}")
        longer = padder(text)
        if not isinstance(longer, str) or len(longer) <= len(text):
            raise ConfigError(f"pad must return a longer text; for item {iid!r} it returned "
                              f"{len(longer) if isinstance(longer, str) else type(longer).__name__} characters "
                              f"for {len(text)}")
        padded_rows[iid] = {**item, field: longer}
        ratios.append(len(longer) / max(len(text), 1))
    original = judge.rate(dict(rows), repeats)
    padded = judge.rate(padded_rows, repeats)
    sc = original.scale
    with np.errstate(all="ignore"):
        before = (original.item_means() - sc.low) / sc.range
        after = (padded.item_means() - sc.low) / sc.range
    shift = paired_shift(before, after, confidence)
    item_shifts = {iid: (None if np.isnan(x) or np.isnan(y) else float(y - x))
                   for iid, x, y in zip(original.item_ids, before, after)}
    prov = {**dict(original.provenance), "design": "length_bias", "padded_field": field}
    return LengthBiasResult(shift, item_shifts, original, padded, sc, field, float(np.mean(ratios)), prov)

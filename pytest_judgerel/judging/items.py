"""What a judge is given and what it keeps of a reply it could not read: item rows and failures.

:func:`item_rows` normalises the items every judging call takes (a sequence of mappings, a mapping
``{id: fields}``, a data set); :class:`JudgeFailure` is one unreadable reply, kept with its raw text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import ConfigError

__all__ = ["JudgeFailure", "item_rows"]


@dataclass(frozen=True)
class JudgeFailure:
    """One reply that could not be read as a score (kept with the raw text)."""

    item: str
    rater: str
    cause: str
    message: str
    reply: str
    reasked: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "rater": self.rater, "cause": self.cause, "message": self.message,
                "reply": self.reply, "reasked": self.reasked}



def item_rows(items: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """Normalise items to [(item id, fields)]; ids from 'id'/'item_id' or the position.

    Accepts a sequence of mappings, a mapping ``{id: fields}`` or an object with an
    ``items`` list (e.g. a :class:`~pytest_judgerel.judging.datasets.HumanDataset`).
    """
    if not isinstance(items, Mapping):
        inner = getattr(items, "items", None)
        if inner is not None and not callable(inner):
            items = inner
    if isinstance(items, Mapping):
        rows = [(str(k), v) for k, v in items.items()]
    else:
        rows = []
        for n, it in enumerate(items):
            if not isinstance(it, Mapping):
                raise ConfigError(f"item {n} must be a mapping of template fields, got {type(it).__name__}")
            iid = getattr(it, "id", None)
            if iid is None or callable(iid):
                iid = it.get("id", it.get("item_id", n))
            rows.append((str(iid), it))
    if not rows:
        raise ConfigError("no items to rate")
    ids = [r[0] for r in rows]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"duplicate item id {dup!r}")
    return rows

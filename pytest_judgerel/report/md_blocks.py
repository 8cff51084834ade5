"""The pieces of the Markdown summary: blocks that keep tables whole, cut to a size limit.

A :class:`Block` is kept whole, except its rows (table rows, list items), which may be cut:
its head, the first rows and its tail are still valid Markdown.  :func:`fit_blocks` joins
blocks within a limit (GitHub's 65,536-character comment, 1 MiB step summary) and notes what
it left out.  Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Block", "MARKER", "COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "fit_blocks", "utf8_size", "cell", "code"]

#: the hidden line that opens every summary (the comment command finds its own comment by it)
MARKER = "<!-- judgerel-summary -->"
#: GitHub's limits: a comment body in characters, a step's summary in bytes
COMMENT_LIMIT = 65_536
STEP_SUMMARY_LIMIT = 1_048_576
_NOTE_RESERVE = 400


@dataclass
class Block:
    """A piece of Markdown that is kept whole, except that its ``rows`` (table rows, list items)
    may be cut: ``head`` + the first rows + ``tail`` is still valid Markdown."""

    head: str
    rows: list[str] = field(default_factory=list)
    tail: str = ""

    def text(self, k: int | None = None) -> str:
        rows = self.rows if k is None else self.rows[:k]
        body = "\n".join([self.head, *rows]) if self.head else "\n".join(rows)
        return body + (("\n" + self.tail) if self.tail else "")


def utf8_size(text: str) -> int:
    """The size GitHub's step-summary limit counts: UTF-8 bytes."""
    return len(text.encode("utf-8"))


def fit_blocks(blocks: list[Block], limit: int, size: Callable[[str], int] = len, what: str = "") -> str:
    """The blocks joined by blank lines within ``limit`` (as measured by ``size``).

    When they do not fit, whole blocks are kept in order; the first block that does not fit
    keeps its head, as many rows as fit and its tail (never half a table), and a note names
    how many rows and sections were left out."""
    full = "\n\n".join(b.text() for b in blocks) + "\n"
    if size(full) <= limit:
        return full
    budget = limit - _NOTE_RESERVE
    out: list[str] = []
    used = 0
    rows_left = sections_left = 0
    for i, b in enumerate(blocks):
        text = b.text()
        if used + size(text) + 2 <= budget:
            out.append(text)
            used += size(text) + 2
            continue
        k = len(b.rows)
        while k > 0 and used + size(b.text(k)) + 2 > budget:
            k -= 1
        if k > 0:
            out.append(b.text(k))
            rows_left += len(b.rows) - k
        else:
            sections_left += 1
        sections_left += len(blocks) - i - 1
        rows_left += sum(len(x.rows) for x in blocks[i + 1:])
        break
    note = (f"> [!NOTE]\n> Cut to stay within {what or 'the size limit'} ({limit:,}): "
            f"{rows_left} more row(s) of a table or list and {sections_left} more section(s) left out; the JSON "
            "and HTML reports hold every test.")
    return "\n\n".join([*out, note]) + "\n"


def cell(text: Any) -> str:
    """``text`` safe inside a GFM table cell: no pipe (escaped), no line break."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def code(text: Any) -> str:
    """``text`` as inline code that survives a table cell."""
    plain = str(text).replace("`", "'")
    return f"`{cell(plain)}`"

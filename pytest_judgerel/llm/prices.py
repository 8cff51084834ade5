"""Cost of a call on the HTTP fast path, from litellm's own price table read as data.

litellm ships its price list as ``model_prices_and_context_window_backup.json`` inside the
package; the litellm path prices a call from it (``response_cost``).  The fast path reads the same
file without importing litellm (a slow import) and applies the same rule for the
providers it speaks: ``openai/<name>`` is priced as the entry ``<name>`` whose ``litellm_provider``
is ``openai`` (or an entry keyed ``openai/<name>``); a model without an entry costs 0.0, as on the
litellm path (a local server's model has no price).  Cost = prompt tokens x input price +
completion tokens x output price (USD).  A model without an entry can be given one with
``--judgerel-price-per-mtok IN,OUT`` (:func:`parse_price`, :func:`price_of`).

:func:`worst_case_cost` bounds what one request can cost before it is sent: every UTF-8 byte of
its messages a prompt token (a byte-level tokenizer never makes more), plus
:data:`MESSAGE_OVERHEAD_TOKENS` per message, and its ``max_tokens`` completion tokens
(:data:`UNCAPPED_COMPLETION_TOKENS` when it sets none).
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from typing import Any

__all__ = ["token_prices", "call_cost", "parse_price", "price_of", "prompt_tokens_bound", "worst_case_cost",
           "MESSAGE_OVERHEAD_TOKENS", "UNCAPPED_COMPLETION_TOKENS"]

#: tokens a chat format adds per message (role markers, separators), counted in the prompt bound
MESSAGE_OVERHEAD_TOKENS = 8
#: completion tokens bounded for a request without ``max_tokens``
UNCAPPED_COMPLETION_TOKENS = 4096

_FILE = "model_prices_and_context_window_backup.json"
_lock = threading.Lock()


class _PriceTable:
    """The table, loaded on the first priced lookup; per-model answers remembered."""

    def __init__(self) -> None:
        self._table: dict[str, Any] | None = None
        self._memo: dict[str, tuple[float, float] | None] = {}

    def _load(self) -> dict[str, Any]:
        if self._table is None:
            with _lock:
                if self._table is None:
                    table: dict[str, Any] = {}
                    spec = importlib.util.find_spec("litellm")
                    for folder in (spec.submodule_search_locations or []) if spec else []:
                        path = os.path.join(folder, _FILE)
                        if os.path.isfile(path):
                            try:
                                with open(path, encoding="utf-8") as fh:
                                    table = json.load(fh)
                            except (OSError, ValueError):
                                table = {}
                            break
                    self._table = table
        return self._table

    def prices(self, model: str) -> tuple[float, float] | None:
        if model in self._memo:
            return self._memo[model]
        provider, _, name = model.partition("/")
        table = self._load()
        found = None
        for key in (model, name):
            entry = table.get(key)
            if isinstance(entry, dict) and (key == model or entry.get("litellm_provider") == provider):
                found = entry
                break
        prices = None
        if found is not None:
            try:
                prices = (float(found.get("input_cost_per_token") or 0.0),
                          float(found.get("output_cost_per_token") or 0.0))
            except (TypeError, ValueError):
                prices = None
        self._memo[model] = prices
        return prices


_TABLE = _PriceTable()


def token_prices(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token of ``model`` (``provider/name``) in litellm's table, or None."""
    return _TABLE.prices(model)


def call_cost(model: str, usage: dict[str, int]) -> float:
    """USD cost of one call of ``model`` with token ``usage`` (0.0 for a model without a price)."""
    prices = token_prices(model)
    if prices is None:
        return 0.0
    return usage.get("prompt_tokens", 0) * prices[0] + usage.get("completion_tokens", 0) * prices[1]


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``"IN,OUT"`` (USD per million prompt and completion tokens) as USD per token; None for
    None; ValueError naming the expected form otherwise."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 2 or not all(v >= 0 and v != float("inf") for v in values):
        raise ValueError(f"{text!r} is not IN,OUT: two numbers >= 0, USD per million prompt and completion "
                         "tokens (e.g. 0.15,0.60)")
    return values[0] / 1e6, values[1] / 1e6


def price_of(model: str, fallback: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """(input, output) USD per token of ``model``: litellm's table, else ``fallback`` (the
    ``--judgerel-price-per-mtok`` price), else None (unpriced)."""
    found = token_prices(model)
    return found if found is not None else fallback


def prompt_tokens_bound(request: Any) -> int:
    """At most this many prompt tokens for ``request`` (module docstring)."""
    total = 0
    for message in request.messages:
        content = message.get("content")
        total += len((content if isinstance(content, str) else str(content)).encode("utf-8"))
        total += MESSAGE_OVERHEAD_TOKENS
    return total + MESSAGE_OVERHEAD_TOKENS


def worst_case_cost(request: Any, price: tuple[float, float]) -> float:
    """The most one attempt of ``request`` can cost at ``price`` (USD per prompt, completion token)."""
    completion = int(request.max_tokens or UNCAPPED_COMPLETION_TOKENS)
    return prompt_tokens_bound(request) * price[0] + completion * price[1]

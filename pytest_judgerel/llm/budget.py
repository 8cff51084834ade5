"""The session's budget: at most ``max_calls`` upstream calls and ``max_cost`` USD.

Each upstream call reserves its place before anything is sent (:meth:`Budget.reserve`); the call
that would pass ``max_calls``, or any call once the spent cost reached ``max_cost``, raises
:class:`~pytest_judgerel.errors.BudgetExceededError` and marks the budget exhausted, so every later
call of the session fails at once with the same message.  Calls already in flight finish (their
answers are cached); the cost cap can therefore be passed by the cost of the calls in flight.

Shared by the processes of one run (pytest-xdist workers): with a ``run_id`` the counters live in
``<cache_dir>/budget/<run_id>.json``, read and written under an exclusive file lock (``filelock``),
so the workers draw on one budget, not an even split.  Without one (a client built by hand) the
counters are this client's.  The cache directory must then be shared by the workers, as it is by
default (a Redis cache backend still keeps this small file in ``cache_dir``).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from pytest_judgerel.errors import BudgetExceededError

__all__ = ["Budget", "read_budget", "budget_file"]


def budget_file(cache_dir: str | os.PathLike[str], run_id: str) -> Path:
    """Where the run's shared budget counters live."""
    return Path(cache_dir) / "budget" / f"{run_id}.json"


def read_budget(cache_dir: str | os.PathLike[str], run_id: str | None) -> dict[str, Any] | None:
    """The run's budget state (``max_calls``, ``max_cost``, ``calls``, ``cost``, ``exceeded``: the
    message, or None), or None when no budget was used."""
    if not run_id:
        return None
    try:
        data = json.loads(budget_file(cache_dir, run_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class Budget:
    """Counters of upstream calls and cost against ``max_calls`` / ``max_cost`` (module docstring)."""

    def __init__(self, max_calls: int | None, max_cost: float | None, cache_dir: Any = None,
                 run_id: str | None = None) -> None:
        self.max_calls = max_calls
        self.max_cost = max_cost
        self._path = budget_file(cache_dir, run_id) if cache_dir is not None and run_id else None
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"max_calls": max_calls, "max_cost": max_cost, "calls": 0, "cost": 0.0,
                                       "exceeded": None}
        self.exceeded: str | None = None  # the message, once exhausted (never reset in this process)

    def _update(self, change: Any) -> dict[str, Any]:
        """Apply ``change(state)`` to the shared state under the lock; returns the new state."""
        with self._lock:
            if self._path is None:
                change(self._state)
                return dict(self._state)
            from filelock import FileLock

            self._path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self._path) + ".lock"):
                try:
                    state = json.loads(self._path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    state = dict(self._state)
                change(state)
                self._path.write_text(json.dumps(state), encoding="utf-8")
            return state

    def _message(self, state: dict[str, Any]) -> str | None:
        if self.max_calls is not None and state["calls"] >= self.max_calls:
            return (f"budget exceeded: --judgerel-max-calls {self.max_calls} reached ({state['calls']} upstream "
                    "calls made); this session sends no further model calls (answers received are cached)")
        if self.max_cost is not None and state["cost"] >= self.max_cost:
            return (f"budget exceeded: --judgerel-max-cost ${self.max_cost:g} reached (${state['cost']:.4f} "
                    "spent); this session sends no further model calls (answers received are cached)")
        return None

    def reserve(self, request: Any) -> None:
        """Count one upstream call for ``request``, or raise :class:`BudgetExceededError` (nothing sent)."""
        if self.exceeded is None:
            def take(state: dict[str, Any]) -> None:
                if state.get("exceeded") is None:
                    state["exceeded"] = self._message(state)
                if state["exceeded"] is None:
                    state["calls"] += 1

            state = self._update(take)
            self.exceeded = state["exceeded"]
        if self.exceeded is not None:
            raise BudgetExceededError(f"{self.exceeded} (test {request.test_name}, model {request.model!r})")

    def spend(self, cost: float) -> None:
        """Add the cost of an answered call."""
        if cost:
            def add(state: dict[str, Any]) -> None:
                state["cost"] = float(state["cost"]) + float(cost)

            self._update(add)

    def state(self) -> dict[str, Any]:
        """The current counters (shared ones re-read)."""
        return self._update(lambda state: None)

"""The session's budget: at most ``max_calls`` upstream requests and ``max_cost`` USD.

Every request sent upstream (each attempt, retries included) first reserves its place
(:meth:`Budget.reserve`): one request against ``max_calls`` and, under a cost cap, its worst-case
cost (:func:`~pytest_judgerel.llm.prices.worst_case_cost`) against ``max_cost``.  The attempt's
reservation is then settled with its real cost (0 for a failed attempt: nothing answered is
billed by the providers this counts).  So the spent cost never passes the cap while the real
usage stays within the bound; a request that fits only once the calls in flight are settled
waits for them.  The request that cannot fit (past ``max_calls``, or spent + its worst case above
``max_cost``) raises :class:`~pytest_judgerel.errors.BudgetExceededError` and marks the budget
exhausted, so every later request of the session fails at once with the same message, which
says what was spent.  In-process models (``scripted/``, ``local/``) are never counted.  Under a
cost cap, a model without a price is a :class:`~pytest_judgerel.errors.ConfigError` naming it
(give one with ``--judgerel-price-per-mtok``).

Shared by the processes of one run (pytest-xdist workers): with a ``run_id`` the counters live in
``<cache_dir>/budget/<run_id>.json``, read and written under an exclusive file lock (``filelock``),
so the workers draw on one budget, not an even split; each process's reservations are kept under
its pid, and those of a process that died are dropped.  Without one (a client built by hand) the
counters are this client's.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

from pytest_judgerel.errors import BudgetExceededError, ConfigError

__all__ = ["Budget", "read_budget", "budget_file", "unpriced_cap_problem", "session_cap_problem", "WAIT_STEP",
           "WAIT_MAX"]

#: seconds between the first two looks at the shared counters while a request waits for the calls
#: in flight (growing by half each look, to at most :data:`WAIT_MAX`)
WAIT_STEP = 0.005
WAIT_MAX = 0.1


def budget_file(cache_dir: str | os.PathLike[str], run_id: str) -> Path:
    """Where the run's shared budget counters live."""
    return Path(cache_dir) / "budget" / f"{run_id}.json"


def read_budget(cache_dir: str | os.PathLike[str], run_id: str | None) -> dict[str, Any] | None:
    """The run's budget state (``max_calls``, ``max_cost``, ``calls``: requests sent, retries
    included, ``cost``: USD spent, ``exceeded``: the message, or None), or None when no budget
    was used."""
    if not run_id:
        return None
    try:
        data = json.loads(budget_file(cache_dir, run_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data.pop("reserved", None)  # the reservations in flight are bookkeeping, not the bill
    return data


def unpriced_cap_problem(model: str, max_cost: float | None, fallback: Any = None) -> str | None:
    """Why ``--judgerel-max-cost`` cannot bind calls of ``model`` (it has no price in litellm's
    table and ``fallback``, the ``--judgerel-price-per-mtok`` price, is None), or None."""
    from pytest_judgerel.llm.endpoint import is_in_process
    from pytest_judgerel.llm.prices import price_of

    if max_cost is None or is_in_process(model) or price_of(model, fallback) is not None:
        return None
    return (f"--judgerel-max-cost ${max_cost:g} cannot bind calls of model {model!r}: it has no price in "
            "litellm's table; give its price with --judgerel-price-per-mtok IN,OUT (USD per million prompt "
            "and completion tokens, e.g. 0.15,0.60; 0,0 for a free server)")


def session_cap_problem(model: str, settings: Any) -> str | None:
    """:func:`unpriced_cap_problem` for the session's model under ``settings``."""
    from pytest_judgerel.llm.prices import parse_price

    return unpriced_cap_problem(model, settings.max_cost, parse_price(settings.price_per_mtok))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class Budget:
    """Counters of upstream requests and cost against ``max_calls`` / ``max_cost`` (module docstring)."""

    def __init__(self, max_calls: int | None, max_cost: float | None, cache_dir: Any = None,
                 run_id: str | None = None, price: tuple[float, float] | None = None) -> None:
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.price = price  # the --judgerel-price-per-mtok price of unpriced models (USD per token)
        self._path = budget_file(cache_dir, run_id) if cache_dir is not None and run_id else None
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"max_calls": max_calls, "max_cost": max_cost, "calls": 0, "cost": 0.0,
                                       "reserved": {}, "exceeded": None}
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
                    state = json.loads(json.dumps(self._state))
                state.setdefault("reserved", {})
                change(state)
                self._path.write_text(json.dumps(state), encoding="utf-8")
            return state

    def worst_cost(self, request: Any) -> float:
        """The most one attempt of ``request`` can cost (0 without a cost cap); a ConfigError
        for an unpriced model under a cost cap."""
        if self.max_cost is None:
            return 0.0
        from pytest_judgerel.llm.prices import price_of, worst_case_cost

        price = price_of(request.model, self.price)
        if price is None:
            raise ConfigError(f"{unpriced_cap_problem(request.model, self.max_cost)} (test {request.test_name})")
        return worst_case_cost(request, price)

    def _refusal(self, state: dict[str, Any], worst: float) -> str | None:
        """Why a request of worst-case cost ``worst`` can never be sent, or None."""
        spent = (f"{state['calls']} upstream requests sent (retries included), ${float(state['cost']):.6f} "
                 "spent")
        stop = "; this session sends no further model calls (every answer received is cached)"
        if self.max_calls is not None and state["calls"] >= self.max_calls:
            return f"budget exceeded: --judgerel-max-calls {self.max_calls} reached ({spent}){stop}"
        if self.max_cost is not None and float(state["cost"]) + worst > self.max_cost:
            return (f"budget exceeded: --judgerel-max-cost ${self.max_cost:g} reached ({spent}; the next request "
                    f"could cost up to ${worst:.6f}){stop}")
        return None

    async def reserve(self, request: Any, worst: float) -> bool:
        """Reserve one request of worst-case cost ``worst`` (waiting while only the reservations in
        flight keep it from fitting); True once reserved, else :class:`BudgetExceededError`."""
        me = str(os.getpid())
        delay = WAIT_STEP
        while self.exceeded is None:
            outcome: dict[str, Any] = {}

            def take(state: dict[str, Any]) -> None:
                reserved = state["reserved"]
                for pid in [p for p in reserved if p != me and not _alive(int(p))]:
                    del reserved[pid]  # a process that died holds nothing any more
                if state.get("exceeded") is None:
                    state["exceeded"] = self._refusal(state, worst)
                if state["exceeded"] is not None:
                    return
                held = sum(float(v) for v in reserved.values())
                if self.max_cost is not None and float(state["cost"]) + held + worst > self.max_cost:
                    outcome["wait"] = True
                    return
                state["calls"] += 1
                reserved[me] = float(reserved.get(me, 0.0)) + worst
                outcome["taken"] = True

            state = self._update(take)
            self.exceeded = state["exceeded"]
            if outcome.get("taken"):
                return True
            if outcome.get("wait"):
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, WAIT_MAX)
        raise BudgetExceededError(f"{self.exceeded} (test {request.test_name}, model {request.model!r})")

    def settle(self, reserved: float, cost: float) -> None:
        """Release a reservation of ``reserved`` USD and add the attempt's real ``cost``."""
        if not reserved and not cost:
            return
        me = str(os.getpid())

        def add(state: dict[str, Any]) -> None:
            held = state["reserved"]
            left = float(held.get(me, 0.0)) - float(reserved)
            if left > 1e-12:
                held[me] = left
            else:
                held.pop(me, None)
            state["cost"] = float(state["cost"]) + float(cost)

        self._update(add)

    def state(self) -> dict[str, Any]:
        """The current counters (shared ones re-read)."""
        return self._update(lambda state: None)

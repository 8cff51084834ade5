"""cProfile on the caller thread and the LLM loop thread (thread CPU, not waits)."""

from __future__ import annotations

import time
from typing import Any


# ---------------------------------------------------------------------- profiling
def start_thread_profilers() -> tuple[Any, Any]:
    """cProfile on the caller thread and on the LLM loop thread, both timing thread CPU (not waits)."""
    import cProfile

    from pytest_judgerel.llm.runtime import runtime as _runtime

    profilers = (cProfile.Profile(time.thread_time), cProfile.Profile(time.thread_time))
    _runtime().loop.call_soon_threadsafe(profilers[1].enable)
    profilers[0].enable()
    return profilers


def stop_thread_profilers(profilers: tuple[Any, Any]) -> None:
    from pytest_judgerel.llm.runtime import runtime as _runtime

    profilers[0].disable()
    _runtime().loop.call_soon_threadsafe(profilers[1].disable)
    time.sleep(0.2)  # let the loop thread run the disable

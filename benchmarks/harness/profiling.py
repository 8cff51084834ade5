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


def print_thread_profiles(profilers: tuple[Any, Any], names: tuple[str, str], calls: int, top: int = 25) -> None:
    """Per thread: its CPU per call, the project's functions by cumulative CPU, then every function
    by own time (the top ``top`` rows of each)."""
    import io
    import pstats

    for name, prof in zip(names, profilers):
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        total = sum(v[2] for v in st.stats.values())
        print(f"---- profile: {name}: {total:.2f} s thread CPU ({total / calls * 1000:.3f} ms/call); "
              "pytest_judgerel functions by cumulative CPU:")
        ours = sorted(((v[3], k) for k, v in st.stats.items() if "pytest_judgerel" in k[0]), reverse=True)[:top]
        for cum, (fn, line, func) in ours:
            print(f"  {cum:8.2f} s {cum / calls * 1000:6.3f} ms/call  {fn.split('pytest_judgerel/')[-1]}:{line}({func})")
        st.sort_stats("tottime").print_stats(top)
        print("  by own time:\n" + buf.getvalue()[:6000])

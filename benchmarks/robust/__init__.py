"""Reliability probes shared by ``tests/test_robust_*.py`` and the benchmark scripts.

Each probe runs a real code path of pytest-judgerel (parsers, Judge + LLMClient against the
fake OpenAI-compatible server, pytest-xdist runs, report writers, assertion helpers) and
returns a result dataclass with the figures the tests assert and the scripts print:

* ``corpus``: :func:`~.corpus.malformed_corpus` / :func:`~.corpus.run_corpus`, malformed judge
  replies through every parser;
* ``faults``: :func:`~.faults.fault_injection_run` (a server failing 20% of requests) and
  :func:`~.faults.sigkill_resume_run` (SIGKILL a judging subprocess midway, run again);
* ``projects``: :func:`~.projects.xdist_shared_cache_run` (8 xdist workers over one cache) and
  :func:`~.projects.secrets_run` (grep every written file for the API keys in use);
* ``hostile_stats``: :func:`~.hostile_stats.hostile_stats_run`, NaN/inf/huge/constant input
  through the assertion helpers;
* ``servers`` and ``profiling``: the fake server in its own process, the bare-litellm CPU floor,
  thread-CPU profilers for the benchmarks.

The tests import these as ``from benchmarks.robust import corpus`` (the project root is on
pytest's ``pythonpath``); the scripts run as ``python -m benchmarks.<script>`` from the root.
"""

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

The tests import these as ``from robust import corpus`` (pytest puts ``tests/`` on the path, as for
every helper module there); ``python tests/robust/figures.py`` prints their figures.
"""

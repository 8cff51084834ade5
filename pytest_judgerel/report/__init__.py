"""Reports of pytest-judgerel: the session report dict (schema in docs/reports.md),
terminal summary, JSON, HTML, baselines and run history."""

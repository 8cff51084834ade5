"""Reports of pytest-judgerel (stdlib only; see docs/reports.md).

``build`` assembles the session report dict (``schema`` holds its versioned JSON schema and
a validator), ``gate`` writes the outputs and decides the exit status,
``terminal`` / ``html`` / ``junit`` render it, ``judge_drift`` reads its drift-anchors block back,
``baseline`` compares with and updates a committed baseline, ``history`` keeps numbered runs,
``merge`` joins CI shards, ``cli`` holds the ``judgerel report ...`` / ``judgerel history ...``
commands.
"""

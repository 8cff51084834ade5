"""Gates: the assertion helpers.  Each computes a statistic, writes a metric record for the report
and fails the test with a full explanation when the statistic misses its threshold.  The public
names are exported by :mod:`pytest_judgerel`.

Gate modules, one per thing gated:

* :mod:`~pytest_judgerel.gates.reliability`: ICC, consistency across scales, judge-human agreement;
* :mod:`~pytest_judgerel.gates.bias`: the bias probes (position, length, self-preference);
* :mod:`~pytest_judgerel.gates.pass_rate`: the judge-error-corrected pass rate;
* :mod:`~pytest_judgerel.gates.injection`: the injection probe (runs it on a judge, then gates it);
* :mod:`~pytest_judgerel.gates.human_mean`: human-scale means (prediction-powered inference).

What they share (a gate module imports these, never another gate module):

* :mod:`~pytest_judgerel.gates.common`: argument checks, the parse-failure gate, not-computed and
  the fields every record starts with;
* :mod:`~pytest_judgerel.gates.conclusion`: ``finish``, where every gate ends (record,
  report-only, require-stable, raise), and ``JudgeReliabilityFailure``;
* :mod:`~pytest_judgerel.gates.stability`: ``p_pass`` and ``repeats_needed`` for a record;
* :mod:`~pytest_judgerel.gates.sequential`: the one call a gate that draws sequentially makes at
  its start (``settle_icc``, ``settle_pass_rate``, ``settle_human_mean``) and its ``SequentialRun``.

``docs/architecture.md`` shows how to write a new gate.
"""

"""Gates: the assertion helpers (reliability, agreement, probes, human-scale means), what every
gate adds to its record (verdict stability, repeats needed) and the one conclusion they end in.
The public names are exported by :mod:`pytest_judgerel`.

The modules, flat (a gate module imports these, never another gate module):

* :mod:`~pytest_judgerel.gates.common`: what every gate shares (argument checks, the
  parse-failure gate, not-computed, the record's common fields, :func:`~.common.finish`);
* :mod:`~pytest_judgerel.gates.stability`: ``p_pass`` and ``repeats_needed`` for a record;
* :mod:`~pytest_judgerel.gates.conclusion`: record, report-only, require-stable, raise (reached
  only through ``finish``); ``parse_failure_limit`` and ``JudgeReliabilityFailure``.
* :mod:`~pytest_judgerel.gates.sequential`: the one call a gate that draws sequentially makes at
  its start (``settle_icc``, ``settle_pass_rate``, ``settle_human_mean``) and its ``SequentialRun``.

A new gate module (``gates/my_gate.py``):

1. Declare the record of its kind in :mod:`pytest_judgerel.session.recording`: a TypedDict
   extending ``MetricRecord`` with the kind's own keys (JSON types; a computed number is
   ``float | None``), added to ``RECORD_TYPES`` under its ``kind``; add the new keys to the
   report schema's ``record`` (``report/schema.py``; ``tests/test_records.py`` checks both agree).
2. Write the gate::

       from .common import UNIT_RANGE, Summary, check_threshold, check_use, fail_unparsed, finish, \\
           gate_fields, head, not_computed, parse_failure_lines
       from .stability import attach_stability, mean_gate_stability
       from ..session.recording import MyGateRecord

       def assert_my_gate(result, min_x, *, use="estimate", max_parse_failures=None, label=None):
           check_threshold(min_x, "min_x", UNIT_RANGE)           # bad arguments: ValueError
           use = check_use(use, ("estimate", "ci_low"))
           failures = parse_failure_lines(result, max_parse_failures)
           if failures:                                          # too many unparseable replies
               return fail_unparsed(result, failures, "my_gate", "my statistic", min_x, label)
           try:
               stat = compute(result)
           except ReliabilityError as exc:                       # e.g. a constant judge
               return not_computed(result, "my_gate", "my statistic", min_x, label, exc)
           tested = stat.value if use == "estimate" else stat.ci_low
           rec: MyGateRecord = {                                 # mypy checks every key
               **gate_fields("my_gate", "my statistic", label, Summary(stat.value, stat.ci_low, stat.ci_high,
                             stat.n), min_x, "min", result),
               "use": use, "my_key": stat.extra}
           attach_stability(rec, mean_gate_stability(per_item, min_x, "min", name="my statistic"))
           rec["passed"] = ok = tested >= min_x
           return finish(rec, stat, None if ok else [f"{head(label)}my statistic = ...", "  why"])

   ``finish`` checks the record against its kind's type at run time, then concludes: the gate
   returns ``stat`` when it passes (or in report-only mode) and raises
   ``JudgeReliabilityFailure`` otherwise.
3. A gate with several records (several statistics, or the looks of a sequential gate) hands
   them to one ``finish([rec1, rec2], result, failure)``: each carries its own ``passed``; the
   failure message covers the gate.  A sequential gate that decides at an interim look ends
   there with ``finish``; the records of the looks before it can go in the same call.
4. Export the public name in ``pytest_judgerel/__init__.py`` and list the module in
   ``docs/architecture.md``; ``tests/test_gate_conclusion.py`` checks every module of ``gates/``
   but the three above ends in ``finish`` and imports no other gate module.
"""

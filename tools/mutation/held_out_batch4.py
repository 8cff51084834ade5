"""Held-out bugs, batch 4: 32 fresh hand-written plausible bugs of the nine kinds of
:mod:`held_out_mutants` (wire, retry, cache, prices, gates, settings, study, tost, p_pass), kept
apart from its batches 1-3 so that they measure the test suite on bugs nobody tuned a test to.

They were written from the package code only (the modules listed in ``held_out_mutants.MODULES``
for each kind), before any test was looked at for them and without running a test: no file
under ``tests/`` was opened or searched while writing them.  None repeats a bug of batches 1-3
or sits on a line one of them changes, and no two of them share a line.  Each entry of
:data:`BATCH4` is a plain tuple ``(id, kind, file, old, new, what)``: ``file`` relative to
``pytest_judgerel/``, ``old`` an exact snippet that occurs exactly once in that file, ``new``
its replacement, ``what`` the behaviour that changes (each was reasoned through to be
observable: no dead code, no message wording, no equivalent mutant).

    python tools/mutation/held_out_batch4.py     # every snippet occurs once, the planted file compiles

To measure them, turn each tuple into ``bug(id, 4, kind, file, old, new, what)`` of
``held_out_mutants.py``.
"""

from __future__ import annotations

BATCH4: list[tuple[str, str, str, str, str, str]] = [
    # ------------------------------------------------------------------ wire
    ("W20", "wire", "llm/wire.py",
     "_REWRITTEN.match(name)", "_REWRITTEN.match(model)",
     "auto routes OpenAI's reasoning models (openai/o1-mini, openai/gpt-5) to the HTTP fast path: the "
     "pattern is matched against the name with its provider prefix, which never matches"),
    ("W21", "wire", "llm/wire.py",
     "if len(call.api_key) >= 8:", "if len(call.api_key) > 8:",
     "a key of exactly 8 characters that the server echoes in its error body is printed in the failure"),
    ("W22", "wire", "llm/wire.py",
     "system_fingerprint=str(fingerprint) if fingerprint else None)",
     "system_fingerprint=str(fingerprint))",
     "a reply without a system_fingerprint records the string 'None' instead of None (cached, and "
     "compared as a fingerprint)"),
    ("W23", "wire", "llm/http_transport.py",
     "(api_key != api_key.strip() or not api_key.isprintable())",
     "(not api_key.isprintable())",
     "a key with a leading or trailing space is sent instead of refused before sending (httpx or the "
     "server then fails, with the key in httpx's message)"),
    # ------------------------------------------------------------------ retry
    ("R20", "retry", "llm/retry.py",
     "retryable = status in _RETRYABLE_STATUS or status >= 500",
     "retryable = status in _RETRYABLE_STATUS",
     "a 5xx outside the listed ones (501, 505, 507, 530...) fails at once instead of being retried"),
    ("R21", "retry", "llm/retry.py",
     "    if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):\n"
     "        return FailureInfo(False, None, message, name)\n",
     "",
     "a programming error in a call (ValueError, TypeError, KeyError, AttributeError) is retried "
     "max_attempts times instead of failing at once"),
    ("R22", "retry", "llm/retry.py",
     "_retry_after(exc) if retryable else None)", "_retry_after(exc) if status == 429 else None)",
     "Retry-After is read on a 429 only: a 503 (or 408, 502...) asking to wait is retried on the "
     "jittered backoff"),
    # ------------------------------------------------------------------ cache
    ("C20", "cache", "llm/write_behind.py",
     "            self._timer.cancel()\n            self._timer = None\n        entries, self._entries",
     "            self._timer.cancel()\n        entries, self._entries",
     "after the first flush the timer handle is never cleared, so no later answer schedules a flush: "
     "answers wait (and other processes wait on their key locks) until `limit` answers or the batch end"),
    ("C21", "cache", "llm/client.py",
     "if isinstance(result, LLMResponse) and not result.cached:",
     "if isinstance(result, LLMResponse) and result.cached:",
     "an answer that could not be stored is returned as a success (its storage error surfaces only as "
     "an unclaimed warning at close)"),
    ("C22", "cache", "llm/client.py",
     '"timestamp": response.timestamp, ', "",
     "a stored answer loses its timestamp: in refresh mode an answer stored earlier in this very "
     "session counts as stale and is asked upstream again, and cached answers report timestamp 0"),
    ("C23", "cache", "llm/client.py",
     "        if miss:\n            self._planned[key] = response\n", "",
     "a dry run forgets the keys it planned: an identical request asked twice is planned (and "
     "counted, tokens and cost) as two calls instead of one call and a hit"),
    # ------------------------------------------------------------------ prices
    ("P20", "prices", "llm/prices.py",
     'if isinstance(entry, dict) and (key == model or entry.get("litellm_provider") == provider):',
     "if isinstance(entry, dict):",
     "a model is priced by any provider's entry of the same bare name: hosted_vllm/gpt-4o on your own "
     "server is charged OpenAI's price instead of 0"),
    ("P21", "prices", "llm/upstream.py",
     'stats.completion_tokens += usage["completion_tokens"]',
     'stats.completion_tokens += usage["prompt_tokens"]',
     "the client's completion-token counter adds the prompt tokens"),
    ("P22", "prices", "llm/upstream.py",
     'stats.prompt_tokens += usage["prompt_tokens"]',
     'stats.prompt_tokens += usage["total_tokens"]',
     "the client's prompt-token counter adds the total tokens (completion tokens counted twice in the bill)"),
    # ------------------------------------------------------------------ gates
    ("G20", "gates", "gates/conclusion.py",
     'failed = [rec for rec in records if not rec.get("passed")] or list(records)',
     "failed = list(records)",
     "in report-only mode every record of a failing gate is marked report_only, its passing records too"),
    ("G21", "gates", "gates/common.py",
     "if not low <= value <= high:", "if not low < value < high:",
     "a threshold on the edge of its range (max_nmae=0, a share of 1.0, min_icc=1) is refused as "
     "outside the range"),
    ("G22", "gates", "gates/common.py",
     "or not 0 < alpha < 0.5:", "or not 0 < alpha <= 0.5:",
     "a gate accepts alpha=0.5 (a TOST at level 0.5, a 0% interval) instead of refusing it"),
    ("G23", "gates", "gates/common.py",
     '"n": getattr(source, "n_items", None), "k": getattr(source, "n_raters", None)',
     '"n": getattr(source, "n_raters", None), "k": getattr(source, "n_items", None)',
     "the record of a gate that computed nothing (unparseable replies, statistic undefined) has n and k "
     "swapped"),
    # ------------------------------------------------------------------ settings
    ("S20", "settings", "llm/settings.py",
     "None if low <= v <= high else", "None if low <= v < high else",
     "a value on the upper edge of its range (--judge-temperature=2, --judgerel-max-nmae-rise=1) is "
     "refused"),
    ("S21", "settings", "llm/settings.py",
     "if o.type is int and (isinstance(value, bool) or not isinstance(value, int)):",
     "if o.type is int and not isinstance(value, int):",
     "an int setting given True or False by hand (max_attempts=True) is accepted as 1 or 0"),
    ("S22", "settings", "session/context.py",
     "return (os.getcwd(),) + tuple(sorted(", "return tuple(sorted(",
     "outside pytest, the environment's context is reused after a change of working directory: its "
     "relative cache directory stays anchored at the old one"),
    # ------------------------------------------------------------------ study
    ("Y20", "study", "study/reproduce.py",
     'bench, model = (who, PANEL_MEAN) if table == "4a" else (None, who)',
     'bench, model = (who, PANEL_MEAN) if table == "4b" else (None, who)',
     "Tables 4a and 4b are filled from each other's rows (4a per judge pooled, 4b the panel mean per "
     "benchmark): their cells come out None"),
    ("Y21", "study", "study/release.py",
     "if not 0 <= score <= hi:", "if not 0 <= score < hi:",
     "a human score at the top of its scale (5, 10, 100) is refused as outside the scale"),
    ("Y22", "study", "study/analysis.py",
     "return (r.item_means() - r.scale.low) / r.scale.range",
     "return (r.item_means() - r.scale.low) / r.scale.high",
     "human means are put on [0, 1] by dividing by the scale's top instead of its range: wrong for a "
     "scale that does not start at 0 (1-5), so nMAE and the human-judge ICC rows change"),
    # ------------------------------------------------------------------ tost
    ("T20", "tost", "stats/bias.py",
     "int(math.floor(_COCHRAN_FACTOR * skewness * skewness)) + 1",
     "int(math.floor(_COCHRAN_FACTOR * abs(skewness))) + 1",
     "Cochran's rule taken as n > 25 |g| instead of 25 g^2: strongly skewed differences (|g| > 1) pass "
     "as trusted with too few items, mildly skewed ones are made inconclusive"),
    ("T21", "tost", "stats/bias.py",
     "    sd = float(d.std(ddof=1))\n    df = n - 1",
     "    sd = float(d.std())\n    df = n - 1",
     "the paired shift's sd uses ddof=0: the interval is too narrow and p too small"),
    ("T22", "tost", "stats/bias.py",
     "1.0 if mean <= 0 else 0.0", "1.0 if mean < 0 else 0.0",
     "a paired shift of exactly 0 on every item reports p_greater = 0 (a significant upward shift)"),
    ("T23", "tost", "stats/bias.py",
     "lower, lo = max(lower, b_lo), min(lo, b_low)", "lower, lo = max(lower, b_lo), max(lo, b_low)",
     "the robust two-sided interval's lower bound takes the less conservative of Hall's and the "
     "bootstrap's (it no longer agrees with the p value)"),
    # ------------------------------------------------------------------ p_pass
    ("Q20", "p_pass", "stats/stability.py",
     "return UNSTABLE_BAND[0] < self.p_pass < UNSTABLE_BAND[1]",
     "return UNSTABLE_BAND[0] < self.p_pass <= UNSTABLE_BAND[1]",
     "p_pass = 0.95 exactly counts as unstable (require-stable fails a pass it should keep)"),
    ("Q21", "p_pass", "stats/stability.py",
     "if np.unique(x).size <= 5:", "if np.unique(x).size < 5:",
     "ratings on exactly 5 levels (a 1-5 scale) are not marked rough by the one-way model"),
    ("Q22", "p_pass", "stats/stability.py",
     "lam = np.where(sa2 > 0, sa2 / (sa2 + se2 / k), 0.0)",
     "lam = np.where(sa2 > 0, sa2 / (sa2 + se2), 0.0)",
     "the same-items rerun shrinks each item's effect by the single-rating ICC instead of the "
     "reliability of its k-repeat mean: p_pass of an ICC over repeats moves"),
    ("Q23", "p_pass", "gates/stability.py",
     "np.minimum(1.0, 2 * tail)", "np.minimum(1.0, tail)",
     "the position gate's p_pass resamples a one-sided sign test while the gate tests two-sided"),
]


def check() -> list[str]:
    """The problems of :data:`BATCH4`: an ``old`` that does not occur exactly once, a planted file
    that does not compile, a file outside its kind's modules, a repeated id or line."""
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    package = here.parents[1] / "pytest_judgerel"
    sys.path.insert(0, str(here))
    try:
        from held_out_mutants import BUGS, MODULES
    finally:
        sys.path.remove(str(here))
    earlier = [b for b in BUGS if b.batch < 4]  # held_out_mutants appends BATCH4 to its BUGS
    problems = []
    ids = [b[0] for b in BATCH4]
    for dup in sorted({i for i in ids if ids.count(i) > 1} | ({b.id for b in earlier} & set(ids))):
        problems.append(f"{dup}: id used twice")
    lines: dict[tuple[str, int], str] = {}
    for b in earlier:  # the lines batches 1-3 change (where their original text is still there)
        text = (package.parent / b.file).read_text(encoding="utf-8")
        for old, _ in b.edits:
            if text.count(old) == 1:
                start = text.count("\n", 0, text.index(old)) + 1
                for line in range(start, start + old.count("\n") + 1):
                    lines[(b.file.removeprefix("pytest_judgerel/"), line)] = b.id
    for id_, kind, file, old, new, what in BATCH4:
        if file not in MODULES.get(kind, []):
            problems.append(f"{id_}: {file} is not among the {kind} modules {MODULES.get(kind)}")
        path = package / file
        text = path.read_text(encoding="utf-8")
        count = text.count(old)
        if count != 1:
            problems.append(f"{id_}: the original occurs {count} times in {file}: {old[:60]!r}")
            continue
        if old == new:
            problems.append(f"{id_}: replacement equals the original")
        start = text.count("\n", 0, text.index(old)) + 1
        for line in range(start, start + old.count("\n") + 1):
            other = lines.setdefault((file, line), id_)
            if other != id_:
                problems.append(f"{id_}: shares line {line} of {file} with {other}")
        try:
            compile(text.replace(old, new), str(path), "exec")
        except SyntaxError as exc:
            problems.append(f"{id_}: the planted {file} does not compile: {exc}")
    return problems


if __name__ == "__main__":
    found = check()
    for p in found:
        print(p)
    print(f"{len(BATCH4)} bugs: " + ("OK" if not found else f"{len(found)} problem(s)"))
    raise SystemExit(1 if found else 0)

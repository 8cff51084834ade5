"""Judge: a template + a scale + a model -> Ratings.

A :class:`Judge` renders its template for each item, sends the calls through
the LLM layer (cache, concurrency, retries), parses every reply strictly and
returns :class:`~pytest_judgerel.ratings.Ratings` whose raters are repeated
runs (``rate``), scales (``rate_scales``), models (``rate_panel``) or
temperatures (``rate_temperatures``), the designs of seed 001 (Li et al. 2026,
sections 3-4 and Table 6).

A reply that cannot be parsed becomes a missing cell plus a recorded
:class:`ParseFailure` (optionally after one re-ask with a format reminder); it
is never turned into a score.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..session.recording import active_recorder, new_record
from ..errors import ConfigError
from ..llm.endpoint import is_constrained
from ..llm.request import LLMRequest
from ..ratings import Ratings
from ..scales import Scale, ScaleLike, number_text
from .items import JudgeFailure, item_rows
from .templates import render



@dataclass(frozen=True)
class _Call:
    item_index: int
    rater: str
    request: Any


@dataclass
class Judge:
    """An LLM judge.

    ``template`` is a shipped template name (``"stsb"``, ``"summeval"``...), a path
    or template text with ``{placeholders}``; ``axis`` selects the criterion when
    the template's output has several (JSON criteria, MindEval axes).

    The server is ``endpoint`` (see :class:`~pytest_judgerel.llm.Endpoint`); ``model``/
    ``api_base``/``api_key`` refine it.  Without an endpoint, the current session's is refined
    (:mod:`pytest_judgerel.session.context`: inside pytest the session's ``--judge-model`` and
    ``--judge-api-base``; outside, ``JUDGEREL_MODEL``/``JUDGEREL_API_BASE``, a provider's
    base-URL variable, else the embedded model); a named in-process model never inherits a
    server.  Without a ``client``, the session's (cache mode, cache folder, concurrency).
    ``temperature``, ``max_tokens``, ``reask``, ``repeats`` and ``constrain`` left at None take
    the session's (``--judge-temperature``... ; defaults 0.0, 512, True, 3, ``"auto"``).
    ``system`` replaces the template's system message; ``system=""`` removes it (no system
    message is sent), ``None`` keeps the template's.  ``constrain``: ``"auto"``
    grammar-constrains replies on the embedded model only, ``"always"`` on any
    llama.cpp-compatible server too, ``"never"`` not at all.  ``hardened=True`` renders the
    template's hardened variant (item text fenced as data, see ``docs/templates.md``): opt-in,
    and part of the fingerprint.  ``sequential`` (None: the session's
    ``--judgerel-sequential``): :meth:`rate` returns a
    :class:`~pytest_judgerel.judging.pending.PendingRatings` that a sequential gate draws in steps.
    """

    model: str | None = None
    template: Any = "stsb"
    scale: ScaleLike | None = None
    axes: Sequence[str] | None = None
    axis: str | None = None
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    top_p: float | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    namespace: str = ""
    reask: bool | None = None
    repeats: int | None = None
    scales: Sequence[ScaleLike] = ()
    constrain: str | None = None
    hardened: bool = False
    sequential: bool | None = None
    client: Any = None
    test_id: str = ""
    endpoint: Any = field(default=None, repr=False)
    _template: Any = field(init=False, repr=False, default=None)
    # the resolved values of scale, repeats and constrain, typed (set by __post_init__)
    _grading: Scale = field(init=False, repr=False, compare=False, default=None)  # type: ignore[assignment]
    _n_repeats: int = field(init=False, repr=False, compare=False, default=0)
    _mode: str = field(init=False, repr=False, compare=False, default="auto")

    def __post_init__(self) -> None:
        from ..session.context import current_context
        from ..llm.endpoint import resolve_endpoint
        from .templates import load_template

        self._template = load_template(self.template)
        ctx = current_context()
        if self.endpoint is not None:
            ep = resolve_endpoint(self.model, self.api_base, self.api_key, default=self.endpoint)
        else:
            ep = ctx.resolve(self.model, self.api_base, self.api_key)
        self.endpoint, self.model, self.api_base, self.api_key = ep, ep.model, ep.api_base, ep.api_key
        for name in ("temperature", "max_tokens", "reask", "repeats", "constrain", "sequential"):
            if getattr(self, name) is None:  # the session's setting (its default when unset)
                setattr(self, name, getattr(ctx.settings, name))
        if self.client is None:
            self.client = ctx.client
        grading = self._judge_scale(self.scale if self.scale is not None else DEFAULT_SCALE)
        self.scale = self._grading = grading
        self.scales = tuple(self._judge_scale(s) for s in self.scales) or (grading,)
        keys = list(self.axes) if self.axes else list(getattr(self._template, "keys", None) or [])
        self.axes = tuple(keys) or None
        if self.axis is None and self.axes:
            self.axis = getattr(self._template, "primary", None) or (self.axes[0] if len(self.axes) == 1 else None)
        if self.axis is not None and self.axes and self.axis not in self.axes:
            raise ConfigError(f"axis {self.axis!r} is not produced by template {self._template.name!r}; "
                              f"it scores {list(self.axes)}")
        if self.output != "number" and not self.axes:
            raise ConfigError(f"template {self._template.name!r} has output {self.output!r} but no axes/keys")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or self.repeats < 1:
            raise ConfigError(f"repeats must be an integer >= 1, got {self.repeats!r}")
        from ..llm.endpoint import check_constrain

        self._mode = check_constrain(self.constrain)
        self._n_repeats = self.repeats
        if not isinstance(self.hardened, bool):
            raise ConfigError(f"hardened must be True or False, got {self.hardened!r}")
        if self.system is not None and not isinstance(self.system, str):
            raise ConfigError(f"system must be a string (\"\" for no system message) or None, "
                              f"got {type(self.system).__name__}")

    def _judge_scale(self, spec: ScaleLike) -> Scale:
        """The scale as this template uses it: fractional when the template allows
        decimals (e.g. seed 001's SummEval and MT-Bench prompts)."""
        sc = Scale.parse(spec)
        if getattr(self._template, "fractional", False) and not sc.fractional:
            sc = Scale(sc.low, sc.high, sc.step, fractional=True, name=sc.name)
        return sc

    # ------------------------------------------------------------------ identity
    @property
    def output(self) -> str:
        return getattr(self._template, "output", "number")

    @property
    def template_name(self) -> str:
        return getattr(self._template, "name", "custom")

    @property
    def template_hash(self) -> str:
        return getattr(self._template, "hash", None) or hashlib.sha256(
            str(getattr(self._template, "text", self.template)).encode()).hexdigest()

    def fingerprint(self, scale: ScaleLike | None = None, temperature: float | None = None,
                    model: str | None = None) -> dict[str, Any]:
        """What identifies this judge for baselines: model, prompt hash, sampling parameters
        (hashed into one id by :func:`pytest_judgerel.judging.identity.judge_fingerprint`)."""
        sc = Scale.parse(scale) if scale is not None else self._grading
        fp = {
            "model": model or self.model,
            "template": self.template_name,
            "template_hash": self.template_hash[:16],
            "system_hash": hashlib.sha256(self.system.encode()).hexdigest()[:16] if self.system is not None else None,
            "scale": sc.name,
            "axis": self.axis,
            "temperature": self.temperature if temperature is None else temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "api_base": self.api_base,
        }
        if self.hardened:  # absent when off, so baselines of judges that are not hardened keep matching
            fp["hardened"] = True
        mdl = fp["model"] if isinstance(fp["model"], str) else ""
        if self._constrained(mdl):
            # a grammar-constrained judge is a different judge: its grammar enters the fingerprint
            grammar = grammar_for(self.output, sc, self.axes)
            fp["grammar_hash"] = hashlib.sha256(grammar.encode()).hexdigest()[:16]
        return fp

    def _constrained(self, model: str) -> bool:
        """Whether replies of ``model`` are grammar-constrained (see ``constrain``)."""
        return is_constrained(self._mode, model)

    def with_(self, **changes: Any) -> "Judge":
        """A copy with some settings changed (e.g. ``judge.with_(model="x")``)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ rating
    def rate(self, items: Any, repeats: int | None = None, *, scale: ScaleLike | None = None,
             aggregate: str | None = None) -> Ratings:
        """Rate every item ``repeats`` times: items x repeats (raters ``r0``, ``r1``...).

        Repeats are distinct samples (the sample index is part of the cache key),
        so their agreement is the judge's test-retest reliability.  ``aggregate="mean"``
        returns one column instead, the mean of each item's repeats: the averaged judge whose
        reliability is the Spearman-Brown step-up of the single-sample ICC (an ICC gate's
        ``repeats_needed`` says how many repeats reach a threshold).  Cells whose every repeat
        failed to parse stay missing; the failures are kept.  In sequential mode (``sequential``)
        the ratings are pending (:mod:`pytest_judgerel.judging.pending`): a sequential gate draws
        them in steps, and any other use draws all ``repeats`` first.
        """
        n = self._n_repeats if repeats is None else repeats
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"repeats must be an integer >= 1, got {n!r}")
        if aggregate not in (None, "mean"):
            raise ConfigError(f"aggregate must be None or 'mean', got {aggregate!r}")
        sc = self._judge_scale(scale) if scale is not None else self._grading
        rows = item_rows(items)
        if self.sequential and aggregate is None:  # drawn in steps by a sequential gate, else in full on use
            from .pending import PendingRatings

            return PendingRatings(self, rows, sc, n)
        columns = [(f"r{r}", dict(scale=sc, sample_index=r)) for r in range(n)]
        ratings = self._run(rows, columns, sc, design="repeats", repeats=n)
        if aggregate is None:
            return ratings
        with np.errstate(all="ignore"):
            means = np.nanmean(ratings.values, axis=1)  # all-NaN rows stay NaN
        return Ratings.from_array(
            means[:, None], item_ids=list(ratings.item_ids), rater_ids=[f"mean of {n}"],
            item_groups=dict(ratings.item_groups), scale=Scale(sc.low, sc.high, fractional=True, name=sc.name),
            provenance={**ratings.provenance, "design": "repeats-mean", "aggregate": "mean"},
            rater_groups={"kind": ["llm"]}, parse_failures=list(ratings.parse_failures),
        )

    def rate_scales(self, items: Any, scales: Sequence[ScaleLike] | None = None, repeats: int = 1
                    ) -> dict[str, Ratings]:
        """Rate the items on every scale: ``{scale name: items x repeats}`` (seed 001 section 4)."""
        chosen = [self._judge_scale(s) for s in (scales or self.scales)]
        if len(chosen) < 2:
            raise ConfigError(f"rate_scales needs at least two scales, got {[s.name for s in chosen]}")
        rows = item_rows(items)
        out = {}
        calls = []
        for sc in chosen:
            calls += [(sc, f"r{r}", dict(scale=sc, sample_index=r)) for r in range(repeats)]
        results = self._run_many(rows, [(f"{sc.name}/{rid}", kw) for sc, rid, kw in calls])
        for sc in chosen:
            cols = [f"{sc.name}/r{r}" for r in range(repeats)]
            out[sc.name] = self._assemble(rows, cols, results, sc, design="scales", repeats=repeats,
                                          rater_ids=[c.split("/", 1)[1] for c in cols])
        return out

    def rate_panel(self, items: Any, models: Sequence[str], repeats: int = 1) -> Ratings:
        """One rater per model (seed 001's LLM panel); with ``repeats`` > 1 each
        model's cell is the mean of its repeats."""
        if not models:
            raise ConfigError("rate_panel needs at least one model")
        if len(set(models)) != len(models):
            raise ConfigError(f"rate_panel got a model twice: {list(models)}")
        rows = item_rows(items)
        cols = [(f"{m}#r{r}", dict(model=m, sample_index=r)) for m in models for r in range(repeats)]
        results = self._run_many(rows, cols)
        mats = []
        failures: list[JudgeFailure] = []
        for m in models:
            sub = self._assemble(rows, [f"{m}#r{r}" for r in range(repeats)], results, self._grading,
                                 design="panel", model=m)
            failures += list(sub.parse_failures)
            with np.errstate(all="ignore"):
                mats.append(np.nanmean(sub.values, axis=1) if repeats > 1 else sub.values[:, 0])
        values = np.column_stack(mats)
        self._record_panel(values, models)
        return Ratings.from_array(
            values, item_ids=[r[0] for r in rows], rater_ids=list(models),
            rater_groups={"model": list(models), "kind": ["llm"] * len(models)},
            item_groups=_item_groups(rows), scale=self._grading,
            provenance={**self.fingerprint(), "model": list(models), "design": "panel", "repeats": repeats},
            parse_failures=failures,
        )

    def _record_panel(self, values: np.ndarray, models: Sequence[str]) -> None:
        """A ``judge_panel`` record: how many independent judges the panel is worth (errors against
        the leave-one-out panel mean; :func:`pytest_judgerel.stats.effective_judges`)."""
        from ..errors import ReliabilityError
        from ..stats.effective import effective_judges

        fields: dict[str, Any] = {"judge": self.fingerprint(), "models": list(models), "k": len(models),
                                  "items": int(values.shape[0]), "effective_judges": None,
                                  "mean_error_correlation": None, "reference": "panel"}
        try:
            eff = effective_judges(values)
        except ReliabilityError as exc:
            fields["error"] = str(exc)
        else:
            fields.update(effective_judges=eff.value, mean_error_correlation=eff.mean_error_correlation, n=eff.n)
        active_recorder().record(new_record("judge_panel", **fields))

    def rate_temperatures(self, items: Any, temperatures: Sequence[float], repeats: int | None = None
                          ) -> dict[float, Ratings]:
        """Rate at each temperature (seed 001 Table 6): ``{temperature: items x repeats}``."""
        n = self._n_repeats if repeats is None else repeats
        rows = item_rows(items)
        cols = [(f"t{t}/r{r}", dict(temperature=float(t), sample_index=r)) for t in temperatures for r in range(n)]
        results = self._run_many(rows, cols)
        return {
            float(t): self._assemble(rows, [f"t{t}/r{r}" for r in range(n)], results, self._grading,
                                     design="temperatures", temperature=float(t),
                                     rater_ids=[f"r{r}" for r in range(n)])
            for t in temperatures
        }

    def compare(self, items: Any, *, candidate: Any, baseline: Any, repeats: int | None = None, **kw: Any) -> Any:
        """Each pair in both orders ``repeats`` times: :func:`pytest_judgerel.judging.compare.compare`."""
        from .compare import compare
        return compare(self, items, candidate=candidate, baseline=baseline, repeats=repeats or self._n_repeats, **kw)

    def rate_all_axes(self, items: Any, repeats: int | None = None) -> dict[str, Ratings]:
        """For multi-criteria templates: one Ratings per axis from the same calls."""
        if not self.axes:
            raise ConfigError(f"template {self.template_name!r} produces a single score")
        return {a: self.with_(axis=a).rate(items, repeats) for a in self.axes}

    # ------------------------------------------------------------------ internals
    def _run(self, rows, columns, scale, **prov) -> Ratings:
        results = self._run_many(rows, columns)
        return self._assemble(rows, [c for c, _ in columns], results, scale, **prov)

    def _messages(self, item: Mapping[str, Any], scale: Scale) -> list[dict[str, str]]:
        """The chat messages of one item on one scale (the template's, with this judge's system)."""
        messages = [m for m in render(self._template, item, scale, hardened=self.hardened)
                    if not (self.system is not None and m.get("role") == "system")]
        if self.system:  # the caller's system message replaces the template's ("" removes it)
            messages.insert(0, {"role": "system", "content": self.system})
        return messages

    def _request(self, item: Mapping[str, Any], *, scale: Scale, sample_index: int = 0,
                 model: str | None = None, temperature: float | None = None, messages: Any = None):
        """One call's request (``messages``: :meth:`_messages` of this item and scale, if known)."""
        if messages is None:
            messages = self._messages(item, scale)
        endpoint = self.endpoint if model is None else self.endpoint.with_model(model)
        grammar = grammar_for(self.output, scale, self.axes) if self._constrained(endpoint.model) else None
        metadata: dict[str, Any] = {"test": self.test_id} if self.test_id else {}
        metadata["reasks"] = int(bool(self.reask))
        if getattr(getattr(self.client, "settings", None), "dry_run", False):
            # a dry run (--judgerel-dry-run) answers with this reply, which parses; never keyed
            metadata["dry_reply"] = dry_reply_for(self.output, scale, self.axes,
                                                  seed=zlib.crc32(repr((messages, sample_index)).encode()))
        return LLMRequest(
            **endpoint.request_fields(),
            messages=tuple(messages), temperature=self.temperature if temperature is None else temperature,
            # a fixed seed would make every repeat the same draw (test-retest ICC trivially 1):
            # repeat r uses seed + r, so repeats stay distinct yet reproducible
            max_tokens=self.max_tokens, seed=None if self.seed is None else self.seed + sample_index,
            top_p=self.top_p,
            grammar=grammar, sample_index=sample_index, namespace=self.namespace,
            metadata=metadata,
        )

    def _run_many(self, rows, columns) -> dict[tuple[int, str], tuple[float | None, Any, JudgeFailure | None]]:
        """Send every (item, column) call, :data:`CHUNK` at a time, the next chunk built and sent while
        the current one is answered (so at most two chunks' requests are alive); parse; re-ask
        failures once if enabled."""
        out: dict[tuple[int, str], Any] = {}
        run = _RunTally()
        client = self.client
        previous: tuple[list[_Call], Any] | None = None  # the chunk sent, to finish next
        ahead: Any = None  # the chunk sent while the previous one is finished
        try:
            for calls in _chunks(self, rows, columns):
                # its calls start once the previous chunk's have all started (that one finishes first)
                ahead = client.submit_many([c.request[1] for c in calls],
                                           after=previous[1] if previous is not None else None)
                if previous is not None:
                    _finish_chunk(self, rows, *previous, out, run)
                previous, ahead = (calls, ahead), None
            if previous is not None:
                _finish_chunk(self, rows, *previous, out, run)
                previous = None
        except BaseException:
            for sent in (ahead, previous[1] if previous is not None else None):
                if sent is not None:  # not waited for: no more of its calls start
                    sent.cancel()
            raise
        failures = [v[2] for v in out.values() if v[2] is not None]
        extra: dict[str, Any] = {"served": list(run.served.values())}
        if run.anchor_calls:
            extra["anchor_calls"] = run.anchor_calls
        active_recorder().record(new_record(
            "judge_run", judge=self.fingerprint(), items=len(rows), calls=run.calls + run.reasked,
            reasked=run.reasked, parse_failures=len(failures), failures=[f.to_dict() for f in failures[:20]],
            passed=not failures, **extra,
        ))
        return out

    def _pick(self, outcome) -> float:
        if outcome.value is not None:
            return float(outcome.value)
        values = dict(outcome.values or {})
        if self.axis is not None:
            return float(values[self.axis])
        if len(values) == 1:
            return float(next(iter(values.values())))
        raise ConfigError(
            f"template {self.template_name!r} scores several criteria {list(values)}: choose one with "
            "axis=... (or @pytest.mark.axis), or use rate_all_axes()"
        )

    def _failure(self, rows, call: _Call, outcome, reasked: bool) -> JudgeFailure:
        f = outcome.failure
        return JudgeFailure(item=rows[call.item_index][0], rater=call.rater, cause=f.cause,
                            message=f.message, reply=f.reply, reasked=reasked)

    def _assemble(self, rows, cols, results, scale: Scale, rater_ids=None, **prov) -> Ratings:
        values = np.full((len(rows), len(cols)), np.nan)
        failures = []
        models = set()
        for i in range(len(rows)):
            for j, col in enumerate(cols):
                value, resp, failure = results[(i, col)]
                if resp is not None:
                    models.add(resp.model)
                if failure is not None:
                    failures.append(failure)
                elif value is not None:
                    values[i, j] = value
        provenance = {**self.fingerprint(scale=scale, temperature=prov.get("temperature"),
                                         model=prov.get("model")), **prov, "provider_models": sorted(models)}
        return Ratings.from_array(
            values, item_ids=[r[0] for r in rows], rater_ids=rater_ids or cols,
            item_groups=_item_groups(rows), scale=scale, provenance=provenance,
            rater_groups={"kind": ["llm"] * len(cols)}, parse_failures=failures,
        )


DEFAULT_SCALE = "0-5"
"""Default grading scale: seed 001 finds human-LLM alignment highest on 0-5."""


#: calls a judge sends in one ``submit_many`` (their requests are alive together; the next chunk is
#: built and sent while one is answered, so two or three chunks are alive): 32 waves at the default
#: concurrency's 64, a few MB of requests
CHUNK = 2048


@dataclass
class _RunTally:
    """What a judge run's record accumulates chunk by chunk: calls, re-asks, the configurations
    served (:func:`served_and_anchor_calls`) and the drift anchors' calls."""

    calls: int = 0
    reasked: int = 0
    served: dict[str, dict[str, Any]] = field(default_factory=dict)
    anchor_calls: list[dict[str, Any]] = field(default_factory=list)
    configs: dict[tuple[int, Any, str], tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)


def _chunks(judge: Judge, rows, columns) -> Iterator[list[_Call]]:
    """:meth:`Judge._run_many`'s calls, built :data:`CHUNK` at a time (item by item, column by column)."""
    pending: list[_Call] = []
    default = judge._grading
    for i, (_iid, item) in enumerate(rows):
        rendered: dict[int, list[dict[str, str]]] = {}  # the item's messages per scale (repeats share them)
        for col, kw in columns:
            kw = dict(kw)
            sc = kw.pop("scale", default)
            messages = rendered.get(id(sc))
            if messages is None:
                messages = rendered[id(sc)] = judge._messages(item, sc)
            pending.append(_Call(i, col, (sc, judge._request(item, scale=sc, messages=messages, **kw))))
            if len(pending) >= CHUNK:
                yield pending
                pending = []
    if pending:
        yield pending


def _finish_chunk(judge: Judge, rows, calls: list[_Call], submitted: Any, out: dict, run: _RunTally) -> None:
    """One chunk of :meth:`Judge._run_many` once answered (``submitted``:
    :meth:`pytest_judgerel.llm.LLMClient.submit_many`): its answers parsed into ``out``, its re-asks,
    its share of the run's record in ``run``."""
    from .parsing import format_reminder, try_parse

    client = judge.client
    responses = submitted.result()
    reask: list[tuple[_Call, Any, Any]] = []
    for call, resp in zip(calls, responses):
        sc, req = call.request
        outcome = try_parse(resp.text, judge.output, sc, judge.axes)
        if outcome.ok:
            out[(call.item_index, call.rater)] = (judge._pick(outcome), resp, None)
        elif judge.reask:
            reask.append((call, resp, outcome))
        else:
            out[(call.item_index, call.rater)] = (None, resp, judge._failure(rows, call, outcome, False))
    if reask:
        follow = []
        for call, resp, _ in reask:
            sc, req = call.request
            msgs = req.messages + (
                {"role": "assistant", "content": resp.text},
                {"role": "user", "content": format_reminder(judge.output, sc, judge.axes)},
            )
            follow.append(replace(req, messages=msgs))
        second = client.complete_many(follow)
        for (call, _resp, _first), resp2 in zip(reask, second):
            sc, _ = call.request
            outcome = try_parse(resp2.text, judge.output, sc, judge.axes)
            if outcome.ok:
                out[(call.item_index, call.rater)] = (judge._pick(outcome), resp2, None)
            else:
                out[(call.item_index, call.rater)] = (None, resp2, judge._failure(rows, call, outcome, True))
    run.calls += len(calls)
    run.reasked += len(reask)
    served_and_anchor_calls(judge, rows, calls, out, {(c.item_index, c.rater) for c, _, _ in reask}, run)


def served_and_anchor_calls(judge: Judge, rows, calls, out, reasked,
                            run: _RunTally | None = None) -> dict[str, Any]:
    """What the drift anchors need (:mod:`pytest_judgerel.anchors`): ``served``, per judge
    configuration (this judge at one scale, temperature and model), the models and
    ``system_fingerprint`` s the server reported, with counts; with ``--judgerel-anchors``
    also ``anchor_calls``: each first-asked, parsed call with its exact request, its parser and
    its score (the plugin keeps a sample and drops the rest before the report).  ``run``: the tally
    these calls are added to (one chunk of a run), else a new one."""
    from ..session.context import current_context

    want_anchors = bool(getattr(current_context().settings, "anchors", None))
    run = run if run is not None else _RunTally()
    served, anchor_calls, configs = run.served, run.anchor_calls, run.configs  # one fingerprint per configuration
    for call in calls:
        sc, req = call.request
        value, resp, _failure = out[(call.item_index, call.rater)]
        if resp is None:
            continue
        known = configs.get((id(sc), req.temperature, req.model))
        if known is None:
            config = judge.fingerprint(scale=sc, temperature=req.temperature, model=req.model)
            slot = served.setdefault(repr(sorted(config.items(), key=lambda kv: kv[0])),
                                     {"judge": config, "models": {}, "system_fingerprints": {}})
            known = configs[(id(sc), req.temperature, req.model)] = (config, slot)
        config, slot = known
        slot["models"][resp.model] = slot["models"].get(resp.model, 0) + 1
        fp = getattr(resp, "system_fingerprint", None)
        if fp:
            slot["system_fingerprints"][fp] = slot["system_fingerprints"].get(fp, 0) + 1
        if want_anchors and value is not None and (call.item_index, call.rater) not in reasked:
            anchor_calls.append({
                "judge": config, "item": rows[call.item_index][0], "score": value, "cached": bool(resp.cached),
                "server_model": resp.model, "system_fingerprint": fp,
                "parser": {"output": judge.output, "axes": list(judge.axes) if judge.axes else None,
                           "axis": judge.axis, "scale": {"low": sc.low, "high": sc.high, "step": sc.step,
                                                        "fractional": sc.fractional, "name": sc.name}},
                "request": {"model": req.model, "messages": [dict(m) for m in req.messages],
                            "sampling": req.sampling(), "grammar": req.grammar, "namespace": req.namespace,
                            "sample_index": req.sample_index},
            })
    extra: dict[str, Any] = {"served": list(served.values())}
    if anchor_calls:
        extra["anchor_calls"] = anchor_calls
    return extra


# ---------------------------------------------------------------------- panel
@dataclass
class JudgePanel:
    """Several judge models with one configuration (seed 001's LLM panel); as a jury, ``compare``
    combines their pairwise verdicts by ``rule`` (:data:`pytest_judgerel.stats.jury.JURY_RULES`;
    ``tie_rule`` for ``majority``; ``weights``, each judge's measured agreement with humans, for
    ``weighted``)."""

    judge: Judge
    models: Sequence[str]
    rule: str = "majority"
    tie_rule: str = "tie"
    weights: Mapping[str, float] | None = None

    def rate(self, items: Any, repeats: int = 1) -> Ratings:
        return self.judge.rate_panel(items, self.models, repeats=repeats)

    def judges(self) -> list[Judge]:
        return [self.judge.with_(model=m) for m in self.models]

    def compare(self, items: Any, *, candidate: Any, baseline: Any, repeats: int = 1, rule: str | None = None,
                tie_rule: str | None = None, **kwargs: Any) -> Any:
        """Every model's pairwise comparison combined per item by the jury rule (the panel's unless
        given): :func:`pytest_judgerel.judging.compare.compare_panel`; per-judge verdicts are kept."""
        from .compare import compare_panel

        return compare_panel({str(m): j for m, j in zip(self.models, self.judges())}, items,
                             rule=rule or self.rule, tie_rule=tie_rule or self.tie_rule, weights=self.weights,
                             candidate=candidate, baseline=baseline, repeats=repeats, **kwargs)


# ---------------------------------------------------------------------- grammar
def grammar_for(output: str, scale: Scale, keys: Sequence[str] | None = None) -> str:
    """A llama.cpp GBNF grammar that only admits a valid reply on ``scale``.

    Used for the embedded model (and ``constrain="always"``) so every reply parses.
    """
    if scale.fractional:
        # whole part below the top may take one decimal; the top itself only ".0" (5.5 is not on 0-5)
        below = [str(v) for v in range(int(math.ceil(scale.low)), int(math.floor(scale.high)))]
        top = number_text(scale.high)
        num = f'("{top}" (".0")? | (' + " | ".join(f'"{w}"' for w in reversed(below)) + ') ("." [0-9])?)'
    else:
        pts = scale.points or []
        num = "(" + " | ".join(f'"{number_text(p)}"' for p in sorted(pts, key=lambda v: -len(number_text(v)))) + ")"
    if output == "number":
        return f"root ::= score\nscore ::= {num}\n"
    if output == "json":
        parts = ' ", " '.join(f'"\\"{_gesc(k)}\\": " score' for k in keys or ())
        return f'root ::= "{{" {parts} "}}"\nscore ::= {num}\n'
    lines = ' "\\n" '.join(f'"{_gesc(k)}: " score' for k in keys or ())
    return f"root ::= {lines}\nscore ::= {num}\n"


def dry_reply_for(output: str, scale: Scale, keys: Sequence[str] | None = None, seed: int = 0) -> str:
    """A valid reply on ``scale`` in the template's ``output`` format (the grammar's language): what
    a dry run answers instead of calling the model.  The score is a point of the scale chosen by
    ``seed`` (the request's hash), so the statistics of a dry run's gates can be computed."""
    if not scale.fractional:  # ``scale.points[seed % len(points)]`` without listing the points
        count = int(round((scale.high - scale.low) / scale.step)) + 1
        low = number_text(scale.low + (seed % count) * scale.step)
    else:
        first, count = int(math.ceil(scale.low)), int(math.floor(scale.high)) - int(math.ceil(scale.low)) + 1
        low = number_text(first + seed % count if count > 0 else scale.low)
    if output == "number":
        return low
    if output == "json":
        return "{" + ", ".join(f'"{k}": {low}' for k in keys or ()) + "}"
    return "\n".join(f"{k}: {low}" for k in keys or ())


def _gesc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# ---------------------------------------------------------------------- items
def _item_groups(rows: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Item groups shared by every item: a ``groups`` mapping (data-set items) or
    ``group``/``benchmark`` fields."""
    rows = list(rows)
    if not rows:
        return {}
    per_item = []
    for _iid, it in rows:
        g = getattr(it, "groups", None)
        labels = dict(g) if isinstance(g, Mapping) else {}
        labels.update({k: it[k] for k in ("group", "benchmark") if k in it})
        per_item.append(labels)
    common = set.intersection(*(set(p) for p in per_item))
    return {k: [str(p[k]) for p in per_item] for k in sorted(common)}

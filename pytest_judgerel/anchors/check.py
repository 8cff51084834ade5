"""Record or re-judge the anchors of every judge configuration a session used; the report's block.

At session end (the controller, once): a configuration with no anchors in the file gets its
deterministic sample (:class:`~.sample.CandidatePool`) recorded with the exact requests and
``reference_samples`` reference scores each (answers the model gave this session count; the rest
are asked fresh) -> status ``recorded``.  A configuration with anchors is re-judged: every stored
request is sent again ``fresh_samples`` time(s) through the session's client with ``fresh=True``
(never from or into the cache), the replies are read with the same parser (reply format, scale,
axes), and :func:`pytest_judgerel.stats.anchor_drift.staged_anchor_comparison` says ``steady``,
``drifted`` or ``inconclusive``: the first 30 anchors are asked, and the reserve (the rest, 10 at
the default 40) only when those are not clearly steady.  The server's reported models and
``system_fingerprint`` s are kept with the reference and compared with the fresh answers' and
the session's.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..errors import ConfigError
from .sample import CandidatePool
from .store import Anchor, AnchorFile, AnchorSet, read_anchor_file, record_anchor_sets

__all__ = ["DEFAULT_FRESH_SAMPLES", "DEFAULT_SAMPLE_SIZE", "AnchorRun", "check_anchors",
           "served_block", "drift_module", "overall_status"]

DEFAULT_FRESH_SAMPLES = 1
"""Fresh samples per anchor and session: 30 calls, 40 when the reserve is asked (default sizes)."""
DEFAULT_SAMPLE_SIZE = 40
"""Anchors recorded per configuration: 30 re-judged every session and 10 in reserve
(:func:`pytest_judgerel.stats.anchor_drift.staged_anchor_comparison`), asked when the first 30 are not
clearly steady."""

STATUS_ORDER = ("drifted", "inconclusive", "error", "steady", "recorded")


def drift_module() -> Any:
    """:mod:`pytest_judgerel.stats.anchor_drift` (the anchor comparison),
    imported when first needed (it brings scipy)."""
    from ..stats import anchor_drift as drift

    return drift


def overall_status(statuses: Sequence[str]) -> str:
    """The block's one word: the most alarming configuration status (``off`` when none)."""
    for s in STATUS_ORDER:
        if s in statuses:
            return s
    return "off"


@dataclass(frozen=True)
class AnchorRun:
    """What :func:`check_anchors` needs of the session: the client (``complete_many(..., fresh=True)``),
    how to reach a configuration's model (``endpoint_for(judge fields) -> Endpoint``), the sample
    size, the anchors of the first stage (``screen``; the rest are the reserve) and the samples per
    anchor."""

    client: Any
    endpoint_for: Callable[[Mapping[str, Any]], Any]
    sample_size: int = DEFAULT_SAMPLE_SIZE
    screen: int = 30
    reference_samples: int | None = None
    fresh_samples: int = DEFAULT_FRESH_SAMPLES

    def reference_samples_for(self, parser: Mapping[str, Any]) -> int:
        """Reference samples to record for a configuration read with ``parser``: ``reference_samples``
        when set, else by its scale (:func:`pytest_judgerel.stats.anchor_drift.reference_samples_for`)."""
        if self.reference_samples is not None:
            return int(self.reference_samples)
        return int(drift_module().reference_samples_for(dict(parser["scale"])))


def _request(anchor: Anchor, judge: Mapping[str, Any], run: AnchorRun, index: int) -> Any:
    from ..llm.request import LLMRequest

    req = anchor.request
    sampling = dict(req.get("sampling") or {})
    endpoint = run.endpoint_for(judge)
    fields = endpoint.request_fields()
    fields["model"] = str(req.get("model") or judge["model"])
    if "stop" in sampling and sampling["stop"] is not None:
        sampling["stop"] = tuple(sampling["stop"])
    if "tools" in sampling and sampling["tools"] is not None:
        sampling["tools"] = tuple(sampling["tools"])
    return LLMRequest(**fields, messages=tuple(req["messages"]), grammar=req.get("grammar"),
                      namespace=str(req.get("namespace") or ""), sample_index=index,
                      metadata={"test": "judgerel anchors"}, **sampling)


def _parse(text: str, parser: Mapping[str, Any]) -> float | None:
    """The reply read exactly as the judge reads it (its format, scale and axis); None when unreadable."""
    from ..judging.parsing import try_parse
    from ..scales import Scale

    sc = Scale.parse(dict(parser["scale"]))
    outcome = try_parse(text, str(parser["output"]), sc, parser.get("axes"))
    if not outcome.ok:
        return None
    if outcome.value is not None:
        return float(outcome.value)
    values = dict(outcome.values or {})
    axis = parser.get("axis")
    if axis is not None and axis in values:
        return float(values[axis])
    return float(next(iter(values.values()))) if len(values) == 1 else None


@dataclass
class _Asked:
    """What asking anchors gave: parsed scores (None: failed or unreadable), the server's models and
    fingerprints, the requests sent (``calls``, retries included), the calls that failed and why."""

    scores: dict[str, list[float | None]]
    models: dict[str, int]
    fingerprints: dict[str, int]
    calls: int
    errors: list[str]
    failed: int = 0

    def add(self, part: "_Asked") -> None:
        self.scores.update(part.scores)
        self.calls += part.calls
        self.failed += part.failed
        self.errors.extend(part.errors)
        for mine, theirs in ((self.models, part.models), (self.fingerprints, part.fingerprints)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count


def _sent(client: Any) -> int | None:
    """Requests the client has sent upstream so far (first attempts and retries), when it counts them."""
    stats = getattr(client, "stats", None)
    misses, retries = getattr(stats, "misses", None), getattr(stats, "retries", None)
    return int(misses) + int(retries) if isinstance(misses, int) and isinstance(retries, int) else None


def _ask(aset: AnchorSet, anchors: Sequence[Anchor], times: Mapping[str, int], run: AnchorRun,
         start: Mapping[str, int] | None = None) -> _Asked:
    """Send each anchor's request ``times[id]`` times, fresh, with the sample indices ``start[id]``,
    ``start[id] + 1``, ... (0 by default); parse every reply.  ``calls`` counts every request the
    client sent, retries included."""
    first = start or {}
    plan = [(a, first.get(a.id, 0) + i) for a in anchors for i in range(times.get(a.id, 0))]
    asked = _Asked({a.id: [] for a in anchors}, {}, {}, 0, [])
    if not plan:
        return asked
    requests = [_request(a, aset.judge, run, i) for a, i in plan]
    before = _sent(run.client)
    replies = run.client.complete_many(requests, return_exceptions=True, fresh=True)
    after = _sent(run.client)
    asked.calls = after - before if before is not None and after is not None else len(plan) + sum(
        max(0, int(getattr(r, "attempts", 1) or 1) - 1) for r in replies if not isinstance(r, BaseException))
    for (a, _), resp in zip(plan, replies):
        if isinstance(resp, BaseException):
            asked.errors.append(f"{type(resp).__name__}: {resp}")
            asked.failed += 1
            asked.scores[a.id].append(None)
            continue
        asked.scores[a.id].append(_parse(resp.text, aset.parser))
        asked.models[resp.model] = asked.models.get(resp.model, 0) + 1
        fp = getattr(resp, "system_fingerprint", None)
        if fp:
            asked.fingerprints[fp] = asked.fingerprints.get(fp, 0) + 1
    return asked


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _server_changes(before: Mapping[str, Any], after: Mapping[str, Any], what: str) -> list[str]:
    """Models or system fingerprints that differ between two server summaries, in words."""
    out = []
    for key, word in (("models", "model"), ("system_fingerprints", "system_fingerprint")):
        old, new = sorted((before.get(key) or {})), sorted((after.get(key) or {}))
        if old and new and old != new:
            out.append(f"{word} {', '.join(old)} -> {', '.join(new)} ({what})")
    return out


def _record(cid: str, cands: list[dict[str, Any]], run: AnchorRun) -> tuple[AnchorSet, _Asked]:
    """A new anchor set from the session's candidates, topped up with fresh reference samples."""
    first = cands[0]
    m = run.reference_samples_for(first["parser"])
    anchors = tuple(Anchor(id=c["id"], item=c["item"],
                           request={k: v for k, v in c["request"].items() if k != "sample_index"},
                           reference=tuple(c["fresh_scores"][:m])) for c in cands)
    aset = AnchorSet(judge=first["judge"], parser=first["parser"], anchors=anchors)
    used = [(c, len(c["fresh_scores"][:m])) for c in cands]  # answers kept as references
    return _complete_reference(aset, run, seen_models=[c.get("server_model") for c, n in used for _ in range(n)],
                               seen_fps=[c.get("system_fingerprint") for c, n in used for _ in range(n)])


def _complete_reference(aset: AnchorSet, run: AnchorRun, seen_models: Sequence[Any] = (),
                        seen_fps: Sequence[Any] = ()) -> tuple[AnchorSet, _Asked]:
    """Ask each anchor until it holds ``reference_samples`` reference scores (sample indices after
    the ones it holds); stamp the set."""
    m = run.reference_samples_for(aset.parser)
    times = {a.id: max(0, m - len(a.reference)) for a in aset.anchors}
    asked = _ask(aset, aset.anchors, times, run, start={a.id: len(a.reference) for a in aset.anchors})
    models, fps = dict(asked.models), dict(asked.fingerprints)
    for name in seen_models:
        if name:
            models[name] = models.get(name, 0) + 1
    for fp in seen_fps:
        if fp:
            fps[fp] = fps.get(fp, 0) + 1
    anchors = tuple(Anchor(id=a.id, item=a.item, request=a.request, human=a.human,
                           reference=tuple(list(a.reference)[:m] + asked.scores[a.id]))
                    for a in aset.anchors)
    return AnchorSet(judge=aset.judge, parser=aset.parser, anchors=anchors, recorded=_now(), reference_samples=m,
                     server={"models": models, "system_fingerprints": fps}), asked


def _matrix(rows: Mapping[str, Sequence[float | None]], width: int) -> dict[str, list[float]]:
    """Equal-length rows (NaN for a missing or unreadable score), as stats.anchor_drift wants them."""
    return {k: [float("nan") if v is None else float(v) for v in list(r)[:width]]
            + [float("nan")] * max(0, width - len(r)) for k, r in rows.items()}


def _human_agreement(aset: AnchorSet, scores: Mapping[str, Sequence[float | None]]) -> dict[str, Any] | None:
    """ICC(A,1) of the human labels and the judge's mean anchor score, with its 95% CI, and nMAE."""
    pairs = []
    for a in aset.anchors:
        got = [s for s in scores.get(a.id, ()) if s is not None]
        if a.human is not None and got:
            pairs.append((a.human, sum(got) / len(got)))
    if len(pairs) < 3:
        return None
    from ..errors import ReliabilityError
    from ..scales import Scale
    from ..stats.icc import icc

    try:
        res = icc([list(p) for p in pairs], "A,1")
    except ReliabilityError as exc:
        return {"statistic": "ICC(A,1)", "value": None, "ci": None, "n": len(pairs), "error": str(exc)}
    sc = Scale.parse(dict(aset.parser["scale"]))
    nmae = sum(abs(h - j) for h, j in pairs) / len(pairs) / sc.range

    def finite(v: float) -> float | None:
        return float(v) if math.isfinite(v) else None

    return {"statistic": "ICC(A,1)", "value": finite(res.value), "ci": [finite(res.ci_low), finite(res.ci_high)]
            if math.isfinite(res.ci_low) and math.isfinite(res.ci_high) else None,
            "n": len(pairs), "nmae": nmae}


def _entry(aset: AnchorSet, status: str, **extra: Any) -> dict[str, Any]:
    return {"judge": dict(aset.judge), "status": status, "anchors": len(aset.anchors),
            "reference_samples": aset.reference_samples, "recorded": aset.recorded,
            "reference_server": dict(aset.server), **extra}


def _rejudge(aset: AnchorSet, run: AnchorRun) -> dict[str, Any]:
    """Re-judge the anchors in two stages (:func:`pytest_judgerel.stats.anchor_drift.staged_anchor_comparison`):
    the first ``run.screen`` anchors, and the reserve only when those are not clearly steady."""
    asked = _Asked({}, {}, {}, 0, [])
    by_id = {a.id: a for a in aset.anchors}

    def judge(ids: Sequence[str]) -> dict[str, list[float]]:
        part = _ask(aset, [by_id[i] for i in ids], {i: run.fresh_samples for i in ids}, run)
        asked.add(part)
        return _matrix(part.scores, run.fresh_samples)

    reference = _matrix({a.id: a.reference for a in aset.anchors}, aset.reference_samples)
    from ..errors import ReliabilityError, ScaleError

    scale = str(aset.judge.get("scale") or aset.parser["scale"]["name"])
    try:
        comp = drift_module().staged_anchor_comparison(reference, judge, scale, screen=run.screen,
                                                       nan_policy="omit")
        error = None
    except (ReliabilityError, ScaleError) as exc:
        comp, error = None, exc
    fresh_server = {"models": asked.models, "system_fingerprints": asked.fingerprints}
    common = dict(calls=asked.calls, failed_calls=asked.failed, fresh_server=fresh_server,
                  server_changes=_server_changes(aset.server, fresh_server, "reference -> anchors now"),
                  human_agreement=_human_agreement(aset, asked.scores),
                  errors=asked.errors[:5], n_errors=len(asked.errors))
    if comp is None:
        return _entry(aset, "inconclusive", comparison=None, reasons=[f"no comparison: {error}"], **common)
    d = comp.to_dict()
    return _entry(aset, str(comp.status), comparison=d, reasons=list(d.get("reasons") or []), **common)


def check_anchors(path: str, pool: CandidatePool, served: Mapping[str, Mapping[str, Any]], run: AnchorRun
                  ) -> dict[str, Any]:
    """The report's ``anchors`` block for one session (see the module docstring); writes the file
    when a configuration was recorded.  ``served``: :func:`~.sample.served_by_configuration` of the
    session's records.  Never raises for a damaged file or a failed call: the block says so
    (``unreadable`` True for a damaged file, which fails the session; ``failed_calls`` counts the
    anchor calls that got no answer)."""
    block: dict[str, Any] = {"file": path, "configurations": {}, "calls": 0, "failed_calls": 0, "written": False,
                             "error": None, "unreadable": False}
    try:
        stored = read_anchor_file(path)
    except ConfigError as exc:
        block.update(status="error", error=str(exc), unreadable=True)
        _add_served(block, served)
        return block
    candidates = pool.by_configuration()
    updated = AnchorFile(dict(stored.configurations))
    used = sorted(set(candidates) | set(served))
    for cid in used:
        aset = stored.configurations.get(cid)
        try:
            if aset is not None and aset.has_reference:
                entry = _rejudge(aset, run)
            elif aset is not None:  # a hand-written set without references: record them now
                new, asked = _complete_reference(aset, run)
                updated.configurations[cid] = new
                entry = _entry(new, "recorded", calls=asked.calls, failed_calls=asked.failed,
                               human_agreement=_human_agreement(new, {a.id: list(a.reference) for a in new.anchors}),
                               errors=asked.errors[:5], n_errors=len(asked.errors))
            elif candidates.get(cid):
                new, asked = _record(cid, candidates[cid], run)
                updated.configurations[cid] = new
                entry = _entry(new, "recorded", calls=asked.calls, failed_calls=asked.failed,
                               errors=asked.errors[:5], n_errors=len(asked.errors))
            else:
                continue  # judged, but no reply parsed: nothing to record
        except ConfigError as exc:
            entry = {"judge": dict((served.get(cid) or {}).get("judge") or {}), "status": "error",
                     "error": str(exc), "calls": 0}
        block["configurations"][cid] = entry
        block["calls"] += int(entry.get("calls") or 0)
        block["failed_calls"] += int(entry.get("failed_calls") or 0)
    recorded = {cid: a for cid, a in updated.configurations.items() if stored.configurations.get(cid) != a}
    if recorded:
        try:
            record_anchor_sets(path, recorded)
            block["written"] = True
        except OSError as exc:
            block["error"] = f"could not write the anchor file {path}: {exc}"
        except ConfigError as exc:  # damaged by someone else during the session: left as it is
            block.update(error=str(exc), unreadable=True)
    block["unused"] = sorted(set(stored.configurations) - set(used))
    _add_served(block, served)
    block["status"] = overall_status([c["status"] for c in block["configurations"].values()])
    return block


def served_block(served: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The block of a session without an anchor file: the server-reported models and fingerprints
    of each configuration (status ``off``)."""
    block: dict[str, Any] = {"file": None, "status": "off", "configurations": {}, "calls": 0, "written": False,
                             "error": None, "unused": []}
    _add_served(block, served, "off")
    return block


def _add_served(block: dict[str, Any], served: Mapping[str, Mapping[str, Any]], missing: str = "unchecked") -> None:
    """Each configuration's server-reported models and fingerprints of this session, and the changes
    they show (several within the session; different from the reference's)."""
    for cid, s in served.items():
        entry = block["configurations"].setdefault(cid, {"judge": dict(s["judge"]), "status": missing})
        entry["served"] = {"models": dict(s["models"]), "system_fingerprints": dict(s["system_fingerprints"])}
        changes = list(entry.get("server_changes") or [])
        for key, word in (("models", "model"), ("system_fingerprints", "system_fingerprint")):
            if len(s[key]) > 1:
                changes.append(f"{len(s[key])} {word}s answered this session: {', '.join(sorted(s[key]))}")
        if entry.get("reference_server"):
            changes += _server_changes(entry["reference_server"], entry["served"], "reference -> this session")
        entry["server_changes"] = list(dict.fromkeys(changes))

"""The deterministic anchor sample, gathered during the session (on every xdist worker).

Judges hand over each parsed call (``anchor_calls`` of their ``judge_run`` record, see
:meth:`pytest_judgerel.judging.judge.Judge._served_and_anchors`).  A :class:`CandidatePool` keeps,
per judge configuration, the ``size`` candidates with the smallest :func:`~.store.anchor_id` (a
bottom-k sample of the prompts, independent of test order and of how tests are spread over
workers); pools merge (a worker's per-test pool into the controller's), so only ``size`` candidates
per configuration and test ever travel.  Repeated samples of the same prompt that the session got
from the model (not from the cache) are kept as reference samples.  Stdlib only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..judging.identity import configuration_id
from .store import anchor_id

__all__ = ["CandidatePool", "served_by_configuration"]


def _body_key(request: Mapping[str, Any]) -> str:
    """The request as the server sees it (without the sample index, which it never receives)."""
    return json.dumps({k: v for k, v in request.items() if k != "sample_index"}, sort_keys=True, default=str)


@dataclass
class CandidatePool:
    """Per configuration, the ``size`` prompts with the smallest anchor ids and what the session
    observed of each: the parsed scores of answers the model gave this session (``fresh_scores``,
    usable as reference samples), the request and the parser."""

    size: int = 40
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_calls(self, calls: Iterable[Mapping[str, Any]]) -> None:
        """Take a judge's ``anchor_calls``."""
        for call in calls:
            cid = configuration_id(call.get("judge"))
            if cid is None:
                continue
            req = dict(call["request"])
            self._offer(cid, {
                "judge": dict(call["judge"]), "parser": dict(call["parser"]), "config": cid,
                "id": anchor_id(cid, req["messages"]), "item": str(call.get("item")), "request": req,
                "fresh_scores": [] if call.get("cached") else [call["score"]],
                "server_model": call.get("server_model"), "system_fingerprint": call.get("system_fingerprint")})

    def add_selected(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Merge candidates another pool :meth:`selected` (a worker's, a test's)."""
        for entry in entries:
            self._offer(str(entry["config"]), dict(entry))

    def _offer(self, cid: str, cand: dict[str, Any]) -> None:
        slot = self.configs.setdefault(cid, {})
        have = slot.get(cand["id"])
        if have is not None:
            if _body_key(have["request"]) == _body_key(cand["request"]):
                have["fresh_scores"] = list(have["fresh_scores"]) + list(cand["fresh_scores"])
            elif cand["request"].get("sample_index", 0) < have["request"].get("sample_index", 0):
                slot[cand["id"]] = cand  # the first sample of a seeded judge is the anchor
            return
        if len(slot) >= self.size:
            worst = max(slot)
            if cand["id"] >= worst:
                return
            del slot[worst]
        slot[cand["id"]] = cand

    def selected(self) -> list[dict[str, Any]]:
        """Every kept candidate (plain JSON, ordered by configuration and anchor id)."""
        return [self.configs[c][a] for c in sorted(self.configs) for a in sorted(self.configs[c])]

    def by_configuration(self) -> dict[str, list[dict[str, Any]]]:
        return {c: [self.configs[c][a] for a in sorted(self.configs[c])] for c in sorted(self.configs)}


def served_by_configuration(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{configuration id: {"judge", "models": {name: answers}, "system_fingerprints": {id: answers}}}``
    summed over the ``served`` lists of ``judge_run`` records (every answer of the session, cached
    ones with what the server reported when they were first asked)."""
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        if rec.get("kind") != "judge_run":
            continue
        for s in rec.get("served") or []:
            cid = configuration_id(s.get("judge"))
            if cid is None:
                continue
            slot = out.setdefault(cid, {"judge": dict(s["judge"]), "models": {}, "system_fingerprints": {}})
            for key in ("models", "system_fingerprints"):
                for name, n in (s.get(key) or {}).items():
                    slot[key][name] = slot[key].get(name, 0) + int(n)
    return dict(sorted(out.items()))

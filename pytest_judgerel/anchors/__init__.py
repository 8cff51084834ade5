"""Silent judge drift: a fixed anchor set per judge configuration, recorded once and re-judged fresh
every session (``--judgerel-anchors PATH``; docs/reports.md, "Silent judge drift").

* :mod:`.store`: the anchor file (format, reading, writing) and the anchor ids;
* :mod:`.sample`: the deterministic sample gathered during the session, and the server-reported
  models and fingerprints per configuration;
* :mod:`.check`: recording, re-judging (never from the cache) and the comparison
  (:mod:`pytest_judgerel.stats.anchor_drift`) -> the report's ``anchors`` block.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "AnchorFile": "store",
    "AnchorSet": "store",
    "Anchor": "store",
    "read_anchor_file": "store",
    "write_anchor_file": "store",
    "CandidatePool": "sample",
    "served_by_configuration": "sample",
    "AnchorRun": "check",
    "check_anchors": "check",
    "served_block": "check",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

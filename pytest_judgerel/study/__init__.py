"""The seed-001 study: panels per scale, agreement and consistency (:mod:`.analysis`), the
authors' data release (:mod:`.release`), the paper's tables recomputed (:mod:`.reproduce`), as
HTML (:mod:`.html`) and as the ``judgerel study`` command (:mod:`.cli`).

``pytest_judgerel.study`` keeps exporting the analysis names it had as a module (lazily); the
loader and the reproduction are imported from their modules.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "PanelReliability": "analysis", "AgreementRow": "analysis", "Illusion": "analysis",
    "StudyResult": "analysis", "human_panel_reliability": "analysis", "analyse": "analysis",
    "run_study": "analysis", "PANEL_MEAN": "analysis", "ERROR_THRESHOLD": "analysis",
    "ILLUSION_THRESHOLD": "analysis", "MISSING_POLICIES": "analysis",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

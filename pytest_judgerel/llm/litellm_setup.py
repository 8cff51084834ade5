"""Lazy, configured import of litellm.

``import litellm`` takes seconds and much memory and, unless told otherwise, fetches a
price list from the network at import (which stalls offline).  So it is imported only on the
first cache miss, with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true``
set for the import alone (unless the user set them; the environment is restored afterwards:
importing or using the plugin leaves the user's environment as it found it), with its
import-time pydantic warnings silenced and its "Give Feedback" banner switched off.  Custom
providers registered before the import (scripted, local) are installed into
``litellm.custom_provider_map`` here.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

__all__ = ["get_litellm", "litellm_imported", "register_provider", "unregister_provider", "LITELLM_WARNING_FILTERS"]

_lock = threading.RLock()
_litellm: Any = None
_providers: dict[str, Any] = {}  # provider prefix -> zero-argument factory returning a litellm.CustomLLM

#: set for the import of litellm only, unless the user set them (no price-list download)
IMPORT_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}

#: (message regex, category) pairs of warnings litellm emits on first use.
LITELLM_WARNING_FILTERS = (
    (r".*ReadOnly.* qualifier", UserWarning),
    (r".*Pydantic serializer warnings", UserWarning),
    (r".*Valid config keys have changed in V2", UserWarning),
    (r".*Use 'content=<...>' to upload raw bytes", DeprecationWarning),
)


def _apply_warning_filters() -> None:
    for message, category in LITELLM_WARNING_FILTERS:
        warnings.filterwarnings("ignore", message=message, category=category)
    warnings.filterwarnings("ignore", module=r"litellm(\..*)?")


def litellm_imported() -> bool:
    """Whether litellm has been imported by this layer (or anyone) in this process."""
    import sys

    return _litellm is not None or "litellm" in sys.modules


def get_litellm() -> Any:
    """Import and configure litellm once per process; return the module."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is not None:
            return _litellm
        added = [name for name in IMPORT_ENV if name not in os.environ]
        for name in added:
            os.environ[name] = IMPORT_ENV[name]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import litellm
        finally:
            for name in added:  # the user's environment as it was
                if os.environ.get(name) == IMPORT_ENV[name]:
                    del os.environ[name]
        _apply_warning_filters()
        litellm.suppress_debug_info = True
        _litellm = litellm
        for name, factory in _providers.items():
            _install(litellm, name, factory())
        return litellm


def _install(litellm: Any, name: str, handler: Any) -> None:
    current = [item for item in litellm.custom_provider_map if item.get("provider") != name]
    current.append({"provider": name, "custom_handler": handler})
    litellm.custom_provider_map = current
    from litellm.utils import custom_llm_setup

    custom_llm_setup()


def register_provider(name: str, factory: Any) -> None:
    """Route models ``"<name>/..."`` to the ``litellm.CustomLLM`` that ``factory()`` builds.

    The factory runs when litellm is imported (or now, if it already is), so
    declaring a provider never imports litellm.
    """
    with _lock:
        _providers[name] = factory
        if _litellm is not None:
            _install(_litellm, name, factory())


def unregister_provider(name: str) -> None:
    with _lock:
        _providers.pop(name, None)
        if _litellm is not None:
            _litellm.custom_provider_map = [
                item for item in _litellm.custom_provider_map if item.get("provider") != name
            ]


def is_custom_provider(model: str) -> bool:
    """Whether ``model`` is routed to one of our registered custom providers (scripted, local)."""
    prefix = model.split("/", 1)[0]
    return prefix in _providers

"""The pytest side of the settings: register every option and ini key of
:data:`pytest_judgerel.session.settings.OPTIONS`, and resolve a config's :class:`~pytest_judgerel.session.settings.Settings`
(command line > ini > environment > default, :func:`pytest_judgerel.session.settings.resolve`).

Stdlib only (and the core's small settings module): imported by every pytest run of a user who
has the plugin installed.
"""

from __future__ import annotations

from typing import Any

from ..session.settings import OPTIONS, Opt, Settings, resolve

__all__ = ["add_options", "resolve_settings"]


def add_options(parser: Any) -> None:
    group = parser.getgroup("judgerel", "pytest-judgerel: LLM-as-a-judge reliability")
    for o in OPTIONS:
        kwargs: dict[str, Any] = {"dest": f"judgerel_{o.dest}", "default": None, "help": o.help}
        if o.action == "store_true":
            kwargs["action"] = "store_true"
        else:
            kwargs["choices"] = list(o.choices) if o.choices else None
            kwargs["metavar"] = "{" + ",".join(o.choices) + "}" if o.choices else o.dest.upper()
        group.addoption(o.flag, **kwargs)
        parser.addini(o.ini, help=o.help, default=None)


def resolve_settings(config: Any) -> Settings:
    """Resolve each option of ``config``: command line, then ini, then environment, then default."""

    def lookup(o: Opt) -> tuple[Any, str] | None:
        raw = config.getoption(f"judgerel_{o.dest}", default=None)
        if raw in (None, False) and o.action == "store_true":
            raw = None
        if raw is not None:
            return raw, o.flag
        raw = config.getini(o.ini)
        if raw in (None, "", []):
            return None
        return raw, f"ini {o.ini}"

    return resolve(lookup, str(config.rootpath))

"""The session settings: every option, ini key and environment variable, resolved into typed
:class:`Settings`.

Each setting is one field of :class:`Settings` whose metadata names its flag, ini key,
environment variable, help text and check: the one home of every option.  Resolution
order: option > ini > environment > default (:func:`resolve`); values are validated where
they are read, and an error names the flag, ini key or variable the value came from.
Inside pytest the plugin (:mod:`pytest_judgerel.plugin.options`) supplies the command line
and the ini file; outside pytest :func:`settings_from_env` reads the environment alone, so
both resolve the same way.

Stdlib only (and the core's small constant modules): imported by every pytest run of a
user who has the plugin installed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from ..llm.backend import CACHE_MODES
from ..llm.endpoint import CONSTRAIN_MODES, check_api_base
from ..llm.wire import BACKENDS

__all__ = ["Settings", "Opt", "OPTIONS", "resolve", "settings_from_env"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _bool(text: Any) -> bool:
    """Strict boolean: 1/true/yes/on or 0/false/no/off (a typo such as 'flase' is an error)."""
    if isinstance(text, bool):
        return text
    word = str(text).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"{text!r} is not a boolean (use one of {', '.join(_TRUE + _FALSE)})")


_bool.__name__ = "bool"


def _at_least(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be >= {low:g}"


def _within(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: "must be a finite number" if not math.isfinite(v) else (
        None if low <= v <= high else f"must be within [{low:g}, {high:g}]")


def _positive(v: Any) -> str | None:
    return "must be a finite number > 0" if not (math.isfinite(v) and v > 0) else None


@dataclass(frozen=True)
class Opt:
    """One setting: its command-line flag, ini key, environment variable, parser and check."""

    dest: str
    flag: str
    ini: str
    help: str
    default: Any = None
    env: str | None = None
    type: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None
    action: str | None = None
    check: Callable[[Any], str | None] | None = None  # returns what is wrong with a value, or None


def _opt(flag: str, help: str, default: Any = None, **meta: Any) -> Any:
    """A :class:`Settings` field carrying its option's description."""
    return field(default=default, metadata={"opt": dict(flag=flag, help=help, default=default, **meta)})


@dataclass(frozen=True)
class Settings:
    """Every judgerel setting of a session, resolved once (see the module docstring).

    ``sources`` names where each value came from (``--judge-model``, ``ini judgerel_model``,
    ``env JUDGEREL_MODEL`` or ``default``).  Relative ``cache_dir`` and ``history_dir`` are
    resolved against the rootdir.
    """

    model: str | None = _opt(
        "--judge-model", "litellm model name of the judge (default: env JUDGEREL_MODEL, else the embedded local "
        "model when the 'local' extra is installed)", env="JUDGEREL_MODEL")
    api_base: str | None = _opt(
        "--judge-api-base", "base URL of an OpenAI-compatible server (vLLM, llama.cpp server, Ollama) that answers "
        "every call of the session's model; its key comes from env JUDGEREL_API_KEY", env="JUDGEREL_API_BASE",
        check=check_api_base)
    temperature: float = _opt("--judge-temperature", "sampling temperature of judge calls (default 0.0, within "
                              "[0, 2])", 0.0, type=float, check=_within(0.0, 2.0))
    max_tokens: int = _opt("--judge-max-tokens", "max tokens of a judge reply (default 512)", 512, type=int,
                           check=_at_least(1))
    repeats: int = _opt("--judge-repeats", "default number of repeated judge runs per item (default 3)", 3,
                        type=int, check=_at_least(1))
    constrain: str = _opt(
        "--judgerel-constrain", "grammar-constrain judge replies to the scale: auto (only the embedded model, "
        "default) | always (also remote llama.cpp-compatible servers) | never", "auto", choices=CONSTRAIN_MODES,
        env="JUDGEREL_CONSTRAIN")
    max_concurrency: int = _opt("--judgerel-max-concurrency", "concurrent model calls per process (default 16)",
                                16, type=int, check=_at_least(1))
    rpm: float | None = _opt("--judgerel-rpm", "requests-per-minute limit per process (default: none)",
                             type=float, check=_positive)
    timeout: float = _opt("--judgerel-timeout", "timeout of one model call in seconds (default 120)", 120.0,
                          type=float, check=_positive)
    backend: str = _opt(
        "--judgerel-backend", "path to the wire: auto (default: the HTTP fast path for OpenAI-compatible "
        "endpoints, openai/ and hosted_vllm/; litellm for other providers) | litellm (every call) | http (every "
        "remote call; another provider is an error)", "auto", choices=BACKENDS, env="JUDGEREL_BACKEND")
    max_attempts: int = _opt("--judgerel-max-attempts", "attempts per call on 429/5xx/timeouts (default 4)", 4,
                             type=int, check=_at_least(1))
    cache_dir: str | None = _opt("--judgerel-cache-dir", "cache directory, relative to the rootdir (default: "
                                 "<rootdir>/.judgerel_cache)", env="JUDGEREL_CACHE_DIR")
    cache_mode: str = _opt("--judgerel-cache-mode", "record (default: use hits, fill misses) | replay (a miss "
                           "is an error) | refresh | off", "record", choices=CACHE_MODES, env="JUDGEREL_CACHE_MODE")
    cache_backend: str | None = _opt("--judgerel-cache-backend", "cache backend URL: a directory (default, "
                                     "diskcache) or redis://host:port/db", env="JUDGEREL_CACHE_BACKEND")
    max_parse_failures: int = _opt("--judgerel-max-parse-failures", "judge replies that may fail to parse "
                                   "before an assertion fails (default 0)", 0, type=int, check=_at_least(0))
    reask: bool = _opt("--judgerel-reask", "re-ask once with a format reminder when a judge reply does not "
                       "parse (default true)", True, type=_bool)
    report_only: bool = _opt("--judgerel-report-only", "record and report every reliability assertion but never "
                             "fail (threshold calibration)", False, type=_bool, action="store_true")
    require_stable: bool = _opt("--judgerel-require-stable", "fail a reliability gate that passes with an "
                                "unstable verdict (0.05 < p_pass < 0.95: a rerun may flip it)", False, type=_bool,
                                action="store_true", env="JUDGEREL_REQUIRE_STABLE")
    sequential: bool = _opt("--judgerel-sequential", "sequential gates: draw repeats (ICC over repeats) or items "
                            "(pass rate, human mean) in steps and stop once the verdict at the cap (repeats(k), "
                            "all items) is settled; at the cap the verdict is the fixed rule's", False, type=_bool,
                            action="store_true", env="JUDGEREL_SEQUENTIAL")
    json: str | None = _opt("--judgerel-json", "write the metric report as JSON to this path")
    html: str | None = _opt("--judgerel-html", "write a self-contained HTML report to this path")
    baseline: str | None = _opt("--judgerel-baseline", "compare metrics with this committed baseline JSON (a "
                                "regression fails the session)")
    update_baseline: bool = _opt("--judgerel-update-baseline", "write the current metrics to the baseline file "
                                 "(accept workflow)", False, type=_bool, action="store_true")
    max_icc_drop: float = _opt("--judgerel-max-icc-drop", "baseline tolerance: largest allowed drop of an "
                               "ICC/agreement statistic (default 0.05, within [0, 2])", 0.05, type=float,
                               check=_within(0.0, 2.0))
    max_nmae_rise: float = _opt("--judgerel-max-nmae-rise", "baseline tolerance: largest allowed rise of an "
                                "nMAE (default 0.02, within [0, 1])", 0.02, type=float, check=_within(0.0, 1.0))
    history_dir: str | None = _opt("--judgerel-history", "directory of numbered run files for drift tracking, "
                                   "relative to the rootdir (default: off)", ini="judgerel_history")
    anchors: str | None = _opt("--judgerel-anchors", "anchor file of the silent-drift check: judge configurations "
                               "without anchors get a sample recorded, the others are re-judged fresh and "
                               "compared (relative to the rootdir; default: off)", env="JUDGEREL_ANCHORS")
    anchor_sample: int = _opt("--judgerel-anchor-sample", "anchors recorded per judge configuration (default 30)",
                              30, type=int, check=_at_least(3))
    progress: bool = _opt("--judgerel-progress", "show judge-call progress on the terminal (default true)", True,
                          type=_bool)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """Every option value by name (no ``sources``)."""
        return {o.dest: getattr(self, o.dest) for o in OPTIONS}


def _options() -> list[Opt]:
    out = []
    for f in fields(Settings):
        meta = f.metadata.get("opt")
        if meta is None:
            continue
        meta = dict(meta)
        ini = meta.pop("ini", None) or "judgerel_" + f.name
        out.append(Opt(dest=f.name, ini=ini, **meta))
    return out


#: The options, in ``pytest --help`` order (derived from :class:`Settings`).
OPTIONS: list[Opt] = _options()

# paths given relative are resolved against the rootdir, like the cache (one anchor for all)
_ROOTDIR_PATHS = ("cache_dir", "history_dir")


def _read(o: Opt, raw: Any, source: str) -> Any:
    from ..errors import ConfigError

    try:
        value = o.type(raw) if not isinstance(raw, bool) or o.type is _bool else raw
    except (TypeError, ValueError) as exc:
        detail = str(exc) if o.type is _bool else f"cannot read {raw!r} as {o.type.__name__}"
        raise ConfigError(f"{source}: {detail}") from None
    if o.choices and value not in o.choices:
        raise ConfigError(f"{source}: {value!r} is not one of {', '.join(o.choices)}")
    problem = o.check(value) if o.check is not None and value is not None else None
    if problem:
        raise ConfigError(f"{source}: {value!r} {problem}")
    return value


def resolve(lookup: Callable[[Opt], tuple[Any, str] | None], rootpath: str) -> Settings:
    """Resolve each option: ``lookup(opt)`` (the command line, then the ini file: ``(raw value,
    source)`` or None), then its environment variable, then its default.  Relative paths are
    anchored at ``rootpath``."""
    out: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for o in OPTIONS:
        found = lookup(o)
        raw, source = found if found is not None else (None, "")
        if raw is None and o.env:
            raw, source = os.environ.get(o.env) or None, f"env {o.env}"
        if raw is None:
            out[o.dest] = o.default
            sources[o.dest] = "default"
            continue
        out[o.dest] = _read(o, raw, source)
        sources[o.dest] = source
    for name in _ROOTDIR_PATHS:
        # relative to the rootdir, so every xdist worker and every invocation directory agree
        if out[name] is not None and not os.path.isabs(out[name]):
            out[name] = os.path.join(rootpath, out[name])
    if out["cache_dir"] is None:
        out["cache_dir"] = os.path.join(rootpath, ".judgerel_cache")
    return Settings(**out, sources=sources)


def settings_from_env(rootpath: str | None = None) -> Settings:
    """The settings outside pytest: environment variables, else defaults (paths relative to
    ``rootpath``, default the working directory)."""
    return resolve(lambda o: None, rootpath or os.getcwd())

"""Command-line options, ini keys and markers of pytest-judgerel, and the
resolved :class:`Settings` (option > ini > environment > default).

Stdlib only: this module is imported by every pytest run of a user who has the
plugin installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from .llm.backend import CACHE_MODES


MARKERS = [
    "judge(model=None, template=None, temperature=None, max_tokens=None, seed=None, top_p=None, "
    "system=None, axes=None, api_base=None, namespace=None, reask=None, constrain=None): "
    "configure the `judge` fixture for this test (pytest-judgerel)",
    "scale(*names): grading scale(s) such as '0-5', '0-10', '0-100'; a test that requests the `scale` "
    "fixture runs once per scale, others get all of them as `judge.scales` (pytest-judgerel)",
    "axis(name): the criterion the judge grades, e.g. 'coherence' (pytest-judgerel)",
    "repeats(n): how many times the judge rates each item (pytest-judgerel)",
    "judge_panel(*models): models of the `judge_panel` fixture (pytest-judgerel)",
    "patients(n=5, seed=0, severity=None, turns=20, variant=None): parametrize over sampled MindEval "
    "patient profiles; severity 'severe' or 'non_severe'; turns even; variant 'default', 'no_format' or "
    "'role_only' (None: default) (pytest-judgerel)",
]


@dataclass(frozen=True)
class Opt:
    """One setting: its command-line flag, ini key, environment variable and default."""

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
    return lambda v: None if low <= v <= high else f"must be within [{low:g}, {high:g}]"


def _finite(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    import math

    return lambda v: "must be a finite number" if isinstance(v, float) and not math.isfinite(v) else check(v)


CONSTRAIN_MODES = ("auto", "always", "never")

OPTIONS = [
    Opt("model", "--judge-model", "judgerel_model",
        "litellm model name of the judge (default: env JUDGEREL_MODEL, else the embedded local model "
        "when the 'local' extra is installed)", env="JUDGEREL_MODEL"),
    Opt("api_base", "--judge-api-base", "judgerel_api_base",
        "base URL of an OpenAI-compatible server (vLLM, llama.cpp server, Ollama) that answers every "
        "call of the session's model; its key comes from env JUDGEREL_API_KEY", env="JUDGEREL_API_BASE"),
    Opt("temperature", "--judge-temperature", "judgerel_temperature",
        "sampling temperature of judge calls (default 0.0, within [0, 2])", default=0.0, type=float,
        check=_finite(_within(0.0, 2.0))),
    Opt("max_tokens", "--judge-max-tokens", "judgerel_max_tokens",
        "max tokens of a judge reply (default 512)", default=512, type=int, check=_at_least(1)),
    Opt("repeats", "--judge-repeats", "judgerel_repeats",
        "default number of repeated judge runs per item (default 3)", default=3, type=int, check=_at_least(1)),
    Opt("constrain", "--judgerel-constrain", "judgerel_constrain",
        "grammar-constrain judge replies to the scale: auto (only the embedded model, default) | always "
        "(also remote llama.cpp-compatible servers) | never", default="auto", choices=CONSTRAIN_MODES,
        env="JUDGEREL_CONSTRAIN"),
    Opt("max_concurrency", "--judgerel-max-concurrency", "judgerel_max_concurrency",
        "concurrent model calls per process (default 16)", default=16, type=int, check=_at_least(1)),
    Opt("rpm", "--judgerel-rpm", "judgerel_rpm",
        "requests-per-minute limit per process (default: none)", default=None, type=float,
        check=_finite(lambda v: None if v > 0 else "must be > 0")),
    Opt("timeout", "--judgerel-timeout", "judgerel_timeout",
        "timeout of one model call in seconds (default 120)", default=120.0, type=float,
        check=_finite(lambda v: None if v > 0 else "must be > 0")),
    Opt("max_attempts", "--judgerel-max-attempts", "judgerel_max_attempts",
        "attempts per call on 429/5xx/timeouts (default 4)", default=4, type=int, check=_at_least(1)),
    Opt("cache_dir", "--judgerel-cache-dir", "judgerel_cache_dir",
        "cache directory, relative to the rootdir (default: <rootdir>/.judgerel_cache)", env="JUDGEREL_CACHE_DIR"),
    Opt("cache_mode", "--judgerel-cache-mode", "judgerel_cache_mode",
        "record (default: use hits, fill misses) | replay (a miss is an error) | refresh | off",
        default="record", choices=CACHE_MODES, env="JUDGEREL_CACHE_MODE"),
    Opt("cache_backend", "--judgerel-cache-backend", "judgerel_cache_backend",
        "cache backend URL: a directory (default, diskcache) or redis://host:port/db",
        env="JUDGEREL_CACHE_BACKEND"),
    Opt("max_parse_failures", "--judgerel-max-parse-failures", "judgerel_max_parse_failures",
        "judge replies that may fail to parse before an assertion fails (default 0)", default=0, type=int,
        check=_at_least(0)),
    Opt("reask", "--judgerel-reask", "judgerel_reask",
        "re-ask once with a format reminder when a judge reply does not parse (default true)",
        default=True, type=_bool),
    Opt("report_only", "--judgerel-report-only", "judgerel_report_only",
        "record and report every reliability assertion but never fail (threshold calibration)",
        default=False, type=_bool, action="store_true"),
    Opt("json", "--judgerel-json", "judgerel_json", "write the metric report as JSON to this path"),
    Opt("html", "--judgerel-html", "judgerel_html", "write a self-contained HTML report to this path"),
    Opt("baseline", "--judgerel-baseline", "judgerel_baseline",
        "compare metrics with this committed baseline JSON (a regression fails the session)"),
    Opt("update_baseline", "--judgerel-update-baseline", "judgerel_update_baseline",
        "write the current metrics to the baseline file (accept workflow)", default=False, type=_bool,
        action="store_true"),
    Opt("max_icc_drop", "--judgerel-max-icc-drop", "judgerel_max_icc_drop",
        "baseline tolerance: largest allowed drop of an ICC/agreement statistic (default 0.05, within [0, 2])",
        default=0.05, type=float, check=_finite(_within(0.0, 2.0))),
    Opt("max_nmae_rise", "--judgerel-max-nmae-rise", "judgerel_max_nmae_rise",
        "baseline tolerance: largest allowed rise of an nMAE (default 0.02, within [0, 1])", default=0.02,
        type=float, check=_finite(_within(0.0, 1.0))),
    Opt("history_dir", "--judgerel-history", "judgerel_history",
        "directory of numbered run files for drift tracking, relative to the rootdir (default: off)"),
    Opt("progress", "--judgerel-progress", "judgerel_progress",
        "show judge-call progress on the terminal (default true)", default=True, type=_bool),
]

# paths given relative are resolved against the rootdir, like the cache (one anchor for all)
_ROOTDIR_PATHS = ("cache_dir", "history_dir")


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


@dataclass(frozen=True)
class Settings:
    """Every judgerel setting, resolved once per process; ``sources`` names where each came from."""

    values: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "values":  # copy/pickle probe before __init__ ran
            raise AttributeError(name)
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None


def _read(o: Opt, raw: Any, source: str) -> Any:
    from .errors import ConfigError

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


def resolve_settings(config: Any) -> Settings:
    """Resolve each option: command line, then ini, then environment, then default.

    Values are validated here, where they are read: an error names the flag, ini key
    or environment variable it came from.
    """
    out: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for o in OPTIONS:
        raw = config.getoption(f"judgerel_{o.dest}", default=None)
        if raw in (None, False) and o.action == "store_true":
            raw = None
        source = o.flag
        if raw is None:
            raw, source = config.getini(o.ini), f"ini {o.ini}"
            if raw in (None, "", []):
                raw = None
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
            out[name] = os.path.join(str(config.rootpath), out[name])
    if out["cache_dir"] is None:
        out["cache_dir"] = os.path.join(str(config.rootpath), ".judgerel_cache")
    out["sources"] = sources
    return Settings(out)

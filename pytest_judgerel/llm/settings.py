"""The one definition of a setting and the LLM layer's settings (:class:`LLMSettings`).

A setting is a dataclass field whose metadata (:func:`option`) names its command-line flag, ini
key, environment variable, parser, choices and check; the range checks (:func:`at_least`,
:func:`within`, :func:`positive`) are the ones the markers' arguments use too.  :class:`LLMSettings` holds what the LLM
layer reads: the session's endpoint (``model``, ``api_base``), the client's cache, concurrency,
timeouts, retries, path to the wire, and the bill (dry run, call and cost caps).  The session's
:class:`~pytest_judgerel.session.settings.Settings` *extends* it with the judge, gate and report
options, so the client of a session is given the session's settings object itself (no field is
copied by hand) and every value is checked by the one :meth:`LLMSettings.__post_init__`.

Every environment variable of an option is read by :func:`environment_value` and nowhere else:
the resolution (:func:`resolve_options`: command line > ini > environment > default) and the
two readings outside a session (``LLMSettings().backend`` follows ``JUDGEREL_BACKEND``, so a whole
test suite can be switched to litellm; :func:`~pytest_judgerel.llm.endpoint.resolve_endpoint`
without settings reads ``JUDGEREL_MODEL`` / ``JUDGEREL_API_BASE``) all go through it.

Stdlib only: imported by every pytest run of a user who has the plugin installed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.backend import CACHE_MODES

__all__ = ["Opt", "option", "options_of", "read_value", "environment_value", "read_environment",
           "resolve_options", "LLMSettings", "BACKENDS", "parse_bool", "at_least", "within", "positive",
           "check_api_base", "DEFAULT_CACHE_DIR"]

#: the paths to the wire (:mod:`pytest_judgerel.llm.wire`)
BACKENDS = ("auto", "litellm", "http")
#: the cache directory when none is configured (relative to the rootdir in a session)
DEFAULT_CACHE_DIR = ".judgerel_cache"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_bool(text: Any) -> bool:
    """Strict boolean: 1/true/yes/on or 0/false/no/off (a typo such as 'flase' is an error)."""
    if isinstance(text, bool):
        return text
    word = str(text).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"{text!r} is not a boolean (use one of {', '.join(_TRUE + _FALSE)})")


parse_bool.__name__ = "bool"


def at_least(low: float, *, integer: bool = False) -> Callable[[Any], str | None]:
    """A check: the value is >= ``low`` (``integer``: the message says an integer is expected)."""
    expected = f"an integer >= {low:g}" if integer else f">= {low:g}"
    return lambda v: None if v >= low else f"must be {expected}"


def within(low: float, high: float) -> Callable[[Any], str | None]:
    """A check: the value is finite and within ``[low, high]``."""
    return lambda v: "must be a finite number" if not math.isfinite(v) else (
        None if low <= v <= high else f"must be within [{low:g}, {high:g}]")


def positive(v: Any) -> str | None:
    """A check: the value is a finite number > 0."""
    return "must be a finite number > 0" if not (math.isfinite(v) and v > 0) else None


def _price_problem(value: Any) -> str | None:
    """A check: ``IN,OUT`` USD per million tokens (:func:`pytest_judgerel.llm.prices.parse_price`)."""
    from pytest_judgerel.llm.prices import parse_price

    try:
        parse_price(value)
    except ValueError:
        return "must be IN,OUT: two numbers >= 0, USD per million prompt and completion tokens (e.g. 0.15,0.60)"
    return None


def check_api_base(value: Any) -> str | None:
    """What is wrong with ``value`` as a server's base URL, or None (an http(s) URL with a host)."""
    from urllib.parse import urlsplit

    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        return "must be an http(s) URL such as http://127.0.0.1:8000/v1"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if not parts.hostname or any(c.isspace() for c in value):
        return "must be an http(s) URL with a host, such as http://127.0.0.1:8000/v1"
    return None


@dataclass(frozen=True)
class Opt:
    """One setting: its command-line flag, ini key, environment variable, parser and check.
    ``path``: a path resolved against the rootdir; ``root_default``: the path under the rootdir
    when none is set."""

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
    path: bool = False
    root_default: str | None = None


def option(flag: str, help: str, default: Any = None, *, default_from_env: bool = False, **meta: Any) -> Any:
    """A settings field carrying its option's description (:class:`Opt` without ``dest``).
    ``default_from_env``: a value built by hand (not resolved) takes its default from the
    environment variable too (through :func:`environment_value`)."""
    description = dict(flag=flag, help=help, default=default, **meta)
    if not default_from_env:
        return field(default=default, metadata={"opt": description})
    described = Opt(dest=flag.lstrip("-").replace("judgerel-", "").replace("-", "_"), ini="", **description)

    def from_environment() -> Any:
        found = environment_value(described)
        return default if found is None else read_value(described, *found)

    return field(default_factory=from_environment, metadata={"opt": description})


def options_of(cls: type) -> list[Opt]:
    """The options of a settings dataclass, in field order (inherited fields first)."""
    out = []
    for f in fields(cls):
        meta = f.metadata.get("opt")
        if meta is None:
            continue
        meta = dict(meta)
        ini = meta.pop("ini", None) or "judgerel_" + f.name
        out.append(Opt(dest=f.name, ini=ini, **meta))
    return out


def environment_value(o: Opt) -> tuple[str, str] | None:
    """``(raw text, "env NAME")`` of the option's environment variable, or None when it is unset or
    blank: the one place an option's variable is read."""
    if not o.env:
        return None
    raw = os.environ.get(o.env, "").strip()
    return (raw, f"env {o.env}") if raw else None


def read_value(o: Opt, raw: Any, source: str) -> Any:
    """``raw`` parsed by the option's type and checked against its choices and check; a
    ConfigError names ``source`` (the flag, ini key or variable it came from)."""
    try:
        value = o.type(raw) if not isinstance(raw, bool) or o.type is parse_bool else raw
    except (TypeError, ValueError) as exc:
        detail = str(exc) if o.type is parse_bool else f"cannot read {raw!r} as {o.type.__name__}"
        raise ConfigError(f"{source}: {detail}") from None
    return checked(o, value, source)


def checked(o: Opt, value: Any, source: str) -> Any:
    """``value`` if it is among the option's choices and passes its check, else a ConfigError."""
    prefix = "" if source == o.dest else f"{source}: "
    if o.choices and value not in o.choices:
        raise ConfigError(f"{prefix}{o.dest} must be one of {', '.join(o.choices)}, got {value!r}")
    problem = o.check(value) if o.check is not None and value is not None else None
    if problem:
        raise ConfigError(f"{source}: {value!r} {problem}")
    return value


def read_environment(cls: type, name: str) -> tuple[Any, str] | None:
    """``(value, "env NAME")`` of setting ``name`` of ``cls`` from its environment variable, or None."""
    for o in options_of(cls):
        if o.dest == name:
            found = environment_value(o)
            return None if found is None else (read_value(o, *found), found[1])
    raise KeyError(name)


def resolve_options(cls: type, lookup: Callable[[Opt], tuple[Any, str] | None], rootpath: str) -> Any:
    """``cls`` resolved: for each option ``lookup(opt)`` (the command line, then the ini file:
    ``(raw value, source)`` or None), then its environment variable, then its default.  Paths are
    anchored at ``rootpath`` (so every xdist worker and invocation directory agree)."""
    out: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for o in options_of(cls):
        found = lookup(o) or environment_value(o)
        if found is None or found[0] is None:
            value, source = o.default, "default"
        else:
            value, source = read_value(o, found[0], found[1]), found[1]
        if o.path and value is None and o.root_default:
            value = o.root_default
        if o.path and value is not None and not os.path.isabs(value):
            value = os.path.join(rootpath, value)
        out[o.dest], sources[o.dest] = value, source
    return cls(**out, sources=sources)


def _type_problem(o: Opt, value: Any) -> str | None:
    """What is wrong with the type of a value given by hand (the resolution parses text)."""
    if o.type is int and (isinstance(value, bool) or not isinstance(value, int)):
        return "must be an int"
    if o.type is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return "must be a number"
    if o.type is parse_bool and not isinstance(value, bool):
        return "must be True or False"
    if o.type is str and not isinstance(value, str) and not (o.path and isinstance(value, os.PathLike)):
        return "must be a string"
    return None


@dataclass(frozen=True)
class LLMSettings:
    """The LLM layer's settings (module docstring); built by hand for a client of your own, or
    resolved with the session's options (:class:`~pytest_judgerel.session.settings.Settings`
    extends it).

    ``timeout`` is per attempt (seconds); ``rpm`` = requests per minute (None = no limit);
    ``cache_backend`` is a directory or a shared store's URL (``redis://``, ``rediss://``,
    ``unix://``) that replaces the diskcache directory ``cache_dir`` (an unknown scheme fails when
    the cache opens); ``backend`` is the path to the wire
    (:mod:`pytest_judgerel.llm.wire`), by default ``JUDGEREL_BACKEND``, else ``auto``;
    ``run_id``, when set, lists the keys this client served under it (``finish_run``).
    """

    model: str | None = option(
        "--judge-model", "litellm model name of the judge (default: env JUDGEREL_MODEL, else the embedded local "
        "model when the 'local' extra is installed)", env="JUDGEREL_MODEL")
    api_base: str | None = option(
        "--judge-api-base", "base URL of an OpenAI-compatible server (vLLM, llama.cpp server, Ollama) that answers "
        "every call of the session's model; its key comes from env JUDGEREL_API_KEY", env="JUDGEREL_API_BASE",
        check=check_api_base)
    max_concurrency: int = option("--judgerel-max-concurrency", "concurrent model calls per process (default 16)",
                                  16, type=int, check=at_least(1))
    rpm: float | None = option("--judgerel-rpm", "requests-per-minute limit per process (default: none)",
                               type=float, check=positive)
    timeout: float = option("--judgerel-timeout", "timeout of one model call in seconds (default 120)", 120.0,
                            type=float, check=positive)
    backend: str = option(
        "--judgerel-backend", "path to the wire: auto (default: the HTTP fast path for OpenAI-compatible "
        "endpoints, openai/ and hosted_vllm/; litellm for other providers) | litellm (every call) | http (every "
        "remote call; another provider is an error)", "auto", choices=BACKENDS, env="JUDGEREL_BACKEND",
        default_from_env=True)
    max_attempts: int = option("--judgerel-max-attempts", "attempts per call on 429/5xx/timeouts (default 4)", 4,
                               type=int, check=at_least(1))
    cache_dir: str | os.PathLike[str] | None = option(
        "--judgerel-cache-dir", "cache directory, relative to the rootdir (default: <rootdir>/.judgerel_cache)",
        env="JUDGEREL_CACHE_DIR", path=True, root_default=DEFAULT_CACHE_DIR)
    cache_mode: str = option("--judgerel-cache-mode", "record (default: use hits, fill misses) | replay (a miss "
                             "is an error) | refresh | off", "record", choices=CACHE_MODES,
                             env="JUDGEREL_CACHE_MODE")
    cache_backend: str | None = option("--judgerel-cache-backend", "cache backend: a directory (diskcache) or the "
                                       "URL of a shared store (redis://host:port/db), replacing --judgerel-cache-dir",
                                       env="JUDGEREL_CACHE_BACKEND")
    dry_run: bool = option(
        "--judgerel-dry-run", "run the tests without calling any model: cache hits are served, every miss is "
        "answered by a placeholder that parses and counted as a planned call; gates report only; prints the "
        "planned calls, tokens, cost and time (docs/llm.md)", False, type=parse_bool, action="store_true",
        env="JUDGEREL_DRY_RUN")
    max_calls: int | None = option(
        "--judgerel-max-calls", "budget: at most this many upstream model calls in the session (all xdist "
        "workers together); the call past it fails with BudgetExceededError and the run stops calling",
        type=int, check=at_least(0), env="JUDGEREL_MAX_CALLS")
    max_cost: float | None = option(
        "--judgerel-max-cost", "budget: at most this many USD of upstream calls in the session (priced models; "
        "all xdist workers together); each request reserves its worst-case cost before it is sent",
        type=float, check=at_least(0), env="JUDGEREL_MAX_COST")
    price_per_mtok: str | None = option(
        "--judgerel-price-per-mtok", "IN,OUT: USD per million prompt and completion tokens of models without a "
        "price in litellm's table (e.g. a server of your own); prices their calls, the dry run's plan and the "
        "--judgerel-max-cost reservations", check=_price_problem, env="JUDGEREL_PRICE_PER_MTOK")
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    retry_after_cap: float = 30.0
    run_id: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for o in options_of(type(self)):
            value = getattr(self, o.dest)
            if value is None:
                continue
            source = self.sources.get(o.dest) or o.dest
            problem = _type_problem(o, value)
            if problem:
                raise ConfigError(f"{source}: {value!r} {problem}")
            checked(o, value, source)

    @classmethod
    def from_env(cls, rootpath: str | None = None) -> Any:
        """The settings from the environment variables, else the defaults (paths relative to
        ``rootpath``, default the working directory): what a session without options resolves."""
        return resolve_options(cls, lambda o: None, rootpath or os.getcwd())

    @property
    def cache_path(self) -> str | os.PathLike[str]:
        """The diskcache directory (``cache_dir``, else :data:`DEFAULT_CACHE_DIR`)."""
        return self.cache_dir if self.cache_dir is not None else DEFAULT_CACHE_DIR

    def as_dict(self) -> dict[str, Any]:
        """Every option value by name (no ``sources``)."""
        return {o.dest: getattr(self, o.dest) for o in options_of(type(self))}

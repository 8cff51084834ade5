"""The session settings: every option, ini key and environment variable, resolved into typed
:class:`Settings`.

Each setting is one field of :class:`Settings` whose metadata names its flag, ini key,
environment variable, help text and check: the one home of every option.  :class:`Settings`
extends the LLM layer's :class:`~pytest_judgerel.llm.settings.LLMSettings` (the endpoint, the
client's cache, concurrency, retries, wire and budget options live there, because the LLM
layer sits below the session and reads them), so the session's client is given this object
itself; the option machinery (parsing, checks, the one reader of environment variables) is
:mod:`pytest_judgerel.llm.settings`.  Questions several layers ask of the settings are answered
here once (:attr:`Settings.gates_report_only`).

Resolution order: option > ini > environment > default (:func:`resolve`); values are validated
where they are read, and an error names the flag, ini key or variable the value came from.
Inside pytest the plugin (:mod:`pytest_judgerel.plugin.options`) supplies the command line
and the ini file; outside pytest :func:`settings_from_env` reads the environment alone, so
both resolve the same way.

Stdlib only (and the core's small constant modules): imported by every pytest run of a
user who has the plugin installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..llm.endpoint import CONSTRAIN_MODES
from ..llm.settings import LLMSettings, Opt, at_least, option, options_of, parse_bool, resolve_options, within

__all__ = ["Settings", "Opt", "OPTIONS", "resolve", "settings_from_env"]


@dataclass(frozen=True)
class Settings(LLMSettings):
    """Every judgerel setting of a session, resolved once (see the module docstring).

    ``sources`` names where each value came from (``--judge-model``, ``ini judgerel_model``,
    ``env JUDGEREL_MODEL`` or ``default``).  Relative ``cache_dir`` and ``history_dir`` are
    resolved against the rootdir.
    """

    temperature: float = option("--judge-temperature", "sampling temperature of judge calls (default 0.0, within "
                                "[0, 2])", 0.0, type=float, check=within(0.0, 2.0))
    max_tokens: int = option("--judge-max-tokens", "max tokens of a judge reply (default 512)", 512, type=int,
                             check=at_least(1))
    repeats: int = option("--judge-repeats", "default number of repeated judge runs per item (default 3)", 3,
                          type=int, check=at_least(1))
    constrain: str = option(
        "--judgerel-constrain", "grammar-constrain judge replies to the scale: auto (only the embedded model, "
        "default) | always (also remote llama.cpp-compatible servers) | never", "auto", choices=CONSTRAIN_MODES,
        env="JUDGEREL_CONSTRAIN")
    max_parse_failures: int = option("--judgerel-max-parse-failures", "judge replies that may fail to parse "
                                     "before an assertion fails (default 0)", 0, type=int, check=at_least(0))
    reask: bool = option("--judgerel-reask", "re-ask once with a format reminder when a judge reply does not "
                         "parse (default true)", True, type=parse_bool)
    report_only: bool = option("--judgerel-report-only", "record and report every reliability assertion but never "
                               "fail (threshold calibration)", False, type=parse_bool, action="store_true")
    require_stable: bool = option("--judgerel-require-stable", "fail a reliability gate that passes with an "
                                  "unstable verdict (0.05 < p_pass < 0.95: a rerun may flip it)", False,
                                  type=parse_bool, action="store_true", env="JUDGEREL_REQUIRE_STABLE")
    sequential: bool = option("--judgerel-sequential", "sequential gates: draw repeats (ICC over repeats) or items "
                              "(pass rate, human mean) in steps and stop once the verdict at the cap (repeats(k), "
                              "all items) is settled; at the cap the verdict is the fixed rule's", False,
                              type=parse_bool, action="store_true", env="JUDGEREL_SEQUENTIAL")
    json: str | None = option("--judgerel-json", "write the metric report as JSON to this path")
    html: str | None = option("--judgerel-html", "write a self-contained HTML report to this path")
    markdown: str | None = option("--judgerel-markdown", "write a Markdown summary (GitHub-flavoured: the gate "
                                  "table, what needs review first, the bill) to this path")
    step_summary: str | None = option("--judgerel-step-summary", "append the Markdown summary to this file "
                                      "(default: $GITHUB_STEP_SUMMARY, set by GitHub Actions; 'off' disables it)",
                                      env="GITHUB_STEP_SUMMARY")
    baseline: str | None = option("--judgerel-baseline", "compare metrics with this committed baseline JSON (a "
                                  "regression fails the session)")
    update_baseline: bool = option("--judgerel-update-baseline", "write the current metrics to the baseline file "
                                   "(accept workflow)", False, type=parse_bool, action="store_true")
    max_icc_drop: float = option("--judgerel-max-icc-drop", "baseline tolerance: largest allowed drop of an "
                                 "ICC/agreement statistic (default 0.05, within [0, 2])", 0.05, type=float,
                                 check=within(0.0, 2.0))
    max_nmae_rise: float = option("--judgerel-max-nmae-rise", "baseline tolerance: largest allowed rise of an "
                                  "nMAE (default 0.02, within [0, 1])", 0.02, type=float, check=within(0.0, 1.0))
    history_dir: str | None = option("--judgerel-history", "directory of numbered run files for drift tracking, "
                                     "relative to the rootdir (default: off)", ini="judgerel_history",
                                     path=True)
    anchors: str | None = option("--judgerel-anchors", "anchor file of the silent-drift check: judge configurations "
                                 "without anchors get a sample recorded, the others are re-judged fresh and "
                                 "compared (relative to the rootdir; default: off)", env="JUDGEREL_ANCHORS")
    anchor_sample: int = option("--judgerel-anchor-sample", "anchors recorded per judge configuration: the first 30 "
                                "re-judged every session, the rest only when those are not clearly steady "
                                "(default 40)", 40, type=int, check=at_least(3))
    progress: bool = option("--judgerel-progress", "show judge-call progress on the terminal (default true)", True,
                            type=parse_bool)

    @property
    def gates_report_only(self) -> bool:
        """Whether gates record without ever failing: ``--judgerel-report-only``, or a dry run
        (its placeholder answers can decide nothing)."""
        return bool(self.report_only or self.dry_run)


#: The options, in ``pytest --help`` order (derived from :class:`Settings`: the LLM layer's first).
OPTIONS: list[Opt] = options_of(Settings)


def resolve(lookup: Callable[[Opt], tuple[Any, str] | None], rootpath: str) -> Settings:
    """Resolve each option: ``lookup(opt)`` (the command line, then the ini file: ``(raw value,
    source)`` or None), then its environment variable, then its default
    (:func:`pytest_judgerel.llm.settings.resolve_options`).  Relative paths are anchored at ``rootpath``."""
    settings: Settings = resolve_options(Settings, lookup, rootpath)
    return settings


def settings_from_env(rootpath: str | None = None) -> Settings:
    """The settings outside pytest: environment variables, else defaults (paths relative to
    ``rootpath``, default the working directory)."""
    return resolve(lambda o: None, rootpath or os.getcwd())

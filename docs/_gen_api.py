"""Regenerate docs/api.md from the code: every public name, its signature, purpose, returns, raises.

    python docs/_gen_api.py            # rewrite docs/api.md
    python docs/_gen_api.py --check    # exit 1 if docs/api.md is out of date

Signatures come from ``inspect.signature``; the purpose is the first docstring line unless
``PURPOSE`` below overrides it (hand-written prose lives here so a regeneration keeps it);
"raises" lists the exception classes raised directly in the function's own source
(``raise X``), plus ``RAISES`` overrides for names whose errors come from helpers.
The ``judgerel`` CLI section is generated from the argparse parser.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

OUT = Path(__file__).with_name("api.md")

# (module, how the public names are found, heading, intro)
SECTIONS = [
    ("pytest_judgerel", "__all__", "`pytest_judgerel`",
     "The top-level package: judges, ratings, scales, assertion helpers, data sets, errors. "
     "Names are imported lazily, so `import pytest_judgerel` costs nothing."),
    ("pytest_judgerel.stats", "__all__", "`pytest_judgerel.stats`",
     "Pure numpy/scipy statistics (see [concepts.md](concepts.md)). Every function that takes "
     "ratings accepts an items x raters array-like (NaN = missing) or an object with `to_matrix()`."),
    ("pytest_judgerel.stats.ranking", "__all__", "`pytest_judgerel.stats.ranking`",
     "Meta-evaluation and ranking statistics used by MindEval (see [mindeval.md](mindeval.md))."),
    ("pytest_judgerel.probes", "__all__", "`pytest_judgerel.probes`",
     "Bias probes: position, length and self-preference of any judge, the injection probe and its attack "
     "battery, and the pairwise verdict parser (see the recipes [position-bias.md](recipes/position-bias.md), "
     "[length-bias.md](recipes/length-bias.md), [self-preference.md](recipes/self-preference.md), "
     "[injection-probe.md](recipes/injection-probe.md)). Gate the results with the `assert_*` helpers of "
     "`pytest_judgerel`."),
    ("pytest_judgerel.llm", "__all__", "`pytest_judgerel.llm`",
     "The model-call layer: requests, cache, retries, providers (see [llm.md](llm.md))."),
    ("pytest_judgerel.testing", "__all__", "`pytest_judgerel.testing`",
     "Test support for your own suites: the fake OpenAI-compatible server with fault injection, the "
     "failures a scripted model raises, and the `fake_llm_server` fixture (see "
     "[llm.md](llm.md#testing-your-own-code-without-a-model))."),
    ("pytest_judgerel.mindeval", "__all__", "`pytest_judgerel.mindeval`",
     "MindEval (seed 004) as a library (see [mindeval.md](mindeval.md))."),
    ("pytest_judgerel.study", "__all__", "`pytest_judgerel.study`",
     "The grading-scale study of seed 001 (see [study.md](study.md)): the analysis names of "
     "`pytest_judgerel.study.analysis`, exported by the package."),
    ("pytest_judgerel.study.release", "defined", "`pytest_judgerel.study.release`",
     "The loader of seed 001's data release (see [study.md](study.md#the-paper-from-its-own-data)); public names "
     "are those defined in it without a leading underscore."),
    ("pytest_judgerel.study.reproduce", "defined", "`pytest_judgerel.study.reproduce`",
     "Seed 001's tables recomputed from its data release and compared with the paper, cell by cell "
     "(`judgerel study reproduce`)."),
]

# Hand-written one-line purposes (override or complete the docstring's first line).
PURPOSE = {
    "pytest_judgerel.NAMED_SCALES": "The built-in scales by name: `\"0-5\"`, `\"0-10\"`, `\"0-100\"`, `\"1-5\"`, `\"1-6\"`, `\"1-10\"` (any `\"LOW-HIGH\"` also parses).",
    "pytest_judgerel.__version__": "The package version string.",
    "pytest_judgerel.Judge": "An LLM judge: a template, a scale and sampling settings; `rate()` returns items x repeats `Ratings`.",
    "pytest_judgerel.agreement": "Human-judge agreement (ICC(A,1) on [human mean, judge mean] and nMAE, each side normalised on its own scale), pooled and per group, without asserting.",
    "pytest_judgerel.stats.FORMS": "The six canonical ICC form names `(\"1,1\", \"A,1\", \"C,1\", \"1,k\", \"A,k\", \"C,k\")`.",
    "pytest_judgerel.llm.CACHE_MODES": "The cache modes: `record`, `replay`, `refresh`, `off`.",
    "pytest_judgerel.llm.LOCAL_MODEL": "The model name of the embedded local model (`local/smollm2`).",
    "pytest_judgerel.llm.unregister_scripted": "Remove a model registered with `register_scripted`.",
    "pytest_judgerel.mindeval.ATTRIBUTE_KEYS": "The 25 profile attribute names of MindEval section 2.1.",
    "pytest_judgerel.mindeval.AXES": "The five judge axes `{abbreviation: full name}`: CAC Clinical Accuracy & Competence, EPC Ethical & Professional Conduct, AR Assessment & Response, TRA Therapeutic Relationship & Alliance, ASCQ AI-Specific Communication Quality.",
    "pytest_judgerel.mindeval.AXIS_ABBREVIATIONS": "The five axis abbreviations in the paper's order.",
    "pytest_judgerel.mindeval.load_interactions": "Read interactions written by `save_interactions` (or `output_path=`).",
    "pytest_judgerel.mindeval.load_prompt": "The text of a shipped MindEval prompt file by name.",
    "pytest_judgerel.study.ERROR_THRESHOLD": "Normalised error above which an item counts as an error (0.1, seed 001 section 5.4).",
}

# Errors raised through helpers (not visible as `raise X` in the function body).
RAISES = {
    "pytest_judgerel.stats.anchor_comparison": ["ReliabilityError", "ScaleError"],
    "pytest_judgerel.stats.pearson": ["ReliabilityError"],
    "pytest_judgerel.mindeval.arun_interactions": ["ConfigError", "InteractionError"],
    "pytest_judgerel.assert_icc_above": ["JudgeReliabilityFailure", "ReliabilityError", "RatingsError", "ValueError"],
    "pytest_judgerel.assert_scale_consistent": ["JudgeReliabilityFailure", "ReliabilityError", "ScaleError",
                                                "ValueError"],
    "pytest_judgerel.assert_agreement": ["JudgeReliabilityFailure", "ReliabilityError", "RatingsError"],
    "pytest_judgerel.assert_nmae_below": ["JudgeReliabilityFailure", "ReliabilityError", "RatingsError"],
    "pytest_judgerel.assert_position_consistent": ["JudgeReliabilityFailure", "ReliabilityError"],
    "pytest_judgerel.assert_no_length_bias": ["JudgeReliabilityFailure"],
    "pytest_judgerel.assert_no_self_preference": ["JudgeReliabilityFailure"],
    "pytest_judgerel.assert_pass_rate": ["JudgeReliabilityFailure", "ReliabilityError"],
    "pytest_judgerel.assert_human_mean_above": ["JudgeReliabilityFailure", "ReliabilityError"],
    "pytest_judgerel.assert_injection_resistant": ["JudgeReliabilityFailure", "ReliabilityError", "ConfigError",
                                                   "LLMCallError", "CacheMissError"],
    "pytest_judgerel.probes.injection_probe": ["ConfigError", "LLMCallError", "CacheMissError"],
    "pytest_judgerel.assert_human_mean_difference": ["JudgeReliabilityFailure", "ReliabilityError"],
    "pytest_judgerel.stats.ppi_mean": ["ReliabilityError"],
    "pytest_judgerel.stats.ppi_mean_by": ["ReliabilityError"],
    "pytest_judgerel.stats.ppi_mean_difference": ["ReliabilityError"],
    "pytest_judgerel.probes.position_bias": ["ConfigError", "LLMCallError", "CacheMissError"],
    "pytest_judgerel.probes.length_bias": ["ConfigError", "ReliabilityError", "LLMCallError", "CacheMissError"],
    "pytest_judgerel.probes.self_preference": ["ConfigError", "ReliabilityError", "LLMCallError", "CacheMissError"],
    "pytest_judgerel.Judge": ["ConfigError", "LLMCallError", "CacheMissError"],
    "pytest_judgerel.stats.icc": ["ReliabilityError"],
    "pytest_judgerel.stats.icc_table": ["ReliabilityError"],
    "pytest_judgerel.llm.LLMClient": ["LLMCallError", "CacheMissError", "ConfigError"],
}

# Return values the annotations do not state.
RETURNS = {
    "pytest_judgerel.assert_icc_above": "the `ICCResult` (when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_scale_consistent": "the `ScaleConsistencyResult` (when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_agreement": "the `AgreementResult` (`pytest_judgerel.gates.reliability`: `.icc`, `.nmae`, `.groups`)",
    "pytest_judgerel.assert_nmae_below": "the `AgreementResult` whose `.nmae` was gated",
    "pytest_judgerel.assert_position_consistent": "the `PositionBiasResult` it was given (when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_no_length_bias": "the `LengthBiasResult` it was given (when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_no_self_preference": "the `SelfPreferenceProbeResult` it was given (when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_pass_rate": "the `CorrectedPassRate` (`pytest_judgerel.stats`; when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_injection_resistant": "the `InjectionResult` (`pytest_judgerel.probes`; when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_human_mean_above": "the `PPIMean` (`pytest_judgerel.stats`; when the gate passes, or always in report-only mode)",
    "pytest_judgerel.assert_human_mean_difference": "the `PPIDifference` (`pytest_judgerel.stats`; when the gate passes, or always in report-only mode)",
    "pytest_judgerel.agreement": "an `AgreementResult` (`pytest_judgerel.gates.reliability`): pooled `.icc` and `.nmae`, and `.groups`",
}

_RAISE_RE = re.compile(r"\braise\s+([A-Z][A-Za-z0-9_]*)")


def public_names(module_name: str, how: str) -> list[str]:
    module = importlib.import_module(module_name)
    if how == "__all__":
        return list(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if getattr(obj, "__module__", module_name) != module_name and (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not (inspect.isclass(obj) or inspect.isfunction(obj) or name.isupper()):
            continue
        names.append(name)
    return names


def _format_params(obj) -> str:
    """``(a: int = 1, *, b: str = 'x') -> T`` with string annotations unquoted, defaults as repr."""
    sig = inspect.signature(obj)
    parts, kw_only_marked = [], False
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not kw_only_marked:
            parts.append("*")
            kw_only_marked = True
        if p.kind is p.VAR_POSITIONAL:
            kw_only_marked = True
            text = "*" + p.name
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        else:
            text = p.name
        if p.annotation is not p.empty:
            ann = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
            text += f": {ann}"
        if p.default is not p.empty:
            text += f" = {_short_repr(p.default)}"
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    out = "(" + ", ".join(parts) + ")"
    ret = sig.return_annotation
    if ret is not sig.empty:
        out += " -> " + (ret if isinstance(ret, str) else inspect.formatannotation(ret))
    return out


def _short_repr(value) -> str:
    text = repr(value)
    if "<factory>" in text or len(text) > 60:
        return "..." if len(text) > 60 else text
    return text


def _signature(name: str, obj) -> str:
    if inspect.isclass(obj) or callable(obj):  # callable: also lru_cache-wrapped functions
        try:
            return f"{name}{_format_params(obj)}"
        except (TypeError, ValueError):
            return f"{name}(message)" if inspect.isclass(obj) and issubclass(obj, BaseException) else f"{name}(...)"
    return f"{name}: {type(obj).__name__} = {_short_repr(obj)}"


def _methods(obj) -> list[str]:
    """Public methods and properties defined by a (non-exception) class, one line each."""
    if not inspect.isclass(obj) or issubclass(obj, BaseException):
        return []
    lines = []
    for name, member in vars(obj).items():
        if name.startswith("_"):
            continue
        func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        if isinstance(member, property):
            doc = _first_line(member.fget) if member.fget else ""
            lines.append(f"- `.{name}` (property)" + (f": {doc}" if doc else ""))
        elif inspect.isfunction(func):
            try:
                sig = _format_params(func)
            except (TypeError, ValueError):
                sig = "(...)"
            sig = sig.replace("(self, ", "(").replace("(self)", "()").replace("(cls, ", "(").replace("(cls)", "()")
            doc = _first_line(func)
            lines.append(f"- `.{name}{sig}`" + (f": {doc}" if doc else ""))
    return lines


def _first_line(obj) -> str:
    doc = inspect.getdoc(obj) if (inspect.isclass(obj) or callable(obj)) else None
    if not doc:
        return ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ")
    return first


def _returns(obj) -> str:
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return ""
        return f"an instance of `{obj.__name__}`"
    if callable(obj):
        try:
            ann = inspect.signature(obj).return_annotation
        except (TypeError, ValueError):
            return ""
        if ann is inspect.Signature.empty:
            return ""
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
        return f"`{text}`"
    return ""


def _raises(qualname: str, obj) -> list[str]:
    found: list[str] = list(RAISES.get(qualname, []))
    obj = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
    if inspect.isfunction(obj):
        try:
            src = inspect.getsource(obj)
        except (OSError, TypeError):
            src = ""
        for exc in _RAISE_RE.findall(src):
            if exc not in found and exc != "NotImplementedError":
                found.append(exc)
    return found


def _cli_section() -> list[str]:
    from pytest_judgerel.__main__ import build_parser

    lines = ["## The `judgerel` command", "",
             "`judgerel` (also `python -m pytest_judgerel`) maintains caches, reports and run history. "
             "Exit codes: 0 fine, 1 a baseline regression, 2 bad input.", ""]

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            usage = " ".join(parser.format_usage().split())
            usage = usage.replace("usage: ", "")
            helps = {c.dest: c.help for c in []}
            lines.append(f"### `{prefix}`")
            lines.append("")
            lines.append(f"    {usage}")
            lines.append("")
            for action in parser._actions:
                if action.help in (None, argparse.SUPPRESS) or "-h" in action.option_strings:
                    continue
                flag = ", ".join(action.option_strings) or action.dest
                lines.append(f"- `{flag}`: {action.help}")
            if len(lines) and lines[-1] != "":
                lines.append("")
            return
        for sub in subs:
            descriptions = {c.dest: c.help for c in sub._choices_actions}
            for name, child in sub.choices.items():
                if descriptions.get(name):
                    child.description = child.description or descriptions[name]
                walk(child, f"{prefix} {name}")
                if descriptions.get(name):
                    # one-line purpose right below the heading
                    idx = lines.index(f"### `{prefix} {name}`") if f"### `{prefix} {name}`" in lines else None
                    if idx is not None:
                        lines.insert(idx + 1, "")
                        lines.insert(idx + 2, descriptions[name][0].upper() + descriptions[name][1:] + ".")

    walk(build_parser(), "judgerel")
    return lines


def _anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation (but not _ or -) dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")


def render() -> str:
    out = ["<!-- generated by docs/_gen_api.py: edit PURPOSE/RAISES there, then regenerate -->",
           "# API reference", "",
           "Every public name of pytest-judgerel, with its signature (generated from the code), "
           "its purpose, what it returns and the errors it raises itself. The exception types live in "
           "`pytest_judgerel.errors`; all derive from `JudgerelError` except `JudgeReliabilityFailure`, "
           "which is an `AssertionError`. Each name's heading is its import path. Regenerate the page with "
           "`python docs/_gen_api.py` (`--check` tells whether it is current); hand-written purposes live in "
           "that script.", "",
           "Contents: " + ", ".join(f"[{h}](#{_anchor(h)})"
                                    for _, _, h, _ in SECTIONS) + ", [the `judgerel` command](#the-judgerel-command).",
           ""]
    for module_name, how, heading, intro in SECTIONS:
        module = importlib.import_module(module_name)
        out += [f"## {heading}", "", intro, ""]
        for name in public_names(module_name, how):
            obj = getattr(module, name)
            qual = f"{module_name}.{name}"
            out.append(f"### `{qual}`")
            out.append("")
            out.append("```python")
            out.append(_signature(name, obj))
            out.append("```")
            out.append("")
            purpose = PURPOSE.get(qual) or _first_line(obj) or "(no docstring)"
            out.append(purpose)
            ret = RETURNS.get(qual) or _returns(obj)
            raises = _raises(qual, obj)
            facts = []
            if ret:
                facts.append(f"Returns: {ret}.")
            if raises:
                facts.append("Raises: " + ", ".join(f"`{r}`" for r in raises) + ".")
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                bases = ", ".join(f"`{b.__name__}`" for b in obj.__bases__)
                facts.append(f"Subclass of {bases}.")
            if facts:
                out.append("")
                out.append(" ".join(facts))
            methods = _methods(obj)
            if methods:
                out.append("")
                out.extend(methods)
            out.append("")
    out += _cli_section()
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description="regenerate docs/api.md")
    args.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is out of date")
    ns = args.parse_args(argv)
    text = render()
    if ns.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print("docs/api.md is out of date: run python docs/_gen_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

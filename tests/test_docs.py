"""The documentation is checked like code.

(a) every relative link in README.md and docs/**/*.md points to an existing file;
(b) every Python block marked runnable in docs/quickstart.md, docs/study.md and docs/recipes/*.md runs, offline,
    in a fresh temporary directory (convention: a line ``<!-- runnable -->`` right before the
    opening ```python fence);
(c) every name documented in docs/api.md exists, and every public name is documented there;
(d) every pytest option (``--judge-*``, ``--judgerel-*``) and every ``judgerel`` subcommand the
    docs mention exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKDOWN = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
RUNNABLE_PAGES = [DOCS / "quickstart.md", DOCS / "study.md", *sorted((DOCS / "recipes").glob("*.md"))]
RUNNABLE_MARK = "<!-- runnable -->"
SNIPPET_TIMEOUT = 240

_FENCE_RE = re.compile(r"^(```|~~~)")
_LINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks and outside inline code spans."""
    out, in_fence = [], False
    for line in text.splitlines():
        if _FENCE_RE.match(line.strip()):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def relative_links(path: Path, with_anchors: bool = False) -> list[str]:
    """Relative link targets outside code; same-page ``#anchor`` links only ``with_anchors``."""
    links = []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        for target in _LINK_RE.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto: ...
            if target.startswith("#") and not with_anchors:
                continue
            links.append(target)
    return links


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page offers: its headings (with GitHub's -1, -2 suffixes) and explicit ids."""
    text = path.read_text(encoding="utf-8")
    found: set[str] = set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    in_fence = False
    for line in text.splitlines():
        if _FENCE_RE.match(line.strip()):
            in_fence = not in_fence
            continue
        m = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_anchor(m.group(1))
            n = seen.get(slug, 0)
            found.add(slug if n == 0 else f"{slug}-{n}")
            seen[slug] = n + 1
    return found


def runnable_blocks(path: Path) -> list[tuple[int, str]]:
    """``(line number, code)`` of each ```python block preceded by the runnable marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != RUNNABLE_MARK:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not lines[j].strip().startswith("```python"):
            raise AssertionError(f"{_rel(path)}:{i + 1}: {RUNNABLE_MARK} is not followed by a ```python block")
        end = j + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end >= len(lines):
            raise AssertionError(f"{_rel(path)}:{j + 1}: unterminated code block")
        blocks.append((j + 1, "\n".join(lines[j + 1:end]) + "\n"))
    return blocks


def _api_generator():
    spec = importlib.util.spec_from_file_location("_gen_api", DOCS / "_gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------- (a) links
def test_docs_exist_and_are_found():
    names = {_rel(p) for p in MARKDOWN}
    for required in ("README.md", "docs/index.md", "docs/quickstart.md", "docs/troubleshooting.md", "docs/api.md"):
        assert required in names, f"{required} is missing"
    assert len(RUNNABLE_PAGES) >= 6, [str(p) for p in RUNNABLE_PAGES]


@pytest.mark.parametrize("page", MARKDOWN, ids=_rel)
def test_relative_links_point_to_existing_files(page: Path):
    broken = []
    for target in relative_links(page, with_anchors=True):
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{_rel(page)} has broken links: {broken}"


def test_link_checker_sees_links_and_skips_code(tmp_path: Path):
    sample = "see [a](docs/a.md) and [b](https://x.y) `[c](no.md)`\n```\n[d](code.md)\n```\n![img](pic.png)\n"
    page = tmp_path / "probe.md"
    page.write_text(sample, encoding="utf-8")
    assert relative_links(page) == ["docs/a.md"]


def test_anchor_slugs_follow_github():
    assert github_anchor("`database is locked`") == "database-is-locked"
    assert github_anchor("Reports, baselines, history and CI gates") == "reports-baselines-history-and-ci-gates"
    assert github_anchor("Which ICC answers which question about a judge") == "which-icc-answers-which-question-about-a-judge"
    assert github_anchor("The full configuration: 50 patients x 20 turns") == "the-full-configuration-50-patients-x-20-turns"


# --------------------------------------------------------------------------- (b) snippets
def _snippets() -> list:
    params = []
    for page in RUNNABLE_PAGES:
        if not page.exists():
            continue  # test_docs_exist_and_are_found reports it
        for line, code in runnable_blocks(page):
            params.append(pytest.param(page, code, id=f"{_rel(page)}:{line}"))
    return params


def test_every_runnable_page_has_a_runnable_block():
    missing = [_rel(p) for p in RUNNABLE_PAGES if not p.exists() or not runnable_blocks(p)]
    assert not missing, f"pages without a runnable snippet: {missing}"


@pytest.mark.parametrize(("page", "code"), _snippets())
def test_runnable_snippet_runs(page: Path, code: str, tmp_path: Path):
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEREL_", "PYTEST_", "OPENAI_", "ANTHROPIC_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=SNIPPET_TIMEOUT)
    assert proc.returncode == 0, (
        f"snippet from {_rel(page)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
        f"\n--- stderr\n{proc.stderr[-4000:]}")


# ------------------------------------------------------------------------------- (c) API
def _documented_names() -> list[str]:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    return re.findall(r"^### `(pytest_judgerel[\w.]*)`$", text, re.M)


def test_every_documented_name_exists():
    names = _documented_names()
    assert len(names) > 100, f"docs/api.md lists only {len(names)} names"
    missing = []
    for qualname in names:
        module_name, _, attr = qualname.rpartition(".")
        try:
            module = importlib.import_module(module_name)
            getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{qualname} ({exc})")
    assert not missing, f"docs/api.md documents names that do not exist: {missing}"


def test_every_public_name_is_documented():
    gen = _api_generator()
    documented = set(_documented_names())
    public = set()
    for module_name, how, _, _ in gen.SECTIONS:
        public |= {f"{module_name}.{n}" for n in gen.public_names(module_name, how)}
    # the exports are the source of truth, independently of the generator's section list
    for module_name in ("pytest_judgerel", "pytest_judgerel.stats", "pytest_judgerel.llm",
                        "pytest_judgerel.mindeval", "pytest_judgerel.stats.ranking"):
        module = importlib.import_module(module_name)
        public |= {f"{module_name}.{n}" for n in module.__all__}
    undocumented = sorted(public - documented)
    assert not undocumented, f"public names missing from docs/api.md (run python docs/_gen_api.py): {undocumented}"


def test_every_cli_command_is_documented():
    import argparse

    from pytest_judgerel.__main__ import build_parser

    text = (DOCS / "api.md").read_text(encoding="utf-8")

    def leaves(parser, prefix):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield prefix
        for sub in subs:
            for name, child in sub.choices.items():
                yield from leaves(child, f"{prefix} {name}")

    commands = list(leaves(build_parser(), "judgerel"))
    assert len(commands) >= 8
    missing = [c for c in commands if f"### `{c}`" not in text]
    assert not missing, f"judgerel commands missing from docs/api.md: {missing}"


# ------------------------------------------------------------------- (d) options, commands
def test_every_option_mentioned_exists():
    from pytest_judgerel.session.settings import OPTIONS

    flags = {o.flag for o in OPTIONS}
    unknown = {}
    for page in MARKDOWN:
        for flag in re.findall(r"(?<![\w-])(--judge(?:rel)?-[a-z][a-z0-9-]*)", page.read_text(encoding="utf-8")):
            if flag not in flags:
                unknown.setdefault(_rel(page), set()).add(flag)
    assert not unknown, f"options that pytest-judgerel does not define: {unknown}"


def test_every_judgerel_command_mentioned_exists():
    from pytest_judgerel.__main__ import build_parser

    parser = build_parser()
    bad = {}
    for page in MARKDOWN:
        text = page.read_text(encoding="utf-8")
        for group, action in re.findall(r"(?:\bjudgerel|-m pytest_judgerel) (cache|report|history|study) ([a-z]+)", text):
            try:
                parser.parse_known_args([group, action, "--help"])
            except SystemExit as exc:
                if exc.code != 0:
                    bad.setdefault(_rel(page), set()).add(f"{group} {action}")
    assert not bad, f"judgerel commands that do not exist: {bad}"


def test_api_reference_is_current():
    """docs/api.md is generated from the code; a changed signature must regenerate it."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "docs" / "_gen_api.py"), "--check"],
                          capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr

"""The house matches its plan: docs/architecture.md lists every module (and only real ones), the
import graph (function-level imports included) has no cycle, the core never imports the pytest
wing, stats/ stays pure, and the plugin's import path stays free of heavy libraries."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "pytest_judgerel"
DOC = ROOT / "docs" / "architecture.md"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _resolve(current: str, is_package: bool, level: int, target: str | None) -> str:
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules imported anywhere in the module (top level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module) if node.level else (node.module or "")
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            if t in known:
                found.add(t)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def _without_parent_packages(g: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop a module's edge to its own ancestor packages: importing ``pytest_judgerel.llm.x``
    runs ``pytest_judgerel.llm`` first in any case, so that edge is no dependency (the package
    __init__ files only map names lazily and import nothing)."""
    return {m: {t for t in deps if not m.startswith(t + ".")} for m, deps in g.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_function_level_imports_included():
    found = cycles(_without_parent_packages(graph()))
    assert not found, f"import cycles: {found}"


def test_the_core_never_imports_the_pytest_wing():
    g = graph()
    bad = sorted((m, t) for m, deps in g.items() if not m.startswith("pytest_judgerel.plugin")
                 for t in deps if t.startswith("pytest_judgerel.plugin"))
    assert not bad, f"core modules importing the pytest wing: {bad}"


def test_only_the_pytest_wing_imports_pytest():
    """The plugin and the test-support room's own plugin (its fixtures) are pytest-aware; the core is not."""
    offenders = []
    for name, path in modules().items():
        if name.startswith(("pytest_judgerel.plugin", "pytest_judgerel.testing")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n == "pytest" or n.startswith(("pytest.", "_pytest")) for n in names):
                offenders.append(name)
    assert not offenders, f"core modules importing pytest: {sorted(set(offenders))}"


def test_stats_is_pure():
    # stats may use the two stdlib-only value modules of the package (errors, Scale)
    allowed = ("numpy", "scipy", "pytest_judgerel.stats", "pytest_judgerel.errors", "pytest_judgerel.scales")
    offenders = []
    for name, path in modules().items():
        if not name.startswith("pytest_judgerel.stats"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = [_resolve(name, path.name == "__init__.py", node.level, node.module) if node.level
                           else node.module or ""]
            else:
                continue
            for t in targets:
                top = t.split(".")[0]
                if top in sys.stdlib_module_names or top == "__future__":
                    continue
                if not t.startswith(allowed):
                    offenders.append((name, t))
    assert not offenders, offenders


# ---------------------------------------------------------------- docs/architecture.md
def documented_modules() -> set[str]:
    """Every ``pytest_judgerel/...py`` path named in a table row of docs/architecture.md."""
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `pytest_judgerel")]
    names = set()
    for row in rows:
        for path in re.findall(r"`(pytest_judgerel/[\w/]+\.py)`", row.split("|")[1]):
            names.add(module_name(ROOT / path))
    return names


def test_architecture_doc_names_every_module_and_only_real_ones():
    real = set(modules())
    documented = documented_modules()
    assert not documented - real, f"docs/architecture.md names modules that do not exist: {sorted(documented - real)}"
    assert not real - documented, f"docs/architecture.md omits: {sorted(real - documented)}"


def test_architecture_doc_names_no_type_that_does_not_exist():
    import importlib

    text = DOC.read_text(encoding="utf-8")
    for qualified in re.findall(r"`(pytest_judgerel(?:\.\w+)+)`", text):
        module, _, attr = qualified.rpartition(".")
        try:
            mod = importlib.import_module(qualified)
        except ImportError:
            mod = importlib.import_module(module)
            assert hasattr(mod, attr), f"docs/architecture.md names {qualified}, which does not exist"


def test_the_plugin_import_path_stays_light():
    code = ("import sys, pytest_judgerel.plugin, pytest_judgerel.plugin.fixtures, pytest_judgerel.plugin.markers; "
            "heavy = [m for m in ('litellm', 'scipy', 'diskcache', 'numpy', 'llama_cpp', 'redis') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_the_report_layer_never_reaches_the_pytest_wing():
    """report/ takes a plain SessionRun (rootpath, settings, outcomes...): it never reads the
    plugin session's config, stash or methods, a back door the import graph cannot see.  The
    terminal summary is handed pytest's terminal reporter (``tr``) and may read its options."""
    wing_api = {"config", "stash", "endpoint_or_none", "unattributed_calls", "call_snapshot", "new_recorder",
                "workerinput", "context"}
    offenders = []
    for path in sorted((PKG / "report").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in wing_api:
                owner = node.value.id if isinstance(node.value, ast.Name) else None
                if not (path.name == "terminal.py" and owner == "tr" and node.attr == "config"):
                    offenders.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert not offenders, f"report/ reaching into the plugin session: {offenders}"
    import inspect

    from pytest_judgerel.report.build import SessionRun, build_report
    from pytest_judgerel.report.gate import apply_outputs

    assert list(inspect.signature(build_report).parameters) == ["run"]
    assert list(inspect.signature(apply_outputs).parameters)[0] == "run"
    assert {"rootpath", "settings", "outcomes"} <= set(SessionRun.__dataclass_fields__)


def test_a_session_run_alone_builds_the_report(tmp_path):
    from pytest_judgerel.report.build import SessionRun, build_report
    from pytest_judgerel.report.gate import apply_outputs
    from pytest_judgerel.session.settings import Settings

    settings = Settings(json=str(tmp_path / "r.json"), sources={})
    run = SessionRun(rootpath=str(tmp_path), settings=settings, outcomes={"t::a": "passed", "t::b": "failed"},
                     tests=({"nodeid": "t::a", "records": [], "calls": {"calls": 2, "misses": 2}},),
                     endpoint={"model": "openai/x", "api_base": None}, exitstatus=1)
    report = build_report(run)
    assert report["session"]["outcomes"] == {"passed": 1, "failed": 1} and report["totals"]["calls"] == 2
    assert apply_outputs(run, report) == []  # no output failed; the failed test fails the gate's status
    assert json.loads((tmp_path / "r.json").read_text())["gate"]["status"] == "failed"


# ---------------------------------------------------------------- rooms
def room_of(module: str) -> str:
    """A sub-package of the package is one room; a top-level module is a room of its own."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def room_graph() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for m, deps in _without_parent_packages(graph()).items():
        rooms.setdefault(room_of(m), set()).update(room_of(d) for d in deps if room_of(d) != room_of(m))
    return rooms


def longest_chain(g: dict[str, set[str]]) -> list[str]:
    best: dict[str, list[str]] = {}

    def visit(v: str) -> list[str]:
        if v not in best:
            best[v] = [v]  # no cycles (checked above), so this never recurses into itself
            tails = [visit(w) for w in sorted(g.get(v, ()))]
            best[v] = [v] + max(tails, key=len, default=[])
        return best[v]

    return max((visit(v) for v in sorted(g)), key=len)


def test_rooms_have_no_cycles_and_a_short_longest_chain():
    g = room_graph()
    assert not cycles(g), f"cycles between rooms: {cycles(g)}"
    chain = longest_chain(g)
    assert len(chain) <= 7, f"longest import chain between rooms is {len(chain)}: {' -> '.join(chain)}"


def test_the_top_level_holds_at_most_eight_modules():
    top = sorted(p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= 8, f"{len(top)} modules at the package's top level: {top}"


def _private_imports(name: str, path: Path, known: set[str]) -> list[tuple[str, str]]:
    """(target module, name) for every ``_private`` name or module a module imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(name, path.name == "__init__.py", node.level, node.module) if node.level else (
                node.module or "")
            if not base.startswith("pytest_judgerel"):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                target = full if full in known else base
                private_module = any(p.startswith("_") and not p.startswith("__") for p in target.split("."))
                if (a.name.startswith("_") and not a.name.startswith("__")) or private_module:
                    out.append((target, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("pytest_judgerel") and any(
                        p.startswith("_") and not p.startswith("__") for p in a.name.split(".")):
                    out.append((a.name, a.name))
    return out


# the two private helpers of the top level that every room may use: the package's lazy-name
# table and its one home of file writes
SHARED_PRIVATE = {"pytest_judgerel._lazy", "pytest_judgerel._io"}


def test_no_private_name_crosses_rooms():
    mods = modules()
    known = set(mods)
    crossing = []
    for name, path in mods.items():
        for target, attr in _private_imports(name, path, known):
            if target in SHARED_PRIVATE or room_of(target) == room_of(name):
                continue
            crossing.append(f"{name} imports {attr} from {target}")
    assert not crossing, "private names crossing rooms:\n" + "\n".join(sorted(crossing))


def test_no_class_is_over_400_lines():
    big = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 400:
                big.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not big, big


# ---------------------------------------------------------------- a house that reads as it is today
MAX_FUNCTION_LINES = 80
MAX_MODULE_DOCSTRING_LINES = 25
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)
TEST_SUPPORT = "pytest_judgerel.testing"


def test_no_function_is_over_80_lines():
    """A function's whole span counts (``def`` to its last line, docstring and comments included)."""
    long = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = node.end_lineno - node.lineno + 1
                if span > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {span} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {sorted(long)}"


def test_no_module_docstring_is_over_25_lines():
    long = []
    for name, path in modules().items():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if doc and len(doc.splitlines()) > MAX_MODULE_DOCSTRING_LINES:
            long.append(f"{name}: {len(doc.splitlines())} lines")
    assert not long, f"module docstrings over {MAX_MODULE_DOCSTRING_LINES} lines: {long}"


def test_the_package_names_no_issue_numbers():
    """The tracker's history belongs in the changelog and the commits, not in the code."""
    found = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        for m in ISSUE_NUMBER.finditer(text):
            found.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()!r}")
    assert not found, f"issue numbers in the package: {found}"


def test_no_product_module_imports_the_test_support_room():
    g = graph()
    bad = sorted((m, t) for m, deps in g.items() if not (m == TEST_SUPPORT or m.startswith(TEST_SUPPORT + "."))
                 for t in deps if t == TEST_SUPPORT or t.startswith(TEST_SUPPORT + "."))
    assert not bad, f"product modules importing test support: {bad}"


def test_the_test_support_room_exists_and_holds_the_fake_server():
    from pytest_judgerel import testing

    assert {"FakeLLMServer", "FaultPlan"} <= set(dir(testing))

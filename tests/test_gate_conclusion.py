"""One gate ending: every gate, MindEval's included, ends in pytest_judgerel.gates.conclusion.finish,
which records, honours report-only, --judgerel-require-stable and --judgerel-max-parse-failures,
and raises."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pytest_judgerel.gates.reliability import JudgeReliabilityFailure
from pytest_judgerel.gates.mindeval import assert_judge_agrees_with_humans, assert_mindeval_score
from pytest_judgerel.session.recording import recording

ROOT = Path(__file__).resolve().parents[1]
AXES = ("CAC", "EPC", "AR", "TRA", "ASCQ")


def scores(values):
    """One 5-axis score per value (every axis the same), None for a failed reply."""
    return [None if v is None else {a: float(v) for a in AXES} for v in values]


# means 4.0 over 12 interactions, spread 1: the 3.9 threshold passes on the data but not on
# every bootstrap resample (p_pass well inside (0.05, 0.95))
SHAKY = [3, 5, 3, 5, 3, 5, 4, 4, 3, 5, 3, 5]


def test_an_unstable_mindeval_gate_fails_under_require_stable():
    with recording() as rec:
        assert assert_mindeval_score(scores(SHAKY), min_mean=3.9) == pytest.approx(4.0)
    stability = rec.records[0]["stability"]
    assert stability["unstable"] and 0.05 < stability["p_pass"] < 0.95
    with recording(require_stable=True) as rec, pytest.raises(JudgeReliabilityFailure, match="unstable"):
        assert_mindeval_score(scores(SHAKY), min_mean=3.9)
    assert rec.records[0]["passed"] is False and rec.records[0]["unstable"] is True
    with recording(require_stable=True, report_only=True) as rec:
        assert_mindeval_score(scores(SHAKY), min_mean=3.9)  # report-only: recorded, never raises
    assert rec.records[0]["report_only"] is True
    with recording(require_stable=True):  # a clear pass is stable: nothing fails
        assert_mindeval_score(scores([5] * 12), min_mean=3.9)


def test_the_parse_failure_limit_of_the_session_governs_mindeval_gates():
    values = scores([5, 5, None, 5, 5])
    with recording() as rec, pytest.raises(JudgeReliabilityFailure, match=r"1 of 5 .* \(allowed 0\)"):
        assert_mindeval_score(values, min_mean=3.0)
    with recording(max_parse_failures=1) as rec:
        assert_mindeval_score(values, min_mean=3.0)
    assert rec.records[0]["passed"] is True and rec.records[0]["parse_failures"] == 1
    with recording(max_parse_failures=5), pytest.raises(JudgeReliabilityFailure, match="allowed 0"):
        assert_mindeval_score(values, min_mean=3.0, max_parse_failures=0)  # an explicit limit wins


def test_the_parse_failure_limit_governs_the_human_agreement_gate():
    judge = [4.0, 2.0, None, 5.0, 1.0, 3.0]
    humans = [[4.0], [2.0], [3.0], [5.0], [1.0], [3.0]]
    with recording(max_parse_failures=1):
        assert_judge_agrees_with_humans(judge, humans, min_kendall=0.5)
    with recording() as rec, pytest.raises(JudgeReliabilityFailure, match="allowed 0"):
        assert_judge_agrees_with_humans(judge, humans, min_kendall=0.5)
    assert rec.records[0]["passed"] is False


#: every module of gates/ but its shared machinery is a gate module (MindEval's gates included)
SHARED = {"__init__.py", "common.py", "conclusion.py", "stability.py", "sequential.py"}
GATE_MODULES = sorted(f"gates/{p.name}" for p in (ROOT / "pytest_judgerel" / "gates").glob("*.py")
                      if p.name not in SHARED)


def test_every_gate_module_concludes_through_the_one_module():
    """No gate module records, marks report-only or raises the failure itself: each ends in
    gates.conclusion.finish, which concludes there; gates.common only reaches it."""
    assert {"gates/reliability.py", "gates/bias.py", "gates/pass_rate.py", "gates/injection.py",
            "gates/human_mean.py"} <= set(GATE_MODULES)
    for name in GATE_MODULES:
        path = ROOT / "pytest_judgerel" / name
        text = path.read_text()
        for pattern in (r"JudgeReliabilityFailure\(", r"\.record\(", r"report_only\"\]\s*=", r"require_stable",
                        r"\bconclude(_record|_not_computed)?\("):
            assert not re.search(pattern, text), f"{path.name} concludes by itself: {pattern}"
        assert re.search(r"\bfinish\(", text), f"{path.name} does not end in gates.conclusion.finish"
    common = (ROOT / "pytest_judgerel" / "gates" / "common.py").read_text()
    conclusion = (ROOT / "pytest_judgerel" / "gates" / "conclusion.py").read_text()
    assert "from .conclusion import" in common and not re.search(r"^def (finish|conclude)", common, re.M)
    assert re.search(r"^def finish\(", conclusion, re.M) and re.search(r"\bconclude\(", conclusion)


def _gate_imports(path: Path) -> set[str]:
    """The modules of pytest_judgerel.gates that ``path`` imports (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and path.parent.name == "gates":
                base = node.module or ""
            elif node.level == 0 and (node.module or "").startswith("pytest_judgerel.gates."):
                base = node.module.split(".", 2)[2]
            elif node.level == 2 and (node.module or "").startswith("gates."):
                base = node.module.split(".", 1)[1]
            else:
                continue
            found.add(base.split(".")[0])
    return found


def test_gate_modules_share_machinery_only_through_common():
    """The gate chain is flat: a gate module imports gates.common, gates.conclusion (its ending),
    gates.stability and gates.sequential, never another gate module (nor its private helpers)."""
    for name in GATE_MODULES:
        imported = _gate_imports(ROOT / "pytest_judgerel" / name)
        assert "conclusion" in imported, name
        assert imported <= {"common", "conclusion", "stability", "sequential"}, \
            f"{name} imports gate modules {sorted(imported)}"
    assert _gate_imports(ROOT / "pytest_judgerel" / "gates" / "common.py") <= {"conclusion"}


def test_options_reach_a_mindeval_gate_in_a_pytest_session(pytester):
    pytester.makepyfile(f"""
        from pytest_judgerel import assert_mindeval_score
        AXES = {AXES!r}

        def s(v):
            return None if v is None else {{a: float(v) for a in AXES}}

        def test_one_failed_reply():
            assert_mindeval_score([s(5), s(None), s(5), s(5)], min_mean=3.0)

        def test_shaky_pass():
            assert_mindeval_score([s(v) for v in {SHAKY!r}], min_mean=3.9)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=1, failed=1)  # the failed reply: the default limit is 0
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judgerel-max-parse-failures=1",
                                "--judgerel-require-stable")
    result.assert_outcomes(passed=1, failed=1)
    assert "test_shaky_pass" in "\n".join(line for line in result.stdout.lines if line.startswith("FAILED"))

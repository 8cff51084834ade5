"""The pytest surface: options, ini, markers and their validation, parametrization,
cheap import, and metric records reaching the controller."""

import json
import sys

import pytest

pytest_plugins = ["pytester"]


def test_help_shows_one_group_with_every_option(pytester):
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    assert "pytest-judgerel: LLM-as-a-judge reliability" in out
    for flag in ("--judge-model", "--judge-api-base", "--judge-temperature", "--judge-repeats",
                 "--judgerel-max-concurrency", "--judgerel-cache-mode", "--judgerel-json",
                 "--judgerel-baseline", "--judgerel-report-only"):
        assert flag in out
    for ini in ("judgerel_model", "judgerel_api_base", "judgerel_temperature", "judgerel_repeats",
                "judgerel_max_concurrency", "judgerel_cache_dir"):
        assert ini in out


def test_markers_registered_and_strict_markers_clean(pytester):
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.judge(model="scripted/x", temperature=0.5)
        @pytest.mark.scale("0-5", "0-10")
        @pytest.mark.axis("coherence")
        @pytest.mark.repeats(3)
        def test_ok():
            pass
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1)
    out = pytester.runpytest("--markers").stdout.str()
    for name in ("judge(", "scale(", "axis(", "repeats(", "patients("):
        assert f"@pytest.mark.{name}" in out


@pytest.mark.parametrize(
    "marker, message",
    [
        ('judge(temprature=0.2)', "unknown argument 'temprature' (did you mean 'temperature'?)"),
        ('judge(temperature=3)', "temperature=3 must be within [0, 2]"),
        ('judge(model=5)', "model=5 must be str"),
        ('judge("gpt")', "takes keyword arguments only"),
        ('scale("zero-ten")', "cannot read scale 'zero-ten'"),
        ('scale()', "needs at least one scale"),
        ('scale("0-5", "0-5")', "duplicate scale"),
        ('axis()', "takes exactly one non-empty axis name"),
        ('repeats(0)', "takes one integer >= 1"),
        ('repeats("3")', "takes one integer >= 1"),
        ('patients(n=0)', "n=0 must be an integer >= 1"),
        ('patients(turns=None)', "turns=None must be int"),
        ('patients(seed=-1)', "seed=-1 must be an integer >= 0"),
        ('patients(severity="very")', "severity='very' must be one of"),
    ],
)
def test_bad_marker_arguments_are_usage_errors_naming_the_test(pytester, marker, message):
    pytester.makepyfile(
        f"""
        import pytest
        @pytest.mark.{marker}
        def test_bad():
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "test_bad_marker_arguments_are_usage_errors_naming_the_test.py::test_bad" in err
    assert message in err


def test_bad_option_values_are_usage_errors(pytester):
    pytester.makepyfile("def test_x(): pass")
    r = pytester.runpytest("--judge-repeats=zero")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--judge-repeats: cannot read 'zero'" in r.stderr.str()
    r = pytester.runpytest("--judgerel-max-concurrency=0")
    assert r.ret == pytest.ExitCode.USAGE_ERROR and "--judgerel-max-concurrency: 0 must be >= 1" in r.stderr.str()
    r = pytester.runpytest("--judgerel-cache-mode=sometimes")
    assert r.ret == pytest.ExitCode.USAGE_ERROR


def test_ini_and_env_resolution_order(pytester, monkeypatch):
    pytester.makeini(
        """
        [pytest]
        judgerel_model = ini/model
        judgerel_repeats = 7
        """
    )
    pytester.makepyfile(
        """
        def test_settings(judgerel_settings, record_property):
            print("MODEL", judgerel_settings.model, "REPEATS", judgerel_settings.repeats,
                  "MODE", judgerel_settings.cache_mode)
        """
    )
    monkeypatch.setenv("JUDGEREL_MODEL", "env/model")
    monkeypatch.setenv("JUDGEREL_CACHE_MODE", "replay")
    out = pytester.runpytest("-s").stdout.str()
    assert "MODEL ini/model REPEATS 7 MODE replay" in out  # ini beats env; env fills what ini lacks
    out = pytester.runpytest("-s", "--judge-model=cli/model", "--judge-repeats=2").stdout.str()
    assert "MODEL cli/model REPEATS 2" in out


def test_scale_fixture_parametrizes_per_scale_and_judge_gets_all(pytester):
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.scale("0-5", "0-10", "0-100")
        def test_each(scale):
            assert scale.high in (5, 10, 100)

        @pytest.mark.scale("0-5", "0-10")
        def test_cross():
            pass
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_each[[]0-5[]] PASSED*", "*test_each[[]0-100[]] PASSED*"])


def test_records_reach_the_json_report(pytester):
    pytester.makepyfile(
        """
        import numpy as np
        from pytest_judgerel import assert_icc_above

        def test_good():
            rng = np.random.default_rng(0)
            t = rng.uniform(0, 10, 30)
            assert_icc_above(t[:, None] + rng.normal(0, .2, (30, 3)), 0.9)

        def test_bad():
            assert_icc_above([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6]], 0.9)
        """
    )
    result = pytester.runpytest("--judgerel-json=out.json")
    result.assert_outcomes(passed=1, failed=1)
    data = json.loads((pytester.path / "out.json").read_text())
    tests = {t["nodeid"].split("::")[1]: t for t in data["tests"]}
    assert tests["test_good"]["records"][0]["passed"] is True
    assert tests["test_bad"]["records"][0]["passed"] is False
    assert data["totals"]["metrics"] == 2 and data["totals"]["failed_metrics"] == 1
    result.stdout.fnmatch_lines(["*judgerel summary*", "*test_bad*ICC(A,1)*FAIL*"])


def test_report_only_mode_passes_and_says_so(pytester):
    pytester.makepyfile(
        """
        from pytest_judgerel import assert_icc_above
        def test_bad():
            assert_icc_above([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6]], 0.9)
        """
    )
    result = pytester.runpytest_subprocess("--judgerel-report-only")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPORT-ONLY*"])


def test_plugin_import_is_cheap(pytester):
    """A run that uses no judge never imports litellm, scipy or diskcache."""
    pytester.makeconftest(
        """
        import sys
        def pytest_sessionfinish(session):
            heavy = sorted(m for m in ("litellm", "scipy", "diskcache", "numpy", "llama_cpp", "redis")
                           if m in sys.modules)
            print("HEAVY", heavy)
        """
    )
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*HEAVY []*"])


def test_plugin_can_be_disabled(pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_subprocess("-p", "no:judgerel", "--help")
    assert "--judge-model" not in result.stdout.str()


def test_bad_marker_under_xdist_names_the_problem(pytester):
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.judge(temprature=0.2)
        def test_bad():
            pass
        def test_good():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-n", "2")
    assert result.ret != 0
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    assert "unknown argument 'temprature' (did you mean 'temperature'?)" in out
    result.assert_outcomes(passed=1, errors=1)


def test_gate_in_fixture_teardown_reaches_the_report(pytester):
    pytester.makepyfile(
        """
        import numpy as np
        import pytest
        from pytest_judgerel import assert_icc_above

        @pytest.fixture
        def collected():
            rows = []
            yield rows
            assert_icc_above(np.array(rows, dtype=float), 0.5, label="teardown-gate")

        def test_collect(collected):
            rng = np.random.default_rng(0)
            t = rng.uniform(0, 10, 20)
            collected.extend((t[:, None] + rng.normal(0, .1, (20, 3))).tolist())
            assert_icc_above(np.array(collected), 0.5, label="call-gate")
        """
    )
    result = pytester.runpytest_subprocess("--judgerel-json=out.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    data = json.loads((pytester.path / "out.json").read_text())
    labels = [r["label"] for t in data["tests"] for r in t["records"]]
    assert labels == ["call-gate", "teardown-gate"]
    assert "teardown-gate" in (pytester.path / "junit.xml").read_text()


def test_judge_markers_merge_with_the_closest_winning(pytester):
    pytester.makepyfile(
        """
        import pytest
        pytestmark = pytest.mark.judge(model="scripted/module", temperature=0.7)

        class TestX:
            pytestmark = pytest.mark.judge(template="summeval", max_tokens=99)

            @pytest.mark.judge(temperature=0.2)
            def test_merged(self, judge):
                assert (judge.model, judge.template_name, judge.temperature, judge.max_tokens) == \\
                    ("scripted/module", "summeval", 0.2, 99)
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)

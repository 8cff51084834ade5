"""Settings resolution (session/settings.py, plugin/options.py, SessionContext.chosen): tests that fail
on the planted bugs of issue 31's held-out mutants (docs/_drafts/mutants.md).

``chosen()`` is checked through real resolution (the command line, the ini file and the environment
of a pytester run, and :func:`settings_from_env`), never through a ``Settings`` whose ``sources`` a
test filled by hand: that could not see a resolver that reports defaults as chosen.
"""

from __future__ import annotations

import json

import pytest

from pytest_judgerel.session.context import SessionContext
from pytest_judgerel.session.settings import OPTIONS, settings_from_env

ENV_OPTIONS = [o for o in OPTIONS if o.env]


@pytest.fixture
def clean_env(monkeypatch):
    for o in ENV_OPTIONS:
        monkeypatch.delenv(o.env, raising=False)
    return monkeypatch


def test_the_backend_and_require_stable_variables_are_read(clean_env, tmp_path):
    """Mutants: JUDGEREL_BACKEND / JUDGEREL_REQUIRE_STABLE unread."""
    clean_env.setenv("JUDGEREL_BACKEND", "http")
    clean_env.setenv("JUDGEREL_REQUIRE_STABLE", "true")
    s = settings_from_env(str(tmp_path))
    assert s.backend == "http" and s.sources["backend"] == "env JUDGEREL_BACKEND"
    assert s.require_stable is True and s.sources["require_stable"] == "env JUDGEREL_REQUIRE_STABLE"
    clean_env.setenv("JUDGEREL_BACKEND", "litellm")
    clean_env.setenv("JUDGEREL_REQUIRE_STABLE", "0")
    s = settings_from_env(str(tmp_path))
    assert s.backend == "litellm" and s.require_stable is False


@pytest.mark.parametrize("option", ENV_OPTIONS, ids=lambda o: o.env)
def test_every_documented_variable_is_read(option, clean_env, tmp_path):
    """Each option's environment variable changes its value and its source."""
    default = settings_from_env(str(tmp_path))
    assert default.sources[option.dest] == "default"
    value = {"JUDGEREL_MODEL": "openai/gpt-4o-mini", "JUDGEREL_API_BASE": "http://127.0.0.1:9/v1"}.get(option.env)
    if value is None:
        if option.choices:
            value = next(c for c in option.choices if c != option.default)
        elif option.type is float:
            value = "0.25"
        elif option.type is int:
            value = "3"
        elif option.action == "store_true" or isinstance(option.default, bool):
            value = "false" if option.default else "true"
        else:
            value = str(tmp_path / "elsewhere")
    clean_env.setenv(option.env, value)
    s = settings_from_env(str(tmp_path))
    assert s.sources[option.dest] == f"env {option.env}"
    assert getattr(s, option.dest) != getattr(default, option.dest)


def test_chosen_is_none_for_what_nobody_set(clean_env, tmp_path):
    ctx = SessionContext(settings_from_env(str(tmp_path)))
    assert {o.dest: ctx.chosen(o.dest) for o in OPTIONS} == {o.dest: None for o in OPTIONS}
    clean_env.setenv("JUDGEREL_MODEL", "openai/gpt-4o-mini")
    ctx = SessionContext(settings_from_env(str(tmp_path)))
    assert ctx.chosen("model") == "openai/gpt-4o-mini" and ctx.chosen("temperature") is None


CHOSEN = """
import json, os
from pytest_judgerel.session.context import current_context
from pytest_judgerel.session.settings import OPTIONS

def test_write_chosen():
    ctx = current_context()
    with open(os.environ["CHOSEN_OUT"], "w") as fh:
        json.dump({o.dest: ctx.chosen(o.dest) for o in OPTIONS}, fh)
"""


def _chosen(pytester, tmp_path, *args, ini=""):
    out = tmp_path / "chosen.json"
    pytester.makepyfile(test_chosen=CHOSEN)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", *args)
    result.assert_outcomes(passed=1)
    return json.loads(out.read_text())


def test_chosen_in_a_session_reports_only_what_the_user_set(pytester, clean_env, tmp_path):
    clean_env.setenv("CHOSEN_OUT", str(tmp_path / "chosen.json"))
    nothing = _chosen(pytester, tmp_path)
    assert {k: v for k, v in nothing.items() if v is not None} == {}
    clean_env.setenv("JUDGEREL_BACKEND", "http")
    some = _chosen(pytester, tmp_path, "--judge-temperature=0.3", "--judgerel-require-stable",
                   ini="judgerel_max_tokens = 64")
    assert {k: v for k, v in some.items() if v is not None} == {
        "temperature": 0.3, "require_stable": True, "max_tokens": 64, "backend": "http"}

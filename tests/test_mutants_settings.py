"""Settings resolution (session/settings.py, plugin/options.py, SessionContext.chosen): tests that fail
on the planted bugs of issue 31's held-out mutants (docs/benchmarks.md, "Issue 31's planted bugs").

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


# ---------------------------------------------------------------- held-out bugs (benchmarks/held_out_mutants.py)
def _documented_variables() -> dict[str, str]:
    """``{flag: variable}`` of docs/pytest.md's option table (rows with an env column)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "pytest.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`--") and cells[2].startswith("`JUDGEREL_"):
            out[cells[0].split("`")[1]] = cells[2].strip("`")
    return out


def test_every_variable_of_the_option_table_is_read_by_its_option(clean_env, tmp_path):
    """S03: an option's ``env=`` dropped (JUDGEREL_CACHE_MODE unread): the option then vanishes
    from ``OPTIONS``' variables, so a test that enumerates them cannot see it; the documented
    table can."""
    documented = _documented_variables()
    assert len(documented) >= 12, documented
    by_flag = {o.flag: o for o in OPTIONS}
    for flag, variable in documented.items():
        assert by_flag[flag].env == variable, (flag, variable)
    clean_env.setenv("JUDGEREL_CACHE_MODE", "replay")
    clean_env.setenv("JUDGEREL_MAX_CALLS", "7")
    s = settings_from_env(str(tmp_path))
    assert s.cache_mode == "replay" and s.sources["cache_mode"] == "env JUDGEREL_CACHE_MODE"
    assert s.max_calls == 7


def test_the_command_line_and_the_ini_file_win_over_the_environment(clean_env, tmp_path):
    """S01: the environment read before the command line and the ini file."""
    from pytest_judgerel.session.settings import resolve

    clean_env.setenv("JUDGEREL_BACKEND", "http")
    clean_env.setenv("JUDGEREL_CACHE_MODE", "replay")
    given = {"backend": ("litellm", "--judgerel-backend"), "cache_mode": ("off", "ini judgerel_cache_mode")}
    s = resolve(lambda o: given.get(o.dest), str(tmp_path))
    assert (s.backend, s.sources["backend"]) == ("litellm", "--judgerel-backend")
    assert (s.cache_mode, s.sources["cache_mode"]) == ("off", "ini judgerel_cache_mode")


def test_settings_built_by_hand_follow_judgerel_backend(clean_env):
    """S02: ``LLMSettings()`` made by hand ignores JUDGEREL_BACKEND (documented: a whole test suite
    switches paths with it), while the resolution still reads it."""
    from pytest_judgerel.llm import LLMSettings

    assert LLMSettings().backend == "auto"
    clean_env.setenv("JUDGEREL_BACKEND", "litellm")
    assert LLMSettings().backend == "litellm"
    assert LLMSettings(backend="http").backend == "http"  # given by hand wins


def test_chosen_is_none_for_settings_built_by_hand(clean_env):
    """S04: settings made by hand have no sources; ``chosen()`` then reported their values as the
    user's (a study would run at T = 0 instead of the paper's 1)."""
    from pytest_judgerel.session.settings import Settings

    ctx = SessionContext(Settings(temperature=0.0, max_tokens=64))
    assert ctx.chosen("temperature") is None and ctx.chosen("max_tokens") is None


def test_a_value_set_equal_to_its_default_is_still_chosen(clean_env, tmp_path):
    """S05: a value the user set to the default (``--judge-temperature=0``) reported as not chosen
    (the study would then run at its own default, 1)."""
    from pytest_judgerel.session.settings import resolve

    given = {"temperature": ("0", "--judge-temperature"), "max_tokens": ("512", "ini judgerel_max_tokens")}
    ctx = SessionContext(resolve(lambda o: given.get(o.dest), str(tmp_path)))
    assert ctx.chosen("temperature") == 0.0 and ctx.chosen("max_tokens") == 512
    assert ctx.chosen("repeats") is None


# ---------------------------------------------------------------- batch 2's survivors
def test_environment_values_are_read_without_surrounding_blanks(clean_env, tmp_path):
    """S07: an environment value not stripped: a trailing newline or space (a value pasted into a CI
    secret, a ``.env`` file) became part of the model name or the server address, or failed the
    backend's choices; a value of blanks only counted as set."""
    clean_env.setenv("JUDGEREL_BACKEND", " http\n")
    clean_env.setenv("JUDGEREL_MODEL", "openai/gpt-4o-mini \n")
    clean_env.setenv("JUDGEREL_API_BASE", "\thttp://127.0.0.1:9/v1\n")
    s = settings_from_env(str(tmp_path))
    assert s.backend == "http" and s.sources["backend"] == "env JUDGEREL_BACKEND"
    assert s.model == "openai/gpt-4o-mini" and s.sources["model"] == "env JUDGEREL_MODEL"
    assert s.api_base == "http://127.0.0.1:9/v1"
    clean_env.setenv("JUDGEREL_MODEL", "  \n")
    clean_env.setenv("JUDGEREL_BACKEND", " ")
    s = settings_from_env(str(tmp_path))
    default = next(o for o in OPTIONS if o.dest == "model").default
    assert s.model == default and s.sources["model"] == "default" and s.sources["backend"] == "default"


# ---------------------------------------------------------------- batch 3's survivors
@pytest.mark.parametrize("word, value", [("TRUE", True), ("Yes", True), (" On ", True), ("1", True),
                                         ("FALSE", False), ("No", False), ("OFF", False), ("0", False)])
def test_a_boolean_setting_is_read_in_any_case(clean_env, tmp_path, word, value):
    """S09: a boolean written ``TRUE`` / ``Yes`` / ``OFF`` (a CI file, a ``.env``) refused as not a
    boolean: the words are matched without regard to case or surrounding blanks, from the
    environment and from the ini file / command line alike; a typo is still an error."""
    from pytest_judgerel.errors import ConfigError
    from pytest_judgerel.session.settings import resolve

    clean_env.setenv("JUDGEREL_REQUIRE_STABLE", word)
    clean_env.setenv("JUDGEREL_DRY_RUN", word)
    s = settings_from_env(str(tmp_path))
    assert s.require_stable is value and s.dry_run is value
    assert s.sources["require_stable"] == "env JUDGEREL_REQUIRE_STABLE"
    clean_env.delenv("JUDGEREL_REQUIRE_STABLE")
    ini = resolve(lambda o: (word, "ini judgerel_require_stable") if o.dest == "require_stable" else None, str(tmp_path))
    assert ini.require_stable is value
    clean_env.setenv("JUDGEREL_REQUIRE_STABLE", word.replace("E", "3") + "x")
    with pytest.raises(ConfigError, match="env JUDGEREL_REQUIRE_STABLE: .* is not a boolean"):
        settings_from_env(str(tmp_path))

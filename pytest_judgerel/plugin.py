"""pytest hooks of pytest-judgerel (entry point ``pytest11: judgerel``).

Hooks only: options, markers, marker validation, the per-test record sink, the
collection of metric records on the controller, the terminal summary and the
CI gate.  Fixtures live in :mod:`pytest_judgerel.fixtures`; nothing heavy
(litellm, scipy, diskcache) is imported here.  Works with and without
pytest-xdist: records travel on ``TestReport.user_properties``.
"""

from __future__ import annotations

import os

import pytest

# litellm fetches a price list at import unless told not to; set this before
# anything can import it (users' explicit settings win).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from . import _recording  # noqa: E402  (stdlib only)
from .options import MARKERS, add_options  # noqa: E402  (stdlib only)

_RECORDS = pytest.StashKey[list]()
_CALLS_BEFORE = pytest.StashKey[dict]()
SESSION_KEY = pytest.StashKey["object"]()
_MARKER_ERRORS = pytest.StashKey[list]()
_SENT = pytest.StashKey[int]()

pytest.register_assert_rewrite("pytest_judgerel.assertions")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    from .session import JudgerelSession

    session = JudgerelSession(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "judgerel-session")
    from . import fixtures

    if not config.pluginmanager.is_registered(fixtures):
        config.pluginmanager.register(fixtures, "judgerel-fixtures")
    _recording.set_report_only(session.settings.report_only)
    _recording.set_defaults(max_parse_failures=session.settings.max_parse_failures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from .markers import validate_item

    if hasattr(config, "workerinput"):
        # xdist worker: a UsageError here would crash the worker and hide the message behind an
        # INTERNALERROR, so each invalid test errors at setup with its message instead.
        for item in items:
            problems = validate_item(item)
            if problems:
                item.stash[_MARKER_ERRORS] = problems
        return
    errors = [msg for item in items for msg in validate_item(item)]
    if errors:
        raise pytest.UsageError("invalid judgerel marker(s):\n  " + "\n  ".join(errors))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    problems = item.stash.get(_MARKER_ERRORS, None)
    if problems:
        raise pytest.UsageError("invalid judgerel marker(s):\n  " + "\n  ".join(problems))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from .markers import parametrize

    parametrize(metafunc)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    records: list = []
    item.stash[_RECORDS] = records
    session = item.config.stash.get(SESSION_KEY, None)
    item.stash[_CALLS_BEFORE] = session.call_snapshot() if session else {}
    _recording.set_sink(records)
    try:
        return (yield)
    except KeyboardInterrupt:
        # no report will carry what this test recorded so far: keep it for the session report
        if session is not None:
            sent = item.stash.get(_SENT, 0)
            session.keep_partial(item.nodeid, records[sent:], session.call_delta(item.stash.get(_CALLS_BEFORE, {})))
        raise
    finally:
        _recording.set_sink(None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if call.excinfo is not None:
        from .errors import CacheCorruptError

        if call.excinfo.errisinstance(CacheCorruptError):
            # every later test would hit the same damaged database: stop with its one clear message
            item.session.shouldstop = str(call.excinfo.value)
    if report.when in ("call", "teardown") or (report.when == "setup" and report.outcome != "passed"):
        # records (and calls) since the last report of this test: a gate in a fixture's
        # teardown reaches the report too
        all_records = item.stash.get(_RECORDS, [])
        sent = item.stash.get(_SENT, 0)
        records = list(all_records[sent:])
        item.stash[_SENT] = len(all_records)
        session = item.config.stash.get(SESSION_KEY, None)
        calls = session.call_delta(item.stash.get(_CALLS_BEFORE, {})) if session else {}
        if session is not None:
            item.stash[_CALLS_BEFORE] = session.call_snapshot()
        if records or calls:
            # Transport on a plain attribute (xdist serialises report.__dict__), not on
            # user_properties: junitxml would print the whole payload as a Python repr.
            report.judgerel = {"records": records, "calls": calls}
            if records:
                from .report.junit import junit_properties

                props = junit_properties(records)
                # junitxml reads the teardown report, built from item.user_properties
                (report.user_properties if report.when == "teardown" else item.user_properties).extend(props)
    return report


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    session = config.stash.get(SESSION_KEY, None)
    return session.header_lines() if session else None

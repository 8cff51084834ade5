"""The pytest wing of pytest-judgerel: every hook (entry point ``pytest11: judgerel``).

This package is the only pytest-aware code; the core (judge, ratings, parsing, scales,
stats, llm, mindeval, report) never imports it.  Its modules:

* :mod:`.options`: options, ini keys and environment variables -> typed ``Settings``;
* :mod:`.markers`: one spec per marker, validation at collection, parametrization;
* :mod:`.lifecycle`: the per-process session, from configure to finish (endpoint, client,
  recorders, collection, the report at session end);
* :mod:`.progress`: judge-call progress on the terminal;
* :mod:`.fixtures` and :mod:`.mindeval`: the fixtures and the builders behind them.

Records travel from a test's :class:`~pytest_judgerel.session.recording.Recorder` to the controller
on the test report (``report.judgerel``), with and without pytest-xdist.  Nothing heavy
(litellm, scipy, diskcache) is imported here.
"""

from __future__ import annotations

from typing import Any

import pytest

from .lifecycle import (
    CALLS_KEY,
    MARKER_ERRORS_KEY,
    RECORDER_KEY,
    SENT_KEY,
    SESSION_KEY,
    JudgerelSession,
)
from .options import add_options  # (stdlib only)

pytest.register_assert_rewrite("pytest_judgerel.gates.reliability")

#: the token that restores the context current before this session's (pytest_judgerel.session.context)
_CONTEXT_TOKEN = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from . import fixtures
    from .markers import marker_lines

    for line in marker_lines():
        config.addinivalue_line("markers", line)
    from ..session.context import enter

    session = config.stash[SESSION_KEY] = JudgerelSession(config)
    # from here on, every Judge, probe or MindEval object built without its own endpoint or
    # client (in a test body too) uses the session's
    config.stash[_CONTEXT_TOKEN] = enter(session.context)
    config.pluginmanager.register(_SessionHooks(session), "judgerel-session")
    if not config.pluginmanager.is_registered(fixtures):
        config.pluginmanager.register(fixtures, "judgerel-fixtures")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.close()
    token = config.stash.get(_CONTEXT_TOKEN, None)
    if token is not None:
        from ..session.context import leave

        leave(token)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: every worker lists its cache keys under the controller's run id."""
    node.workerinput["judgerel_run_id"] = node.config.stash[SESSION_KEY].run_id


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    session = config.stash.get(SESSION_KEY, None)
    return session.header_lines() if session else None


# ---------------------------------------------------------------- collection
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from .markers import parametrize

    parametrize(metafunc)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from .markers import validate_item

    if hasattr(config, "workerinput"):
        # xdist worker: a UsageError here would crash the worker and hide the message behind an
        # INTERNALERROR, so each invalid test errors at setup with its message instead.
        for item in items:
            problems = validate_item(item)
            if problems:
                item.stash[MARKER_ERRORS_KEY] = problems
        return
    errors = [msg for item in items for msg in validate_item(item)]
    if errors:
        raise pytest.UsageError("invalid judgerel marker(s):\n  " + "\n  ".join(errors))


# ---------------------------------------------------------------- running a test
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    problems = item.stash.get(MARKER_ERRORS_KEY, None)
    if problems:
        raise pytest.UsageError("invalid judgerel marker(s):\n  " + "\n  ".join(problems))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """Activate a fresh recorder (with the session's gate settings) around the whole test."""
    from ..session.recording import recording

    session = item.config.stash.get(SESSION_KEY, None)
    recorder = session.new_recorder() if session is not None else None
    item.stash[RECORDER_KEY] = recorder
    item.stash[CALLS_KEY] = session.call_snapshot() if session else {}
    with recording(recorder) as rec:
        try:
            return (yield)
        except KeyboardInterrupt:
            # no report will carry what this test recorded so far: keep it for the session report
            if session is not None:
                session.keep_partial(item.nodeid, rec.since(item.stash.get(SENT_KEY, 0)),
                                     session.call_delta(item.stash.get(CALLS_KEY, {})))
            raise


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """Tag the work of a fixture shared beyond one test (class, module, package or session scope).

    Under pytest-xdist every worker sets such a fixture up once, so its judge calls and records
    arrive from several workers; the tag (the fixture's scope, place, name and parameter) lets the
    controller count them once (:meth:`JudgerelSession.collect`)."""
    session = request.config.stash.get(SESSION_KEY, None)
    if fixturedef.scope == "function" or session is None:
        return (yield)
    from ..session.recording import active_recorder

    recorder = active_recorder()
    start = len(recorder.records)
    before = session.call_snapshot()
    try:
        return (yield)
    finally:
        # the node the instance belongs to (a conftest's module fixture has one instance per module)
        identity = (f"{fixturedef.scope}:{request.node.nodeid}::{fixturedef.argname}"
                    + (f"[{request.param_index}]" if hasattr(request, "param") else ""))
        session.note_shared(identity, recorder.since(start), session.call_delta(before))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Attach the records and calls since the test's last report to this report."""
    report = yield
    if call.excinfo is not None:
        from ..errors import CacheCorruptError, MissingKeyError

        if call.excinfo.errisinstance((CacheCorruptError, MissingKeyError)):
            # every later test would hit the same damaged database or missing key: stop with its
            # one clear message, shown without the plugin's and the client's frames
            item.session.shouldstop = str(call.excinfo.value)
            if report.failed:
                report.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    if report.when in ("call", "teardown") or (report.when == "setup" and report.outcome != "passed"):
        # records (and calls) since the last report of this test: a gate in a fixture's
        # teardown reaches the report too
        recorder = item.stash.get(RECORDER_KEY, None)
        sent = item.stash.get(SENT_KEY, 0)
        records = recorder.since(sent) if recorder is not None else []
        item.stash[SENT_KEY] = sent + len(records)
        session = item.config.stash.get(SESSION_KEY, None)
        calls = session.call_delta(item.stash.get(CALLS_KEY, {})) if session else {}
        if session is not None:
            item.stash[CALLS_KEY] = session.call_snapshot()
        anchor_sample = session.anchor_sample(records) if session is not None else []
        if records or calls:
            # Transport on a plain attribute (xdist serialises report.__dict__), not on
            # user_properties: junitxml would print the whole payload as a Python repr.
            report.judgerel = {"records": records, "calls": calls}
            if anchor_sample:  # the drift anchors' candidates of this test (pytest_judgerel.anchors)
                report.judgerel["anchors"] = anchor_sample
            shared = session.take_shared() if session is not None else {}
            if shared:  # calls of shared fixtures among them (see pytest_fixture_setup)
                report.judgerel["shared"] = shared
            if records:
                from ..report.junit import junit_properties

                props = junit_properties(records)
                # junitxml reads the teardown report, built from item.user_properties
                (report.user_properties if report.when == "teardown" else item.user_properties).extend(props)
    return report


# ---------------------------------------------------------------- the controller's side
class _SessionHooks:
    """The hooks that need the session but are not given the config (registered per config)."""

    def __init__(self, session: JudgerelSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.session.collect(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report, sched) -> None:
        """xdist: a worker died while running ``crashitem``; records of finished tests are kept."""
        self.session.crashed.append(crashitem)

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        """The session's report says it was interrupted; the history skips it."""
        self.session.interrupted = True


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    judgerel = session.config.stash.get(SESSION_KEY, None)
    if judgerel is None:
        return
    if judgerel.is_worker:
        # what no test report carried (calls outside any test, records of a test cut short)
        # travels to the controller as xdist worker output
        session.config.workeroutput["judgerel"] = judgerel.worker_output()  # type: ignore[attr-defined]
    else:
        judgerel.finish(session, exitstatus)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: take a finished worker's output (see pytest_sessionfinish)."""
    judgerel = node.config.stash.get(SESSION_KEY, None)
    output = (getattr(node, "workeroutput", None) or {}).get("judgerel")
    if judgerel is not None and output:
        judgerel.take_worker_output(output)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    judgerel = config.stash.get(SESSION_KEY, None)
    if judgerel is not None and not judgerel.is_worker:
        judgerel.write_summary(terminalreporter)

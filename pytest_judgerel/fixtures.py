"""Fixtures of pytest-judgerel (registered by the plugin at configure time).

Every fixture imports what it needs lazily, so a session that uses none of
them never imports litellm, scipy or diskcache.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest


def _session(config: pytest.Config):
    from .plugin import SESSION_KEY

    return config.stash[SESSION_KEY]


@pytest.fixture(scope="session")
def judgerel_settings(pytestconfig: pytest.Config):
    """The resolved judgerel settings (options > ini > environment > defaults)."""
    return _session(pytestconfig).settings


@pytest.fixture(scope="session")
def judgerel_client(pytestconfig: pytest.Config):
    """The process-wide :class:`~pytest_judgerel.llm.LLMClient` (cache, concurrency, retries)."""
    return _session(pytestconfig).client


@pytest.fixture
def scale(request: pytest.FixtureRequest):
    """The grading scale of this test: one of ``@pytest.mark.scale(...)`` (parametrized),
    else ``0-5`` (seed 001: human-LLM alignment is highest on 0-5)."""
    from .judge import DEFAULT_SCALE
    from .markers import marker_scales
    from .scales import Scale

    names = marker_scales(request.node)
    return Scale.parse(names[0] if names else DEFAULT_SCALE)


@pytest.fixture
def judge(request: pytest.FixtureRequest, judgerel_client, judgerel_settings):
    """A :class:`~pytest_judgerel.judge.Judge` configured from the test's markers
    (``judge``, ``scale``, ``axis``, ``repeats``), the options and the ini file."""
    from .judge import judge_from_node

    scale_value = request.getfixturevalue("scale") if "scale" in request.fixturenames else None
    return judge_from_node(request.node, judgerel_client, judgerel_settings, scale=scale_value)


@pytest.fixture
def judge_panel(request: pytest.FixtureRequest, judgerel_client, judgerel_settings):
    """A :class:`~pytest_judgerel.judge.JudgePanel`: the ``judge`` configuration over every
    model named in ``@pytest.mark.judge_panel(...)`` (seed 001's LLM panel)."""
    from .judge import panel_from_node

    return panel_from_node(request.node, judgerel_client, judgerel_settings)


@pytest.fixture(scope="session")
def human_ratings() -> Callable[..., Any]:
    """Load a human-rated data set: ``human_ratings("squality", criterion="overall")``
    returns a :class:`~pytest_judgerel.datasets.HumanDataset` (``.ratings()``, ``.items``);
    a path to a CSV or JSONL file of long records returns :class:`~pytest_judgerel.Ratings`."""

    def load(name_or_path: str, **kwargs: Any):
        import os

        if os.path.exists(str(name_or_path)):
            from .ratings import Ratings

            path = str(name_or_path)
            return Ratings.from_jsonl(path, **kwargs) if path.endswith((".jsonl", ".json")) \
                else Ratings.from_csv(path, **kwargs)
        from .datasets import load_dataset

        return load_dataset(name_or_path, **kwargs)

    return load


@pytest.fixture
def fake_llm_server():
    """A loopback fake OpenAI-compatible server (latency, fault injection, request counts)."""
    from .llm.fake_server import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


# ---------------------------------------------------------------------- MindEval
@pytest.fixture
def patient(request: pytest.FixtureRequest):
    """A MindEval patient profile. Parametrized by ``@pytest.mark.patients(n=..., seed=...)``;
    without the marker, the first profile of seed 0."""
    from .mindeval.profiles import sample_profiles

    return sample_profiles(1, seed=0)[0]


@pytest.fixture
def clinician(judgerel_settings):
    """The system under test of a MindEval interaction: by default the configured judge
    model acting as clinician. Override this fixture with a model name, a callable
    ``fn(messages) -> str`` or an object with ``respond(messages)``."""
    from .llm import default_model

    return judgerel_settings.model or default_model()


@pytest.fixture
def mindeval_judge(request: pytest.FixtureRequest, judgerel_client, judgerel_settings):
    """The 5-axis MindEval judge (seed 004, Figures 11-12) on the configured model."""
    from .mindeval.fixtures import make_judge

    return make_judge(request.node, judgerel_client, judgerel_settings)


@pytest.fixture
def interaction(request: pytest.FixtureRequest, patient, clinician, judgerel_client, judgerel_settings):
    """One simulated MindEval conversation between ``patient`` and ``clinician``
    (turns from ``@pytest.mark.patients(turns=...)``, default 20)."""
    from .mindeval.fixtures import make_interaction

    return make_interaction(request.node, patient, clinician, judgerel_client, judgerel_settings)

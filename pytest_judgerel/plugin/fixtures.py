"""Fixtures of pytest-judgerel (registered by the plugin at configure time), and the builders
that turn a test's markers into a :class:`~pytest_judgerel.judging.judge.Judge`.

Every fixture imports what it needs lazily, so a session that uses none of
them never imports litellm, scipy or diskcache.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest


from .lifecycle import session_of as _session


# ---------------------------------------------------------------------- builders
def judge_from_node(node: Any, client: Any, settings: Any, scale: Any = None, endpoint: Any = None) -> Any:
    """Build the ``judge`` fixture's Judge from markers, options and ini.

    ``endpoint`` is the session's (None: the session context's, :mod:`pytest_judgerel.session.context`);
    a judge marker's ``model``/``api_base`` refine it, and a marker naming an in-process model
    (``scripted/...``) gets no server.
    """
    from ..judging.judge import Judge
    from ..llm.endpoint import resolve_endpoint
    from .markers import marker_scales

    kw: dict[str, Any] = {}
    # module, class and function markers merge key by key; the closest one wins per key
    for mark in reversed(list(node.iter_markers("judge"))):
        kw.update({k: v for k, v in mark.kwargs.items() if v is not None})
    axis = node.get_closest_marker("axis")
    if axis is not None:
        kw["axis"] = axis.args[0]
    rep = node.get_closest_marker("repeats")
    names = marker_scales(node)
    template = kw.pop("template", "stsb")
    if isinstance(template, str) and "\n" not in template and template.endswith(".txt"):
        from .._io import input_path

        # a template file named in a marker is relative to the rootdir, like the cache
        template = input_path(template, "template", base=node.config.rootpath)
    model, api_base = kw.pop("model", None), kw.pop("api_base", None)
    if endpoint is not None:
        judge_endpoint = resolve_endpoint(model, api_base, default=endpoint)
    else:  # the session's, refined by the marker (a marker naming an in-process model needs no session model)
        judge_endpoint = _session(node.config).context.resolve(model, api_base)
    return Judge(
        endpoint=judge_endpoint,
        template=template,
        scale=scale if scale is not None else (names[0] if names else None),
        scales=tuple(names),
        temperature=kw.pop("temperature", settings.temperature),
        max_tokens=kw.pop("max_tokens", settings.max_tokens),
        repeats=rep.args[0] if rep is not None else settings.repeats,
        reask=kw.pop("reask", settings.reask),
        constrain=kw.pop("constrain", settings.constrain),
        sequential=kw.pop("sequential", settings.sequential),
        client=client,
        test_id=node.nodeid,
        **kw,
    )


def panel_from_node(node: Any, client: Any, settings: Any, endpoint: Any = None) -> Any:
    """The ``judge_panel`` fixture: the judge configuration over the marker's models (same server)."""
    from ..errors import ConfigError
    from ..judging.judge import JudgePanel

    mark = node.get_closest_marker("judge_panel")
    if mark is None:
        raise ConfigError(f"{node.nodeid}: the judge_panel fixture needs @pytest.mark.judge_panel('model-a', ...)")
    return JudgePanel(judge_from_node(node, client, settings, endpoint=endpoint), list(mark.args),
                      **{k: v for k, v in mark.kwargs.items() if k in ("rule", "tie_rule")})


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def judgerel_settings(pytestconfig: pytest.Config):
    """The resolved judgerel settings (options > ini > environment > defaults)."""
    return _session(pytestconfig).settings


@pytest.fixture(scope="session")
def judgerel_endpoint(pytestconfig: pytest.Config):
    """The session's :class:`~pytest_judgerel.llm.Endpoint`: the judge model, the server that
    answers it (``--judge-api-base``) and its key; pass it to anything that makes calls
    (``Judge(endpoint=...)``, ``run_interactions(..., endpoint=...)``)."""
    return _session(pytestconfig).endpoint


@pytest.fixture
def real_judge(judgerel_endpoint):
    """Request it in a gate that only a real judge can meet (agreement with humans): on the
    embedded 135M model the test skips with a reason that says so; any configured model runs it."""
    if judgerel_endpoint.embedded:
        from ..llm.endpoint import EMBEDDED_LABEL

        pytest.skip(f"{judgerel_endpoint.model} is the {EMBEDDED_LABEL}; this gate needs a real judge: "
                    "--judge-model=<litellm model>")
    return judgerel_endpoint


@pytest.fixture(scope="session")
def judgerel_client(pytestconfig: pytest.Config):
    """The process-wide :class:`~pytest_judgerel.llm.LLMClient` (cache, concurrency, retries)."""
    return _session(pytestconfig).client


@pytest.fixture
def scale(request: pytest.FixtureRequest):
    """The grading scale of this test: one of ``@pytest.mark.scale(...)`` (parametrized),
    else ``0-5`` (seed 001: human-LLM alignment is highest on 0-5)."""
    from ..judging.judge import DEFAULT_SCALE
    from .markers import marker_scales
    from ..scales import Scale

    names = marker_scales(request.node)
    return Scale.parse(names[0] if names else DEFAULT_SCALE)


@pytest.fixture
def judge(request: pytest.FixtureRequest, judgerel_client, judgerel_settings):
    """A :class:`~pytest_judgerel.judging.judge.Judge` configured from the test's markers
    (``judge``, ``scale``, ``axis``, ``repeats``), the options and the ini file."""
    scale_value = request.getfixturevalue("scale") if "scale" in request.fixturenames else None
    return judge_from_node(request.node, judgerel_client, judgerel_settings, scale=scale_value)


@pytest.fixture
def judge_panel(request: pytest.FixtureRequest, judgerel_client, judgerel_settings):
    """A :class:`~pytest_judgerel.judging.judge.JudgePanel`: the ``judge`` configuration over every
    model named in ``@pytest.mark.judge_panel(...)`` (seed 001's LLM panel), on the session's server."""
    return panel_from_node(request.node, judgerel_client, judgerel_settings)


@pytest.fixture(scope="session")
def human_ratings(pytestconfig: pytest.Config) -> Callable[..., Any]:
    """Load a human-rated data set: ``human_ratings("squality", criterion="overall")``
    returns a :class:`~pytest_judgerel.judging.datasets.HumanDataset` (``.ratings()``, ``.items``);
    a path to a CSV or JSONL file of long records (relative to the rootdir, like every path
    the plugin reads) returns :class:`~pytest_judgerel.Ratings`."""

    def load(name_or_path: str, **kwargs: Any):
        text = str(name_or_path)
        if text.endswith((".csv", ".jsonl", ".json")) or "/" in text or "\\" in text:
            from .._io import input_path
            from ..ratings import Ratings

            path = input_path(text, "ratings", base=pytestconfig.rootpath)
            return Ratings.from_jsonl(path, **kwargs) if path.suffix in (".jsonl", ".json") \
                else Ratings.from_csv(path, **kwargs)
        from ..judging.datasets import load_dataset

        return load_dataset(text, **kwargs)

    return load


# ---------------------------------------------------------------------- MindEval
@pytest.fixture
def patient(request: pytest.FixtureRequest):
    """A MindEval patient profile. Parametrized by ``@pytest.mark.patients(n=..., seed=...)``;
    without the marker, the first profile of seed 0."""
    from ..mindeval.profiles import sample_profiles

    return sample_profiles(1, seed=0)[0]


@pytest.fixture
def clinician(judgerel_endpoint):
    """The system under test of a MindEval interaction: by default the session's model (and
    server) acting as clinician. Override this fixture with an
    :class:`~pytest_judgerel.llm.Endpoint`, a model name (served by ``--judge-api-base`` when
    set), a callable ``fn(messages) -> str`` or an object with ``respond(messages)``."""
    return judgerel_endpoint


@pytest.fixture
def mindeval_judge(request: pytest.FixtureRequest, judgerel_client, judgerel_settings, judgerel_endpoint):
    """The 5-axis MindEval judge (seed 004, Figures 11-12) on the session's model and server."""
    from .mindeval import make_judge

    return make_judge(request.node, judgerel_client, judgerel_settings, judgerel_endpoint)


@pytest.fixture
def interaction(request: pytest.FixtureRequest, patient, clinician, judgerel_client, judgerel_settings,
                judgerel_endpoint):
    """One simulated MindEval conversation between ``patient`` and ``clinician``
    (turns from ``@pytest.mark.patients(turns=...)``, default 20)."""
    from .mindeval import make_interaction

    return make_interaction(request.node, patient, clinician, judgerel_client, judgerel_settings,
                            judgerel_endpoint)

"""Patient/clinician interactions (MindEval sections 2.1-2.2, Figures 7-10).

Loop, as in the benchmark: the patient opens with the fixed message ``"Hello"``; then
``turns // 2`` rounds of (clinician reply, patient reply).  ``turns`` counts generated turns
(default 20, i.e. 21 messages ending on the patient; the paper also runs 40).  Messages are
stored from the clinician's point of view (patient = ``user``, clinician = ``assistant``);
the patient LM sees the mirror image.  The clinician sees only the member context (Figure 10),
never the backstory nor the rubric.

Every turn is one :class:`pytest_judgerel.llm.LLMRequest` whose messages are the conversation
so far, so the LLM layer's cache makes an interrupted run resume where it stopped.  A clinician
given as a Python callable (or an object with a method) is routed through the same layer as a
scripted model, so it is cached and resumable too.  Sampling settings are explicit and recorded.
An empty reply is re-requested (next ``sample_index``) and a failed call retried, at most
``max_turn_retries`` times; then :class:`InteractionError` names the patient, turn and role.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from pytest_judgerel.errors import CacheMissError, ConfigError, JudgerelError, LLMCallError

if TYPE_CHECKING:
    from pytest_judgerel.llm.endpoint import Endpoint

__all__ = [
    "SamplingSettings",
    "Turn",
    "Interaction",
    "InteractionError",
    "run_interactions",
    "run_interaction",
    "arun_interactions",
    "resolve_clinician",
    "save_interactions",
    "load_interactions",
]


class InteractionError(JudgerelError, RuntimeError):
    """An interaction could not be completed.  ``completed`` holds the interactions that did
    finish (their turns are cached: re-running resumes); ``failures`` maps profile ids to errors."""

    def __init__(self, message: str, completed: Sequence["Interaction"] = (), failures: Mapping[str, str] | None = None):
        super().__init__(message)
        self.completed = list(completed)
        self.failures = dict(failures or {})


@dataclass(frozen=True)
class SamplingSettings:
    """Explicit sampling parameters of one role (the release set none; we always record them)."""

    temperature: float | None = 0.7
    top_p: float | None = 1.0
    seed: int | None = 0
    max_tokens: int | None = None

    def as_request_kwargs(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Turn:
    """One message.  ``role`` from the clinician's view: ``"user"`` = patient, ``"assistant"`` =
    clinician.  Metadata: responding ``model``, ``latency`` (s, of the original call),
    ``cached``, ``sample_index`` used, ``retries`` spent on empty/failed replies, cache ``key``."""

    role: str
    content: str
    model: str | None = None
    latency: float = 0.0
    cached: bool = False
    sample_index: int = 0
    retries: int = 0
    key: str | None = None

    @property
    def speaker(self) -> str:
        return "patient" if self.role == "user" else "clinician"


@dataclass(frozen=True)
class Interaction:
    """A finished conversation between one simulated patient and one clinician."""

    profile: Any
    clinician: str
    patient_model: str
    turns: tuple[Turn, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def interaction_id(self) -> str:
        return f"{getattr(self.profile, 'profile_id', None) or 'profile'}::{self.clinician}"

    @property
    def messages(self) -> list[dict[str, str]]:
        """Role/content list from the clinician's point of view (system prompts excluded)."""
        return [{"role": t.role, "content": t.content} for t in self.turns]

    @property
    def clinician_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "assistant"]

    @property
    def n_generated_turns(self) -> int:
        return len(self.turns) - 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "interaction_id": self.interaction_id,
            "profile": self.profile.to_record() if hasattr(self.profile, "to_record") else dict(self.profile),
            "clinician": self.clinician,
            "patient_model": self.patient_model,
            "settings": dict(self.settings),
            "turns": [asdict(t) for t in self.turns],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Interaction":
        from pytest_judgerel.mindeval.profiles import PatientProfile

        prof = data["profile"]
        profile = PatientProfile.from_attributes(
            prof["member_attributes"], member_narrative=prof.get("member_narrative"),
            member_narrative_thinking_trace=prof.get("member_narrative_thinking_trace"),
            profile_id=prof.get("profile_id"),
        )
        return cls(profile, data["clinician"], data["patient_model"],
                   tuple(Turn(**t) for t in data["turns"]), data.get("settings", {}))


# ----------------------------------------------------------------------------- clinician resolution

_METHOD_NAMES = ("respond", "reply", "generate", "chat", "complete")
_registered_lock = threading.Lock()


def resolve_clinician(clinician: Any, name: str | None = None, method: str | None = None) -> str:
    """Turn a clinician spec into a model name usable in :class:`LLMRequest`.

    * an :class:`~pytest_judgerel.llm.Endpoint`: its model (its server is used by the runner);
    * a string: a litellm model name, used as is;
    * a callable ``fn(messages) -> str``: registered as scripted model ``scripted/<name>``;
    * an object with a method (``method``, else the first of respond/reply/generate/chat/complete,
      else ``__call__``): the bound method is registered the same way.

    ``name`` identifies the clinician in cache keys and results (default: the function's
    qualified name).  Change it when you change the clinician's behaviour, or the cache will
    serve the old answers.
    """
    from pytest_judgerel.llm.endpoint import Endpoint

    if isinstance(clinician, Endpoint):
        return clinician.model
    if isinstance(clinician, str):
        if not clinician.strip():
            raise ConfigError("clinician model name is empty")
        return clinician
    fn: Callable[..., Any] | None = None
    if method is not None:
        fn = getattr(clinician, method, None)
        if not callable(fn):
            raise ConfigError(f"clinician {clinician!r} has no callable method {method!r}")
    elif callable(clinician):
        fn = clinician
    else:
        for m in _METHOD_NAMES:
            cand = getattr(clinician, m, None)
            if callable(cand):
                fn = cand
                break
    if fn is None:
        raise ConfigError(
            f"clinician must be a model name, a callable(messages) -> str, or an object with one of "
            f"{_METHOD_NAMES}; got {type(clinician).__name__}"
        )
    label = name or getattr(fn, "__qualname__", None) or type(clinician).__name__
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in label).strip("-") or "clinician"
    model = f"scripted/clinician-{safe}"
    from pytest_judgerel.llm.scripted import register_scripted

    def script(messages: list[dict[str, Any]], **_params: Any) -> str:
        return fn(messages)

    with _registered_lock:
        register_scripted(model, script)
    return model


# ----------------------------------------------------------------------------- runner

#: a dry run's placeholder turn (non-empty, as the runner requires)
DRY_TURN = "Placeholder turn of a dry run: I hear you. Could you tell me more about your week?"


def _mirror(turns: Sequence[Turn]) -> list[dict[str, str]]:
    return [{"role": "assistant" if t.role == "user" else "user", "content": t.content} for t in turns]


async def _one_turn(
    client: Any, model: str, system_prompt: str, history: list[dict[str, str]], sampling: SamplingSettings,
    *, role: str, pid: str, turn_no: int, max_retries: int, namespace: str, endpoint: Mapping[str, Any],
) -> Turn:
    from pytest_judgerel.llm import LLMRequest

    messages = ({"role": "system", "content": system_prompt},) + tuple(history)
    sample_index = 0
    retries = 0
    last_problem = ""
    while True:
        request = LLMRequest(
            model=model, messages=messages, sample_index=sample_index, namespace=namespace,
            metadata={"mindeval": role, "profile": pid, "turn": turn_no, "reasks": max_retries - retries,
                      "dry_reply": DRY_TURN}, **sampling.as_request_kwargs(),
            **endpoint,
        )
        try:
            (resp,) = await client.acomplete_many([request])
        except (CacheMissError, ConfigError) as exc:  # retrying cannot help: report at once
            raise InteractionError(f"patient {pid}, turn {turn_no} ({role}, model {model}): {exc}") from exc
        except (LLMCallError, JudgerelError) as exc:
            last_problem = f"call failed: {exc}"
            resp = None
        except Exception as exc:  # provider errors surfacing unwrapped
            last_problem = f"call failed: {type(exc).__name__}: {exc}"
            resp = None
        if resp is not None:
            text = (resp.text or "").strip()
            if text:
                return Turn("assistant" if role == "clinician" else "user", text, resp.model or model,
                            float(resp.latency), bool(resp.cached), sample_index, retries, resp.key)
            last_problem = "empty reply"
        # ask for a new sample (an empty answer may be cached under the old index)
        sample_index += 1
        retries += 1
        if retries > max_retries:
            raise InteractionError(
                f"patient {pid}, turn {turn_no} ({role}, model {model}): {last_problem} "
                f"after {max_retries} retr{'y' if max_retries == 1 else 'ies'}"
            )


async def _run_one(
    profile: Any, clinician_model: str, patient_model: str, client: Any, *, turns: int,
    patient_prompt: str, clinician_prompt: str, patient_sampling: SamplingSettings,
    clinician_sampling: SamplingSettings, max_turn_retries: int, namespace: str, settings: Mapping[str, Any],
    on_finished: Callable[[Interaction], None] | None, patient_endpoint: Mapping[str, Any],
    clinician_endpoint: Mapping[str, Any],
) -> Interaction:
    from pytest_judgerel.mindeval.prompts import PATIENT_OPENING

    pid = str(getattr(profile, "profile_id", None) or "profile")
    history: list[Turn] = [Turn("user", PATIENT_OPENING, model=None)]
    for round_no in range(turns // 2):
        clin = await _one_turn(
            client, clinician_model, clinician_prompt, [{"role": t.role, "content": t.content} for t in history],
            clinician_sampling, role="clinician", pid=pid, turn_no=2 * round_no + 1,
            max_retries=max_turn_retries, namespace=namespace, endpoint=clinician_endpoint,
        )
        history.append(clin)
        pat = await _one_turn(
            client, patient_model, patient_prompt, _mirror(history), patient_sampling, role="patient",
            pid=pid, turn_no=2 * round_no + 2, max_retries=max_turn_retries, namespace=namespace,
            endpoint=patient_endpoint,
        )
        history.append(pat)
    inter = Interaction(profile, clinician_model, patient_model, tuple(history), dict(settings))
    if on_finished is not None:
        on_finished(inter)
    return inter


def _check_run_arguments(turns: Any, on_error: Any, max_turn_retries: Any, patient_model: Any) -> None:
    """Refuse a run whose turn count, error policy, retry count or patient model is unusable."""
    from pytest_judgerel.llm.endpoint import Endpoint

    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 2 or turns % 2:
        raise ConfigError(f"turns must be an even int >= 2 (clinician and patient alternate), got {turns!r}")
    if on_error not in ("raise", "skip"):
        raise ConfigError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if isinstance(max_turn_retries, bool) or not isinstance(max_turn_retries, int) or max_turn_retries < 0:
        raise ConfigError(f"max_turn_retries must be an int >= 0, got {max_turn_retries!r}")
    if not isinstance(patient_model, Endpoint) and (not isinstance(patient_model, str) or not patient_model):
        raise ConfigError(f"patient_model must be a litellm model name or an Endpoint, got {patient_model!r}")


def _profile_ids(profiles: Sequence[Any]) -> list[str]:
    """Each profile's id (its position when it has none); they must be distinct."""
    ids = [str(getattr(p, "profile_id", None) or i) for i, p in enumerate(profiles)]
    if len(set(ids)) != len(ids):
        raise ConfigError("profiles need distinct profile_id values (they name interactions and cache entries)")
    return ids


def _clinician_endpoint(clinician: Any, model: str, api_base: str | None, api_key: str | None) -> Endpoint:
    """Where the clinician's calls go: an Endpoint as given, a model name on the session's server
    unless ``api_base`` is given, a Python clinician (a scripted model) on no server."""
    from pytest_judgerel.llm.endpoint import Endpoint, as_endpoint
    from pytest_judgerel.session.context import session_endpoint

    if isinstance(clinician, Endpoint):
        return as_endpoint(clinician, api_base, api_key)
    if isinstance(clinician, str):
        return session_endpoint(model, api_base, api_key)
    return Endpoint(model, api_base, api_key)


def _jsonl_appender(output_path: str | Path | None) -> Callable[[Interaction], None]:
    """A thread-safe callback that appends each finished interaction to ``output_path`` (JSONL),
    or does nothing without a path."""
    sink_lock = threading.Lock()
    out_file = Path(output_path) if output_path is not None else None

    def on_finished(inter: Interaction) -> None:
        if out_file is None:
            return
        with sink_lock, out_file.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(inter.to_dict(), ensure_ascii=False) + "\n")

    return on_finished


def _finished_or_raise(results: Sequence[Any], ids: Sequence[str], on_error: str) -> list[Interaction]:
    """The finished interactions; with ``on_error="raise"`` any failure raises
    :class:`InteractionError` carrying the finished ones and every failure."""
    done = [r for r in results if isinstance(r, Interaction)]
    failures = {pid: f"{type(r).__name__}: {r}" for pid, r in zip(ids, results) if isinstance(r, BaseException)}
    if failures and on_error == "raise":
        first = next(iter(failures.items()))
        raise InteractionError(
            f"{len(failures)} of {len(results)} interactions failed (finished turns are cached; re-run to resume). "
            f"First: {first[0]}: {first[1]}", completed=done, failures=failures,
        )
    return done


async def arun_interactions(
    profiles: Sequence[Any],
    clinician: Any,
    client: Any,
    *,
    patient_model: Any,
    turns: int = 20,
    patient_variant: str = "default",
    short_turns: bool = False,
    clinician_name: str | None = None,
    clinician_method: str | None = None,
    patient_sampling: SamplingSettings | None = None,
    clinician_sampling: SamplingSettings | None = None,
    max_turn_retries: int = 2,
    namespace: str = "mindeval",
    output_path: str | Path | None = None,
    on_error: str = "raise",
    patient_api_base: str | None = None,
    patient_api_key: str | None = None,
    clinician_api_base: str | None = None,
    clinician_api_key: str | None = None,
) -> list[Interaction]:
    """Async version of :func:`run_interactions` (all patients run concurrently)."""
    from pytest_judgerel.mindeval.prompts import render_clinician_prompt, render_patient_prompt
    from pytest_judgerel.session.context import session_endpoint

    _check_run_arguments(turns, on_error, max_turn_retries, patient_model)
    # a model name is served by the current session's server (pytest_judgerel.session.context), an Endpoint as given
    patient_ep = session_endpoint(patient_model, patient_api_base, patient_api_key)
    profiles = list(profiles)
    ids = _profile_ids(profiles)
    clinician_model = resolve_clinician(clinician, clinician_name, clinician_method)
    clinician_ep = _clinician_endpoint(clinician, clinician_model, clinician_api_base, clinician_api_key)
    psamp = patient_sampling or SamplingSettings()
    csamp = clinician_sampling or SamplingSettings()
    settings = {
        "turns": turns, "patient_variant": patient_variant, "short_turns": short_turns,
        "patient_sampling": asdict(psamp), "clinician_sampling": asdict(csamp),
        "max_turn_retries": max_turn_retries, "namespace": namespace,
        "patient_api_base": patient_ep.api_base, "clinician_api_base": clinician_ep.api_base,  # keys never recorded
    }
    patient_endpoint = {"api_base": patient_ep.api_base, "api_key": patient_ep.api_key}
    clinician_endpoint = {"api_base": clinician_ep.api_base, "api_key": clinician_ep.api_key}
    prompts = [(render_patient_prompt(p, patient_variant), render_clinician_prompt(p, short_turns)) for p in profiles]
    on_finished = _jsonl_appender(output_path)  # each interaction saved as it finishes
    coros = [
        _run_one(p, clinician_model, patient_ep.model, client, turns=turns, patient_prompt=pp, clinician_prompt=cp,
                 patient_sampling=psamp, clinician_sampling=csamp, max_turn_retries=max_turn_retries,
                 namespace=namespace, settings=settings, on_finished=on_finished,
                 patient_endpoint=patient_endpoint, clinician_endpoint=clinician_endpoint)
        for p, (pp, cp) in zip(profiles, prompts)
    ]
    return _finished_or_raise(await asyncio.gather(*coros, return_exceptions=True), ids, on_error)


def run_interactions(profiles: Sequence[Any], clinician: Any, client: Any, turns: int = 20, **kwargs: Any) -> list[Interaction]:
    """Simulate one conversation per profile with ``clinician``; returns :class:`Interaction` s.

    ``clinician``: a litellm model name, a callable ``fn(messages) -> str`` or an object with a
    method, or an :class:`~pytest_judgerel.llm.Endpoint` (see :func:`resolve_clinician`).
    ``patient_model`` (keyword, required) is the patient LM: a model name or an Endpoint.
    Other keywords: ``patient_variant`` (``"default"`` = Figure 7, ``"no_format"``, ``"role_only"``), ``short_turns`` (ask the clinician for <= 4 sentences), sampling settings,
    ``max_turn_retries``, ``output_path`` (JSONL appended as each interaction finishes),
    ``on_error`` (``"raise"`` or ``"skip"``), ``patient_api_base``/``patient_api_key`` and
    ``clinician_api_base``/``clinician_api_key`` (e.g. a local OpenAI-compatible server; keys
    are never recorded).  Safe to call inside a running event loop.
    """
    coro_factory = lambda: arun_interactions(profiles, clinician, client, turns=turns, **kwargs)  # noqa: E731
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    box: dict[str, Any] = {}

    context = contextvars.copy_context()  # the session context and the test's recorder follow

    def worker() -> None:
        try:
            box["value"] = context.run(asyncio.run, coro_factory())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=worker, name="judgerel-mindeval")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_interaction(
    profile: Any,
    clinician: Any,
    client: Any,
    *,
    patient_model: Any,
    backstory_model: Any = None,
    turns: int = 20,
    constrain: str | None = None,
    **kwargs: Any,
) -> Interaction:
    """One patient, one clinician: generates the backstory first when the profile has none
    (with ``backstory_model``, default the patient's model and server) unless the
    ``"role_only"`` patient variant is used, then runs :func:`run_interactions`.
    ``patient_model``/``backstory_model``: a model name or an
    :class:`~pytest_judgerel.llm.Endpoint`; ``constrain`` applies the 4-paragraph grammar to
    the backstory (see :func:`~pytest_judgerel.mindeval.backstory.backstory_request`; None: the
    session's).
    Convenient for per-test fixtures."""
    if not getattr(profile, "member_narrative", None) and kwargs.get("patient_variant", "default") != "role_only":
        from pytest_judgerel.llm.endpoint import Endpoint, as_endpoint
        from pytest_judgerel.mindeval.backstory import generate_backstories

        from pytest_judgerel.session.context import session_endpoint

        writer = as_endpoint(backstory_model) if isinstance(backstory_model, Endpoint) else session_endpoint(
            backstory_model) if backstory_model is not None else session_endpoint(
            patient_model, kwargs.get("patient_api_base"), kwargs.get("patient_api_key"))
        (profile,) = generate_backstories([profile], writer, client, constrain=constrain)
    (inter,) = run_interactions([profile], clinician, client, turns=turns, patient_model=patient_model, **kwargs)
    return inter


# ----------------------------------------------------------------------------- persistence

def save_interactions(interactions: Sequence[Interaction], path: str | Path) -> Path:
    """Write interactions as JSONL (one ``Interaction.to_dict()`` per line, atomic replace)."""
    from pytest_judgerel._io import write_jsonl_atomic

    return write_jsonl_atomic(path, (inter.to_dict() for inter in interactions))


def load_interactions(path: str | Path) -> list[Interaction]:
    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    out.append(Interaction.from_dict(json.loads(line)))
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise ConfigError(f"{path}:{lineno}: not an interaction record ({exc})") from exc
    return out

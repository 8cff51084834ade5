"""The data release of seed 001 (Li et al. 2026): human Label Studio exports and judge CSVs.

The authors published their ratings in the GitHub repository
``Harvard-AI-and-Robotics-Lab/LLM-Judge`` (no licence: the project never ships its files;
point :func:`load_seed001_release` at a checkout).  Layout, as read from the files
(commit 69181a2)::

    data/human/<Female|Male>_Subject_<i>_0_<hi>/<Gender>_Subject_<i>_<Bench>_results_0_<hi>.json
    data/llm/<bench file>.csv                          (six judges x three scales, T = 1.0)
    data/llm/temperatures/<dir>/<file with T>.csv      (Llama and Gemini at T = 0.1, 0.4, 0.7)

Each quirk the loader meets is handled the same way every time and reported in
:attr:`Seed001Release.notes`, never silently: score columns spelled four ways, text fields
with embedded newlines, rows humans did not rate (MoralChoice's second actions), missing
judge scores, MT-Bench's ``data.id`` that changes meaning between files (joined on
``question_id``), item text that differs between annotators' files, the pseudonymised
TruthfulQA answer (joined on ``id``), submitted annotations that differ from a left-over
draft, and SummEval's five fields stored in the order each annotator filled them
(:data:`SUMMEVAL_READINGS`; the default ``"first"`` is the reading that reproduces the
paper, see docs/study.md).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..errors import RatingsError
from ..ratings import Ratings
from ..scales import Scale

SCALES = ("0-5", "0-10", "0-100")
"""The three grading scales (seed 001 section 4.2)."""

MODELS = ("Llama", "Qwen", "GPT", "Mistral", "DeepSeek", "Gemini")
"""The six judges under the paper's abbreviations (section 4.2), in the order of its Table 1."""

TEMPERATURES = (0.1, 0.4, 0.7, 1.0)
"""The ablation's temperatures (section 5.3); T = 1.0 is the main run (section 4.3)."""

SUMMEVAL_DIMENSIONS = ("relevance", "coherence", "fluency", "consistency")

SUMMEVAL_READINGS = ("first", "overall", "mean") + SUMMEVAL_DIMENSIONS
"""How a SummEval annotation (five number fields) becomes one human score.

``"first"`` (default): the field the annotator filled first (``result[0]``); with it the
human panels reproduce Tables 2, 3, 5, 14 and 15 within 0.001, while the other
readings move SummEval's ICC_Human by 0.002 to 0.025 (docs/study.md).  ``"overall"``: the field named
``overall``; ``"mean"``: the mean of the four dimensions; a dimension name: that field.
"""

_MODEL_ALIASES = {
    "llama": "Llama", "llama33": "Llama", "qwen": "Qwen", "qwen3": "Qwen", "gpt4o": "GPT",
    "mistral": "Mistral", "deepseek": "DeepSeek", "gemini": "Gemini",
}
_SCORE_COLUMN = re.compile(r"^(?P<model>[A-Za-z][A-Za-z0-9.\-]*?)(?:_score)?_0[_-](?P<hi>5|10|100)"
                           r"(?:_(?P<dim>[a-z]+))?$")
_HUMAN_DIR = re.compile(r"^(?P<gender>Female|Male)_Subject_(?P<i>\d+)_0_(?P<hi>5|10|100)$")
_HUMAN_FILE = re.compile(r"^(?P<gender>Female|Male)_Subject_(?P<i>\d+)_(?P<bench>.+)_results_0_(?P<hi>5|10|100)\.json$")
_TEMPERATURE = re.compile(r"(?:_temperature=|_temp_|_t)(?P<t>\d+(?:\.\d+)?)\.csv$")


@dataclass(frozen=True)
class _Bench:
    """How one benchmark of the release is read (facts of the release's files)."""

    name: str
    csv: str
    temperature_dir: str
    dimension: str | None        # the LLM column suffix that holds the score (None: no suffix)
    human_field: str | None      # Label Studio from_name of the score (None: SummEval, several)
    join: str                    # how human tasks meet CSV rows (see _join_key)


BENCHMARKS: tuple[_Bench, ...] = (
    _Bench("STS-B", "similarity_25_samples_all_models.csv", "STS-Benchmark", None, "similarity_score", "sentences"),
    _Bench("ToxiGen", "toxicity_25_samples_all_models.csv", "ToxiGen", None, "toxicity_score", "text"),
    _Bench("MoralChoice", "moralchoice_25_samples_comparison.csv", "MoralChoices", None, "moral_score", "scenario"),
    _Bench("TruthfulQA", "TruthfulQA_25_samples_comparison.csv", "TrusthfulQA", None, "truthfulness_score", "id"),
    _Bench("MT-Bench", "MTbench_sample_25_scores_summary.csv", "MTbench", "total", "overall", "question_id"),
    _Bench("SummEval", "summary_data_sample_25_all_scores.csv", "SummEval", "overall", None, "sample_id"),
)
"""The six benchmarks in the order of the paper's Tables 3, 14 and 15."""


@dataclass(frozen=True)
class ReleaseNote:
    """One quirk of the release met by the loader and how it was handled."""

    kind: str
    detail: str
    benchmark: str | None = None
    scale: str | None = None
    items: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = " ".join(x for x in (self.benchmark, self.scale) if x)
        shown = f" [{', '.join(self.items[:8])}{', ...' if len(self.items) > 8 else ''}]" if self.items else ""
        return f"{self.kind}{' (' + where + ')' if where else ''}: {self.detail}{shown}"


@dataclass(frozen=True)
class Seed001Release:
    """The release as Ratings.

    ``human[(benchmark, scale)]``: items x 12 raters (rater group ``gender``), item ids that
    match the judge rows.  ``llm[(benchmark, scale)]``: every CSV row x the six judges (item
    group ``human_rated``: ``"yes"``/``"no"``; NaN = a missing score).
    ``temperatures[(t, benchmark, scale)]``: rows x Llama, Gemini at t = 0.1, 0.4, 0.7.
    """

    root: Path
    human: Mapping[tuple[str, str], Ratings]
    llm: Mapping[tuple[str, str], Ratings]
    temperatures: Mapping[tuple[float, str, str], Ratings]
    notes: tuple[ReleaseNote, ...]
    summeval_reading: str

    @property
    def benchmarks(self) -> tuple[str, ...]:
        return tuple(b.name for b in BENCHMARKS)

    def judged(self, temperature: float | None = None) -> dict[tuple[str, str, str], Ratings]:
        """``{(model, scale, benchmark): Ratings}`` (one column) as :func:`pytest_judgerel.study.analysis.analyse`
        takes them; ``temperature`` 0.1/0.4/0.7 reads the ablation files, None or 1.0 the main run."""
        if temperature is None or temperature == 1.0:
            source = {(b, s): r for (b, s), r in self.llm.items()}
        else:
            source = {(b, s): r for (t, b, s), r in self.temperatures.items() if t == temperature}
            if not source:
                raise RatingsError(f"no temperature {temperature} in the release; it has "
                                   f"{sorted({t for t, _, _ in self.temperatures})} and the main run (1.0)")
        out: dict[tuple[str, str, str], Ratings] = {}
        for (bench, scale), r in source.items():
            for model in r.rater_ids:
                out[(model, scale, bench)] = r.select_raters([model])
        return out

    def human_by_scale(self) -> dict[tuple[str, str], Ratings]:
        """``{(benchmark, scale): Ratings}``: the human panel of each scale (humans rated each
        scale in a separate block, seed 001 section 4.2)."""
        return dict(self.human)

    def summary(self) -> str:
        n_h = sum(r.n_items for r in self.human.values())
        n_l = sum(r.n_items for r in self.llm.values())
        n_r = max(r.n_raters for r in self.human.values())
        n_m = max(r.n_raters for r in self.llm.values())
        lines = [f"seed-001 release at {self.root}: {n_h} human items x {n_r} raters, {n_l} judge rows x {n_m} judges "
                 f"over {len(SCALES)} scales; SummEval reading {self.summeval_reading!r}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def load_seed001_release(root: str | Path, *, summeval_reading: str = "first") -> Seed001Release:
    """Read a checkout of ``Harvard-AI-and-Robotics-Lab/LLM-Judge`` (its root or its ``data``
    folder).  Raises :class:`~pytest_judgerel.errors.RatingsError` naming the file and field
    when a file breaks the layout (an unknown score column, a score outside its scale, a
    task without a submitted annotation)."""
    if summeval_reading not in SUMMEVAL_READINGS:
        raise RatingsError(f"summeval_reading must be one of {SUMMEVAL_READINGS}, got {summeval_reading!r}")
    base = Path(root)
    data = base / "data" if (base / "data").is_dir() else base
    if not (data / "human").is_dir() or not (data / "llm").is_dir():
        raise RatingsError(f"{root}: not the seed-001 release (expected data/human and data/llm folders)")
    notes: list[ReleaseNote] = []
    llm_rows = {b.name: _read_csv(data / "llm" / b.csv) for b in BENCHMARKS}
    human_raw = _read_human(data / "human", summeval_reading, notes)
    human: dict[tuple[str, str], Ratings] = {}
    llm: dict[tuple[str, str], Ratings] = {}
    for bench in BENCHMARKS:
        rows = llm_rows[bench.name]
        keys = _row_ids(bench, rows)
        rated = _join(bench, rows, keys, human_raw, notes)
        if bench.name == "MoralChoice":
            unrated = [k for k in keys if k not in rated]
            notes.append(ReleaseNote("rows humans did not rate", f"{len(unrated)} judge rows (the second action of "
                                     "each scenario) have no human ratings: they enter the LLM panel only",
                                     bench.name, items=tuple(unrated)))
        for scale in SCALES:
            llm[(bench.name, scale)] = _judge_ratings(bench, scale, rows, keys, rated, MODELS, notes,
                                                      str(data / "llm" / bench.csv))
            human[(bench.name, scale)] = _human_ratings(bench.name, scale, human_raw, rated)
    rated_ids = {b: {k for k, g in zip(r.item_ids, r.item_groups["human_rated"]) if g == "yes"}
                 for (b, s), r in llm.items()}
    temperatures = _read_temperatures(data / "llm" / "temperatures", llm_rows, rated_ids, notes)
    return Seed001Release(base, human, llm, temperatures, tuple(notes), summeval_reading)


# ---------------------------------------------------------------------- judge CSVs
def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise RatingsError(f"{path}: missing (the release has one CSV per benchmark)")
    with path.open(newline="", encoding="utf-8-sig") as fh:  # newline="": quoted fields keep their newlines
        return list(csv.DictReader(fh))


def _score_columns(header: Iterable[str], path: str) -> dict[tuple[str, str, str | None], str]:
    """``{(model, scale, dimension): column}`` from the four spellings of the release."""
    out: dict[tuple[str, str, str | None], str] = {}
    for col in header:
        m = _SCORE_COLUMN.match(col)
        if not m:
            continue
        alias = re.sub(r"[^a-z0-9]", "", m["model"].lower())
        model = _MODEL_ALIASES.get(alias)
        if model is None:
            raise RatingsError(f"{path}: score column {col!r} names an unknown judge {m['model']!r}")
        out[(model, f"0-{m['hi']}", m["dim"])] = col
    return out


def _row_ids(bench: _Bench, rows: list[dict[str, str]]) -> list[str]:
    if bench.join == "scenario":
        ids = [f"{r['scenario_id']}:{r['action_id']}" for r in rows]
    elif bench.join in ("id", "question_id", "sample_id"):
        ids = [r[bench.join].strip() for r in rows]
    elif bench.join == "sentences":
        ids = [r["sid"].strip() for r in rows]
    else:  # ToxiGen has no id column: the row number
        ids = [str(n) for n in range(1, len(rows) + 1)]
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        raise RatingsError(f"{bench.csv}: duplicate row ids {dup[:5]}")
    return ids


def _number(text: str, where: str) -> float:
    text = (text or "").strip()
    if text.lower() in ("", "nan", "none", "null"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise RatingsError(f"{where}: {text!r} is not a number") from None


def _judge_ratings(bench: _Bench, scale: str, rows: list[dict[str, str]], keys: list[str], rated: Mapping[str, Any],
                   models: Iterable[str], notes: list[ReleaseNote], path: str, main: bool = True) -> Ratings:
    cols = _score_columns(rows[0].keys(), path)
    wanted = list(models)
    models = [m for m in wanted if (m, scale, bench.dimension) in cols]
    if not models:
        raise RatingsError(f"{path}: no score columns for scale {scale}")
    absent = [m for m in wanted if m not in models]
    if absent and main:
        notes.append(ReleaseNote("judge without a column", f"{Path(path).name} has no {scale} column for "
                                 f"{', '.join(absent)}: the LLM panel of this benchmark has {len(models)} judges",
                                 bench.name, scale))
    values = np.array([[_number(r[cols[(m, scale, bench.dimension)]], f"{path} row {k} column "
                                f"{cols[(m, scale, bench.dimension)]}") for m in models] for r, k in zip(rows, keys)])
    hi = Scale.parse(scale).high
    for (i, j) in np.argwhere((values < 0) | (values > hi)):
        raise RatingsError(f"{path} row {keys[i]} column {cols[(models[j], scale, bench.dimension)]}: score "
                           f"{values[i, j]:g} outside {scale}")
    for j, m in enumerate(models):
        missing = [k for k, v in zip(keys, values[:, j]) if math.isnan(v)]
        if missing:
            notes.append(ReleaseNote("missing judge score", f"{m} has no score for {len(missing)} row(s) in {Path(path).name}: "
                                     "the item is left out of the analyses that need that score, and only those",
                                     bench.name, scale, tuple(missing)))
    return Ratings.from_array(values, item_ids=keys, rater_ids=models, scale=scale,
                              item_groups={"human_rated": ["yes" if k in rated else "no" for k in keys]},
                              provenance={"source": path, "benchmark": bench.name})


def _read_temperatures(folder: Path, main_rows: Mapping[str, list[dict[str, str]]], rated_ids: Mapping[str, set[str]],
                       notes: list[ReleaseNote]) -> dict[tuple[float, str, str], Ratings]:
    out: dict[tuple[float, str, str], Ratings] = {}
    if not folder.is_dir():
        notes.append(ReleaseNote("no temperature runs", f"{folder} is absent: Table 6 is not reproduced"))
        return out
    for bench in BENCHMARKS:
        files = sorted((folder / bench.temperature_dir).glob("*.csv"))
        for path in files:
            m = _TEMPERATURE.search(path.name)
            if not m:
                raise RatingsError(f"{path}: no temperature in the file name (expected _temperature=T, _tT or _temp_T)")
            t = float(m["t"])
            if any(k[0] == t and k[1] == bench.name for k in out):
                raise RatingsError(f"{path}: a second file for T={t:g} in {bench.temperature_dir}")
            rows = _read_csv(path)
            keys = _row_ids(bench, rows)
            if keys != _row_ids(bench, main_rows[bench.name]):
                raise RatingsError(f"{path}: rows differ from the main {bench.csv}")
            rated = {k: True for k in keys if k in rated_ids[bench.name]}
            for scale in SCALES:
                out[(t, bench.name, scale)] = _judge_ratings(bench, scale, rows, keys, rated, MODELS, notes, str(path),
                                                             main=False)
    return out


def _judge_flags(bench: _Bench, rows: list[dict[str, str]]) -> list[bool]:
    """Whether humans rated each row: all rows but MoralChoice's second actions."""
    if bench.join == "scenario":
        return [r["action_id"].strip() == "1" for r in rows]
    return [True] * len(rows)


# ---------------------------------------------------------------------- human exports
@dataclass
class _Task:
    rater: str
    gender: str
    scale: str
    bench: str
    data: Mapping[str, Any]
    score: float


def _read_human(folder: Path, summeval_reading: str, notes: list[ReleaseNote]) -> list[_Task]:
    tasks: list[_Task] = []
    reordered: list[str] = []
    drafts: list[str] = []
    known = {b.name: b for b in BENCHMARKS}
    dirs = sorted(p for p in folder.iterdir() if p.is_dir())
    if not dirs:
        raise RatingsError(f"{folder}: no annotator folders")
    for d in dirs:
        dm = _HUMAN_DIR.match(d.name)
        if not dm:
            raise RatingsError(f"{d}: folder name is not <Female|Male>_Subject_<i>_0_<5|10|100>")
        rater, scale = f"{dm['gender']}_Subject_{dm['i']}", f"0-{dm['hi']}"
        for f in sorted(d.glob("*.json")):
            fm = _HUMAN_FILE.match(f.name)
            if not fm or (fm["gender"], fm["i"], fm["hi"]) != (dm["gender"], dm["i"], dm["hi"]):
                raise RatingsError(f"{f}: file name does not match its folder {d.name}")
            bench = known.get(fm["bench"])
            if bench is None:
                raise RatingsError(f"{f}: unknown benchmark {fm['bench']!r}; known: {sorted(known)}")
            try:
                payload = json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise RatingsError(f"{f}: not JSON ({exc})") from None
            if not isinstance(payload, list):
                raise RatingsError(f"{f}: expected a Label Studio export (a JSON list of tasks)")
            for n, task in enumerate(payload):
                where = f"{f.name} task {n} (data.id {task.get('data', {}).get('id')!r})"
                submitted = [a for a in task.get("annotations", []) if not a.get("was_cancelled")]
                if len(submitted) != 1:
                    raise RatingsError(f"{where}: {len(submitted)} submitted annotations, expected 1")
                result = [r for r in submitted[0].get("result", []) if r.get("type") == "number"]
                label = f"{rater} {scale} item {task.get('data', {}).get('id')}"
                score = _task_score(bench, result, summeval_reading, label, reordered, where)
                hi = float(dm["hi"])
                if math.isnan(score):
                    raise RatingsError(f"{where}: the score is missing (NaN)")
                if not 0 <= score <= hi:
                    raise RatingsError(f"{where}: score {score} outside 0-{dm['hi']}")
                if any(_numbers(dr.get("result", [])) != _numbers(result) for dr in task.get("drafts") or []):
                    drafts.append(f"{rater} {bench.name} {scale} item {task['data'].get('id')}")
                tasks.append(_Task(rater, dm["gender"], scale, bench.name, task.get("data", {}), score))
    if reordered:
        notes.append(ReleaseNote(
            "SummEval field order", f"{len(reordered)} SummEval annotations list another field than 'relevance' "
            f"first; reading {summeval_reading!r} is used (summeval_reading= chooses another)", "SummEval",
            items=tuple(reordered)))
    if drafts:
        notes.append(ReleaseNote("left-over drafts", f"{len(drafts)} tasks keep a draft that differs from the "
                                 "submitted annotation: the submitted one is used", items=tuple(drafts)))
    return tasks


def _numbers(result: Iterable[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    return [(r.get("from_name"), r.get("value", {}).get("number")) for r in result if r.get("type") == "number"]


def _task_score(bench: _Bench, result: list[Mapping[str, Any]], reading: str, label: str,
                reordered: list[str], where: str) -> float:
    def number(r: Mapping[str, Any]) -> float:
        v = r.get("value", {}).get("number")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise RatingsError(f"{where}: field {r.get('from_name')!r} holds {v!r}, not a number")
        return float(v)

    by_name = {r.get("from_name"): r for r in result}
    if bench.human_field is not None:
        if len(result) != 1 or bench.human_field not in by_name:
            raise RatingsError(f"{where}: expected one number field {bench.human_field!r}, got {sorted(map(str, by_name))}")
        return number(result[0])
    wanted = set(SUMMEVAL_DIMENSIONS) | {"overall"}
    if set(by_name) != wanted or len(result) != len(wanted):
        raise RatingsError(f"{where}: expected the SummEval fields {sorted(wanted)}, got {sorted(map(str, by_name))}")
    if result[0].get("from_name") != "relevance":
        reordered.append(f"{label}: {result[0].get('from_name')} first")
    if reading == "first":
        return number(result[0])
    if reading == "mean":
        return float(np.mean([number(by_name[d]) for d in SUMMEVAL_DIMENSIONS]))
    return number(by_name[reading])


def _norm(text: Any) -> str:
    return " ".join(str(text).split())


def _join_key(bench: _Bench, data: Mapping[str, Any]) -> str:
    if bench.join == "sentences":
        return _norm(data.get("sentence1")) + "\x00" + _norm(data.get("sentence2"))
    if bench.join == "text":
        return _norm(data.get("text"))
    if bench.join == "scenario":
        return _norm(data.get("scenario")) + "\x00" + _norm(data.get("action"))
    if bench.join == "question_id":
        return str(data.get("question_id")).strip()
    return str(data.get("id")).strip()   # TruthfulQA: id = CSV id; SummEval: id = CSV sample_id


def _row_join_key(bench: _Bench, row: Mapping[str, str], row_id: str) -> str:
    if bench.join == "sentences":
        return _norm(row["sentence1"]) + "\x00" + _norm(row["sentence2"])
    if bench.join == "text":
        return _norm(row["text"])
    if bench.join == "scenario":
        return _norm(row["context"]) + "\x00" + _norm(row["action_text"])
    return row_id


def _join(bench: _Bench, rows: list[dict[str, str]], keys: list[str], tasks: list[_Task],
          notes: list[ReleaseNote]) -> dict[str, dict[tuple[str, str], float]]:
    """``{row id: {(rater, scale): score}}`` for the rows humans rated; unmatched tasks are an error."""
    flags = _judge_flags(bench, rows)
    lookup = {_row_join_key(bench, r, k): k for r, k, f in zip(rows, keys, flags) if f}
    out: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    texts: dict[str, set[str]] = defaultdict(set)
    unmatched = []
    for t in tasks:
        if t.bench != bench.name:
            continue
        rid = lookup.get(_join_key(bench, t.data))
        if rid is None:
            unmatched.append(f"{t.rater} {t.scale} data.id {t.data.get('id')}")
            continue
        if (t.rater, t.scale) in out[rid]:
            raise RatingsError(f"{bench.name}: {t.rater} rated item {rid} twice on {t.scale}")
        out[rid][(t.rater, t.scale)] = t.score
        texts[rid].add(json.dumps({k: v for k, v in t.data.items() if k != "id"}, sort_keys=True))
    if unmatched:
        raise RatingsError(f"{bench.name}: {len(unmatched)} human task(s) match no row of {bench.csv} "
                           f"(joined on {bench.join}): {unmatched[:5]}")
    varied = [rid for rid in keys if len(texts.get(rid, ())) > 1]
    if varied:
        notes.append(ReleaseNote("item text differs between annotators' files",
                                 f"{len(varied)} items were shown with different text in some files; their scores "
                                 f"are joined on {bench.join}, which still aligns", bench.name, items=tuple(varied)))
    if bench.name == "TruthfulQA":
        wrong = [k for r, k in zip(rows, keys) if k in out and _question_differs(r, k, tasks)]
        if wrong:
            raise RatingsError(f"TruthfulQA: the human files and {bench.csv} show different questions for id(s) "
                               f"{wrong[:5]}: the id join would pair different items")
        differ = [k for r, k in zip(rows, keys) if k in out and _any_answer_differs(r, k, tasks)]
        if differ:
            notes.append(ReleaseNote("human item text differs from the CSV",
                                     f"{len(differ)} TruthfulQA answers differ between the human files and the CSV "
                                     "(a pseudonymised name): joined on id", bench.name, items=tuple(differ)))
    if bench.join == "question_id":
        targets: dict[Any, set[Any]] = defaultdict(set)
        for t in tasks:
            if t.bench == bench.name:
                targets[t.data.get("id")].add(t.data.get("question_id"))
        ambiguous = sorted(str(i) for i, q in targets.items() if len(q) > 1)
        if ambiguous:
            notes.append(ReleaseNote("data.id is not an item id", f"{len(ambiguous)} of {bench.name}'s data.id values "
                                     "point to different questions in different files: humans are joined on "
                                     "data.question_id", bench.name, items=tuple(ambiguous)))
    return {k: out[k] for k in keys if k in out}


def _question_differs(row: Mapping[str, str], rid: str, tasks: list[_Task]) -> bool:
    return any(t.bench == "TruthfulQA" and str(t.data.get("id")).strip() == rid
               and _norm(t.data.get("question")) != _norm(row.get("question")) for t in tasks)


def _any_answer_differs(row: Mapping[str, str], rid: str, tasks: list[_Task]) -> bool:
    return any(t.bench == "TruthfulQA" and str(t.data.get("id")).strip() == rid
               and _norm(t.data.get("answer")) != _norm(row.get("best_answer")) for t in tasks)


def _human_ratings(bench: str, scale: str, tasks: list[_Task], rated: Mapping[str, Mapping[tuple[str, str], float]]
                   ) -> Ratings:
    everyone = {(t.rater, t.gender) for t in tasks}
    raters = sorted({(t.rater, t.gender) for t in tasks if t.scale == scale and t.bench == bench},
                    key=lambda rg: (rg[1] != "Female", int(rg[0].rsplit("_", 1)[1])))
    if len(raters) != len(everyone):
        lacking = sorted(r for r, _ in everyone - set(raters))
        raise RatingsError(f"{bench} {scale}: no file from {', '.join(lacking)} (the design is fully crossed, seed 001 "
                           "section 4.2: every annotator rates every benchmark on every scale)")
    ids = list(rated)
    values = np.array([[rated[i].get((r, scale), math.nan) for r, _ in raters] for i in ids])
    if np.isnan(values).any():
        i, j = np.argwhere(np.isnan(values))[0]
        raise RatingsError(f"{bench} {scale}: {raters[j][0]} has no rating of item {ids[i]} (the design is fully "
                           "crossed, seed 001 section 4.2)")
    return Ratings.from_array(values, item_ids=ids, rater_ids=[r for r, _ in raters], scale=Scale.parse(scale),
                              rater_groups={"gender": [g for _, g in raters]},
                              provenance={"source": "seed-001 release, data/human", "benchmark": bench})

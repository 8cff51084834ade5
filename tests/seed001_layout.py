"""A small synthetic copy of seed 001's data release, in its exact layout.

The real release (GitHub Harvard-AI-and-Robotics-Lab/LLM-Judge) has no licence, so the tests
never ship it: :func:`write_release` writes made-up scores in the same folders, file names,
Label Studio task fields and CSV columns (the four spellings of the score columns, quoted text
with embedded newlines, MoralChoice's two actions per scenario with humans rating only the
first, MT-Bench's ``data.id`` that differs between files, SummEval's five fields in the order
an annotator filled them, a left-over draft, the pseudonymised TruthfulQA answer, the three
spellings of the temperature in file names).  It returns the scores it wrote, so a test can
recompute every statistic from them without the loader.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SCALES = ("0-5", "0-10", "0-100")
RATERS = (("Female", 1), ("Female", 2), ("Male", 1), ("Male", 2))
MODELS = ("Llama", "Qwen", "GPT", "Mistral", "DeepSeek", "Gemini")
BENCHES = ("STS-B", "ToxiGen", "MoralChoice", "TruthfulQA", "MT-Bench", "SummEval")
N_ITEMS = 6

# how each CSV spells a model (the release's four spellings) and the column pattern
_CAPITALISED = ({"GPT": "GPT-4o", "Llama": "Llama3.3", "Qwen": "Qwen3", "Mistral": "Mistral", "DeepSeek": "DeepSeek",
                 "Gemini": "Gemini"}, "{m}_0_{hi}")
_SPELL = {
    "STS-B": _CAPITALISED,
    "ToxiGen": _CAPITALISED,
    "MoralChoice": ({"Llama": "llama33", "Qwen": "qwen3", "GPT": "gpt4o", "DeepSeek": "deepseek", "Gemini": "gemini",
                     "Mistral": "mistral"}, "{m}_score_0_{hi}"),
    "TruthfulQA": ({"Llama": "llama33", "Qwen": "qwen3", "GPT": "gpt4o", "Mistral": "mistral", "DeepSeek": "deepseek",
                    "Gemini": "gemini"}, "{m}_score_0_{hi}"),
    "MT-Bench": ({"Llama": "Llama", "Qwen": "Qwen", "GPT": "GPT4o", "DeepSeek": "DeepSeek", "Mistral": "Mistral",
                  "Gemini": "Gemini"}, "{m}_0-{hi}_total"),
    "SummEval": ({"GPT": "gpt4o", "Llama": "llama", "Qwen": "qwen", "DeepSeek": "deepseek", "Mistral": "mistral",
                  "Gemini": "gemini"}, "{m}_0-{hi}_{dim}"),
}
_CSV = {"STS-B": "similarity_25_samples_all_models.csv", "ToxiGen": "toxicity_25_samples_all_models.csv",
        "MoralChoice": "moralchoice_25_samples_comparison.csv", "TruthfulQA": "TruthfulQA_25_samples_comparison.csv",
        "MT-Bench": "MTbench_sample_25_scores_summary.csv", "SummEval": "summary_data_sample_25_all_scores.csv"}
_TEMP = {"STS-B": ("STS-Benchmark", "similarity_25_samples_temperature={t}.csv"),
         "ToxiGen": ("ToxiGen", "toxicity_25_samples_temperature={t}.csv"),
         "MoralChoice": ("MoralChoices", "moralchoice_25_samples_comparison_temperature={t}.csv"),
         "TruthfulQA": ("TrusthfulQA", "TruthfulQA_25_samples_temp_{t}.csv"),
         "MT-Bench": ("MTbench", "temperature_t{t}.csv"),
         "SummEval": ("SummEval", "summary_data_sample_25_t{t}.csv")}
DIMS = ("relevance", "coherence", "fluency", "consistency")
_HUMAN_FIELD = {"STS-B": ("similarity_score", "s1"), "ToxiGen": ("toxicity_score", "text"),
                "MoralChoice": ("moral_score", "action"), "TruthfulQA": ("truthfulness_score", "answer"),
                "MT-Bench": ("overall", "turn1_answer")}


@dataclass
class Written:
    """What :func:`write_release` wrote, in the loader's terms (CSV row order, NaN = blank)."""

    root: Path
    human: dict = field(default_factory=dict)       # (bench, scale) -> items x raters (rated rows, CSV order)
    human_ids: dict = field(default_factory=dict)   # bench -> item ids of the rated rows
    llm: dict = field(default_factory=dict)         # (bench, scale) -> rows x MODELS
    llm_ids: dict = field(default_factory=dict)     # bench -> every row id
    temps: dict = field(default_factory=dict)       # (t, bench, scale) -> rows x (Llama, Gemini)
    summeval_fields: dict = field(default_factory=dict)  # (rater, scale, item) -> {field: value}, first field


def _hi(scale: str) -> int:
    return int(scale.split("-")[1])


def _fmt(v: float) -> str:
    return "" if np.isnan(v) else repr(float(v))


def write_release(root: Path, *, seed: int = 0, missing: tuple = (), temperatures=(0.1, 0.4, 0.7)) -> Written:
    """Write the synthetic release under ``root`` and return its scores.

    ``missing``: ``(bench, model, scale, row index)`` cells left blank in the main CSV.
    """
    rng = np.random.default_rng(seed)
    out = Written(Path(root))
    data = Path(root) / "data"
    (data / "llm").mkdir(parents=True)
    truth = {b: rng.uniform(0.1, 0.9, N_ITEMS * (2 if b == "MoralChoice" else 1)) for b in BENCHES}
    bias = dict(zip(MODELS, rng.normal(0, 0.05, len(MODELS))))
    rows_meta: dict = {}
    for bench in BENCHES:
        n_rows = truth[bench].size
        if bench == "MoralChoice":  # all action-1 rows first, as in the release
            scen = [f"S_{i:03d}" for i in range(N_ITEMS)]
            ids = [f"{s}:1" for s in scen] + [f"{s}:2" for s in scen]
        elif bench == "ToxiGen":
            ids = [str(i + 1) for i in range(n_rows)]
        elif bench == "STS-B":
            ids = [str(1000 + 7 * i) for i in range(n_rows)]
        elif bench == "MT-Bench":
            ids = [str(81 + 3 * i) for i in range(n_rows)]
        else:
            ids = [str(i + 1) for i in range(n_rows)]
        out.llm_ids[bench] = ids
        out.human_ids[bench] = ids[:N_ITEMS]
        rows_meta[bench] = ids
        for scale in SCALES:
            hi = _hi(scale)
            x = np.column_stack([np.clip(truth[bench] + bias[m] + rng.normal(0, 0.08, n_rows), 0, 1) * hi
                                 for m in MODELS]).round(2)
            for b, m, s, r in missing:
                if (b, s) == (bench, scale):
                    x[r, MODELS.index(m)] = np.nan
            out.llm[(bench, scale)] = x
            out.human[(bench, scale)] = np.column_stack(
                [np.clip(truth[bench][:N_ITEMS] + rng.normal(0, 0.06, N_ITEMS), 0, 1) * hi for _ in RATERS]).round(1)
            for t in temperatures:
                out.temps[(t, bench, scale)] = np.column_stack(
                    [np.clip(truth[bench] + bias[m] + rng.normal(0, 0.1, n_rows), 0, 1) * hi
                     for m in ("Llama", "Gemini")]).round(2)
        _write_csv(data / "llm" / _CSV[bench], bench, ids, {s: out.llm[(bench, s)] for s in SCALES}, MODELS)
        folder, pattern = _TEMP[bench]
        for t in temperatures:
            (data / "llm" / "temperatures" / folder).mkdir(parents=True, exist_ok=True)
            scales = ("0-10", "0-100", "0-5") if bench == "MoralChoice" else SCALES  # the release's column order
            _write_csv(data / "llm" / "temperatures" / folder / pattern.format(t=t), bench, ids,
                       {s: out.temps[(t, bench, s)] for s in scales}, ("Gemini", "Llama") if bench == "MoralChoice"
                       else ("Llama", "Gemini"), columns=("Llama", "Gemini"))
    _write_human(data / "human", out, rng)
    return out


def _text(bench: str, i: int) -> dict:
    """The item text fields (the CSV's and the human tasks' views of one item)."""
    return {
        "s1": f"A person number {i} is walking.", "s2": f"Someone {i} walks outside.",
        "tox": f"statement {i} about a group" + ("\nwith a second line" if i == 2 else ""),
        "ctx": f"Scenario {i}: you find a wallet.", "a1": f"I return wallet {i}.", "a2": f"I keep wallet {i}.",
        "q": f"What happens if you do thing {i}?", "ans": f"Nothing in particular happens {i}.",
        "mtq": f"Turn 1 Question: Write note {i}.\n\nTurn 2 Question: Shorten note {i}.",
        "doc": f"Source document {i}. " * 8, "summ": f"Summary {i}.",
    }


def _write_csv(path: Path, bench: str, ids: list, by_scale: dict, models, columns=MODELS) -> None:
    """``by_scale[scale]`` is rows x ``columns``; the file lists ``models`` in that order."""
    spell, pattern = _SPELL[bench]
    cols, cells = [], []
    for m in models:
        for s in by_scale:
            if bench == "SummEval":
                for d in DIMS + ("overall",):
                    cols.append(pattern.format(m=spell[m], hi=s.replace("0-", ""), dim=d))
                    cells.append((m, s, d))
            else:
                cols.append(pattern.format(m=spell[m], hi=s.replace("0-", "")))
                cells.append((m, s, None))
    key = {"STS-B": ["sid", "sentence1", "sentence2", "human_score"], "ToxiGen": ["text", "human_score"],
           "MoralChoice": ["scenario_id", "action_id", "context", "action_text"],
           "TruthfulQA": ["id", "question", "best_answer", "category"], "MT-Bench": ["question_id", "category", "question"],
           "SummEval": ["sample_id", "text", "machine_summary"]}[bench]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(key + cols)
        for r, rid in enumerate(ids):
            i = r % N_ITEMS + 1
            t = _text(bench, i)
            keyvals = {"STS-B": [rid, t["s1"], t["s2"], "3.2"], "ToxiGen": [t["tox"], "2.0"],
                       "MoralChoice": [*(rid.split(":") + ["", ""])[:2], t["ctx"], t["a1"] if rid.endswith(":1")
                                       else t["a2"]],
                       "TruthfulQA": [rid, t["q"], t["ans"], "Misc"], "MT-Bench": [rid, "writing", t["mtq"]],
                       "SummEval": [rid, t["doc"][:100] + "...", t["summ"]]}[bench]
            row = []
            for m, s, d in cells:
                v = by_scale[s][r, list(columns).index(m)]
                if d is not None and d != "overall":  # SummEval's dimensions around the overall score
                    v = np.nan if np.isnan(v) else min(v + 0.1 * DIMS.index(d), _hi(s))
                row.append(_fmt(v))
            w.writerow(keyvals + row)


def _write_human(folder: Path, out: Written, rng) -> None:
    task_no = 0
    for j, (gender, i) in enumerate(RATERS):
        for scale in SCALES:
            hi = scale.replace("0-", "")
            d = folder / f"{gender}_Subject_{i}_0_{hi}"
            d.mkdir(parents=True)
            for bench in BENCHES:
                tasks = []
                order = [int(x) for x in rng.permutation(N_ITEMS)]  # item order shuffled within each block
                for pos, r in enumerate(order):
                    rid = out.human_ids[bench][r]
                    t = _text(bench, r + 1)
                    data = _human_data(bench, r, pos, rid, t)
                    if bench == "MT-Bench" and r == 1 and gender == "Male":  # shifted turns in some files
                        data.update(turn2_question="N/A", turn2_answer="N/A", turn1_question="Write note 2. Shorten.")
                    v = float(out.human[(bench, scale)][r, j])
                    if bench == "SummEval":
                        fields = {"relevance": v, "coherence": min(v + 0.1, float(hi)),
                                  "fluency": max(v - 0.1, 0.0), "consistency": v, "overall": v}
                        names = list(fields)
                        if r == 0 and j == 1:  # this annotator filled coherence first
                            names = ["coherence", "relevance", "fluency", "consistency", "overall"]
                        out.summeval_fields[(f"{gender}_Subject_{i}", scale, rid)] = (fields, names[0])
                        result = [_number(n, fields[n], "summary") for n in names]
                    else:
                        name, to = _HUMAN_FIELD[bench]
                        result = [_number(name, int(v) if v == int(v) else v, to)]
                    task_no += 1
                    drafts = []
                    if (bench, r, j, scale) == ("MoralChoice", 1, 3, "0-5"):
                        drafts = [{"result": [_number("moral_score", 0.5, "action")], "id": 9}]
                    tasks.append(_task(task_no, data, result, drafts))
                path = d / f"{gender}_Subject_{i}_{bench}_results_0_{hi}.json"
                path.write_text(json.dumps(tasks, indent=1), encoding="utf-8")


def _human_data(bench: str, r: int, pos: int, rid: str, t: dict) -> dict:
    """A task's ``data`` fields (the release's field names per benchmark)."""
    if bench == "STS-B":
        return {"id": r + 1, "sentence1": t["s1"], "sentence2": t["s2"], "original_score": 3.2}
    if bench == "ToxiGen":
        return {"id": r + 1, "text": t["tox"], "target_group": "g", "original_toxicity": 2.0}
    if bench == "MoralChoice":
        return {"id": r + 1, "scenario": t["ctx"], "action": t["a1"]}
    if bench == "TruthfulQA":  # item 3's answer carries a pseudonym, as in the release
        return {"id": int(rid), "question": t["q"], "answer": t["ans"].replace("Nothing", "Alex") if r == 2
                else t["ans"], "category": "Misc"}
    if bench == "MT-Bench":  # data.id is the position in this file, not an item id
        return {"id": pos + 1, "question_id": rid, "category": "writing", "turn1_question": f"Write note {r + 1}.",
                "turn1_answer": "a", "turn2_question": f"Shorten note {r + 1}.", "turn2_answer": "b"}
    return {"id": int(rid), "source_text": t["doc"], "summary": t["summ"]}


def _number(name: str, value, to: str) -> dict:
    return {"value": {"number": value}, "id": f"x{name[:4]}", "from_name": name, "to_name": to, "type": "number",
            "origin": "manual"}


def _task(n: int, data: dict, result: list, drafts: list) -> dict:
    stamp = "2025-06-01T10:00:00.000000Z"
    annotation = {"id": n, "completed_by": 1, "result": result, "was_cancelled": False, "ground_truth": False,
                  "created_at": stamp, "updated_at": stamp, "draft_created_at": None, "lead_time": 12.5,
                  "prediction": {}, "result_count": 0, "unique_id": f"u{n}", "import_id": None,
                  "last_action": None, "bulk_created": False, "task": n, "project": 3, "updated_by": 1,
                  "parent_prediction": None, "parent_annotation": None, "last_created_by": None}
    return {"id": n, "data": data, "annotations": [annotation], "drafts": drafts, "predictions": [], "meta": {},
            "file_upload": "x.json", "created_at": stamp, "updated_at": stamp, "inner_id": n,
            "total_annotations": 1, "cancelled_annotations": 0, "total_predictions": 0, "comment_count": 0,
            "unresolved_comment_count": 0, "last_comment_updated_at": None, "project": 3, "updated_by": 1,
            "comment_authors": []}

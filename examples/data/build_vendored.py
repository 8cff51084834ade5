"""Rebuild the vendored human-rated data sets in ``pytest_judgerel/data/``.

Maintenance script, never run by the package or its tests.  It reads the
upstream files (as listed in each data set's PROVENANCE.md) from ``--source``
and writes, per data set, ``meta.json``, ``items.jsonl`` and, where texts are
shared by many items, ``documents.jsonl``.  Every choice it makes (subset,
seed, mapping of labels to numbers) is written into the data set's README.md.

    python examples/data/build_vendored.py --source /path/to/upstream/data
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "pytest_judgerel" / "data"


def _write_jsonl(path: Path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def _write_meta(path: Path, meta: dict) -> None:
    path.write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ STS-B
STSB_N = 300
STSB_SEED = 20170803  # SemEval-2017 Task 1 date; any fixed value would do


def build_stsb(src: Path, out: Path) -> dict:
    lines = (src / "sts-test.csv").read_text(encoding="utf-8").splitlines()
    rows = []
    for lineno, line in enumerate(lines, start=1):
        f = line.split("\t")
        rows.append({"line": lineno, "genre": f[0], "source": f[1], "year": f[2], "sid": f[3],
                     "score": float(f[4]), "sentence1": f[5], "sentence2": f[6]})
    # stratified by genre so the subset keeps the test split's genre mix
    rng = random.Random(STSB_SEED)
    picked = []
    genres = sorted({r["genre"] for r in rows})
    for g in genres:
        pool = [r for r in rows if r["genre"] == g]
        n = round(STSB_N * len(pool) / len(rows))
        picked += rng.sample(pool, n)
    picked = sorted(picked[:STSB_N], key=lambda r: r["line"])
    assert len(picked) == STSB_N, len(picked)
    items = [{
        "id": f"sts-test-{r['line']}",
        "groups": {"genre": r["genre"], "source": r["source"], "year": r["year"]},
        "fields": {"sentence1": r["sentence1"], "sentence2": r["sentence2"]},
        "ratings": {"similarity": [r["score"]]},
    } for r in picked]
    _write_jsonl(out / "items.jsonl", items)
    meta = {
        "name": "stsb",
        "title": "STS Benchmark (English), test split: 300-pair stratified subset",
        "scale": "0-5", "fractional": True,
        "criteria": ["similarity"], "default_criterion": "similarity",
        "raters": ["gold"],
        "rater_note": "only the mean of the crowd ratings (about 5 per pair) is released: one 'rater' column",
        "item_groups": ["genre", "source", "year"],
        "fields": ["sentence1", "sentence2"],
        "template": "stsb", "template_keys": {},
        "license": "scores CC BY-SA 4.0; sentences keep their source licenses (see LICENSE.txt)",
        "citation": "Cer et al. (2017), SemEval-2017 Task 1: Semantic Textual Similarity",
    }
    _write_meta(out / "meta.json", meta)
    counts = {g: sum(1 for r in picked if r["genre"] == g) for g in genres}
    return {"items": len(items), "genres": counts}


# ------------------------------------------------------------------ SQuALITY
def build_squality(src: Path, out: Path) -> dict:
    responses = [json.loads(x) for x in (src / "all-responses.jsonl").read_text(encoding="utf-8").splitlines()]
    passages = {p["metadata"]["passage_id"]: p for p in
                map(json.loads, (src / "passages_v1-3_txt_test_subset.jsonl").read_text(encoding="utf-8").splitlines())}
    raters = sorted({rv["worker_id"] for p in responses for q in p["questions"].values()
                     for r in q.values() for rv in r["reviews"]}, key=int)
    docs, items = [], []
    for p in responses:
        pid = p["passage-id"]
        doc = passages[pid]
        docs.append({"id": f"story-{pid}", "text": doc["document"]})
        for qkey in sorted(p["questions"], key=int):
            qtext = doc["questions"][int(qkey)]["question_text"]
            for system in ("bart", "bart-dpr", "human"):
                r = p["questions"][qkey][system]
                by_worker = {rv["worker_id"]: rv for rv in r["reviews"]}
                ratings = {c: [by_worker[w][f"{c}-rating"] if w in by_worker else None for w in raters]
                           for c in ("correctness", "selection", "overall")}
                items.append({
                    "id": f"{pid}-q{int(qkey) + 1}-{system}",
                    "doc": f"story-{pid}",
                    "groups": {"system": system, "passage": pid, "question": str(int(qkey) + 1),
                               "reviewer_set": "-".join(sorted(by_worker, key=int))},
                    "fields": {"question": qtext, "response": r["response"]},
                    "ratings": ratings,
                })
    _write_jsonl(out / "documents.jsonl", docs)
    _write_jsonl(out / "items.jsonl", items)
    meta = {
        "name": "squality",
        "title": "SQuALITY human evaluation: 300 question-focused story summaries x 3 of 4 reviewers",
        "scale": "0-100", "fractional": False,
        "criteria": ["correctness", "selection", "overall"], "default_criterion": "overall",
        "raters": [f"worker{w}" for w in raters],
        "rater_note": "4 reviewers; each response was rated by 3 of them (4 blocks of 75 items, see the "
                      "'reviewer_set' item group); the rater-id layout has one NaN per row",
        "item_groups": ["system", "passage", "question", "reviewer_set"],
        "fields": ["story", "question", "response"],
        "document_field": "story",
        "aliases": {"text": "story", "summary": "response", "answer": "response"},
        "template": "summeval", "template_keys": {"overall": "overall"},
        "license": "CC BY 4.0 (ratings and responses); stories are Project Gutenberg texts",
        "citation": "Wang et al. (2022), SQuALITY: Building a Long-Document Summarization Dataset the Hard Way",
    }
    _write_meta(out / "meta.json", meta)
    return {"items": len(items), "documents": len(docs), "raters": raters}


# ------------------------------------------------------------------ SummEval-OP
SEO_DIMS = {"fl": "fluency", "co": "coherence", "re": "relevance", "fa": "faithfulness",
            "ac": "aspect_coverage", "sc": "sentiment_consistency", "sp": "specificity"}


def build_summeval_op(src: Path, out: Path) -> dict:
    detailed = [json.loads(x) for x in (src / "summeval-op-detailed.jsonl").read_text(encoding="utf-8").splitlines()]
    averaged = [json.loads(x) for x in (src / "summeval-op.jsonl").read_text(encoding="utf-8").splitlines()]
    docs, items = [], []
    for pi, (d, a) in enumerate(zip(detailed, averaged)):
        systems = list(a["summaries"])
        assert len(systems) == len(d["summaries"]) == 13
        pid = f"product-{pi + 1:02d}"
        docs.append({"id": pid, "text": "\n\n".join(f"Review {k + 1}: {r}" for k, r in enumerate(d["reviews"]))})
        for si, (system, summary) in enumerate(zip(systems, d["summaries"])):
            assert a["summaries"][system]["summary"].strip() == summary.strip()
            items.append({
                "id": f"{pid}-{system}",
                "doc": pid,
                "groups": {"product": pid, "system": system},
                "fields": {"summary": summary},
                "ratings": {name: list(d[short][si]) for short, name in SEO_DIMS.items()},
            })
    _write_jsonl(out / "documents.jsonl", docs)
    _write_jsonl(out / "items.jsonl", items)
    meta = {
        "name": "summeval_op",
        "title": "SummEval-OP: 416 opinion summaries (32 products x 13 systems) x 3 annotators, 7 dimensions",
        "scale": "1-5", "fractional": False,
        "criteria": list(SEO_DIMS.values()), "default_criterion": "relevance",
        "raters": ["annotator1", "annotator2", "annotator3"],
        "rater_note": "the release gives each item's three ratings as an ordered list [r1, r2, r3]; column k "
                      "is the k-th position (the paper reports 3 annotators for the whole set)",
        "item_groups": ["product", "system"],
        "fields": ["reviews", "summary"],
        "document_field": "reviews",
        "aliases": {"text": "reviews", "source": "reviews"},
        "template": "summeval",
        "template_keys": {"relevance": "relevance", "coherence": "coherence", "fluency": "fluency",
                          "consistency": "faithfulness"},
        "license": "MIT (annotations); reviews are Amazon product reviews",
        "citation": "Siledar et al. (2024), One Prompt To Rule Them All: LLMs for Opinion Summary Evaluation",
    }
    _write_meta(out / "meta.json", meta)
    return {"items": len(items), "documents": len(docs)}


# ------------------------------------------------------------------ ConvAbuse
SEVERITY = {"1": 0, "0": 1, "-1": 2, "-2": 3, "-3": 4}  # is_abuse label -> 0-4 severity


def build_convabuse(src: Path, out: Path) -> dict:
    with (src / "ConvAbuseEMNLPtest.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    raters = [f"Annotator{k}" for k in range(1, 9)]
    items, repeated_cells, invalid = [], 0, 0
    for r in rows:
        sev: list[int | None] = []
        for a in raters:
            cells = {lab: r[f"{a}_is_abuse.{lab}"].strip() for lab in SEVERITY}
            if not any(cells.values()):
                sev.append(None)
                continue
            if any("," in c for c in cells.values()):
                repeated_cells += 1
            first = {lab: c.split(",")[0].strip() for lab, c in cells.items()}
            ones = [lab for lab, c in first.items() if c == "1"]
            if len(ones) != 1:
                invalid += 1
                sev.append(None)
                continue
            sev.append(SEVERITY[ones[0]])
        n = sum(v is not None for v in sev)
        items.append({
            "id": f"convabuse-{int(float(r['example_id']))}",
            "groups": {"bot": r["bot"], "n_annotators": str(n)},
            "fields": {"text": r["user"], "prev_agent": r["prev_agent"], "prev_user": r["prev_user"],
                       "agent": r["agent"]},
            "ratings": {"severity": sev},
        })
    _write_jsonl(out / "items.jsonl", items)
    meta = {
        "name": "convabuse",
        "title": "ConvAbuse test split: 853 user utterances to conversational agents x 2-6 of 8 annotators",
        "scale": "0-4", "fractional": False,
        "criteria": ["severity"], "default_criterion": "severity",
        "raters": raters,
        "rater_note": "8 annotators; each item was labelled by 2-6 of them, the rest is NaN",
        "severity_labels": {"0": "not abusive (is_abuse.1)", "1": "ambiguous (is_abuse.0)",
                            "2": "mildly abusive (is_abuse.-1)", "3": "strongly abusive (is_abuse.-2)",
                            "4": "very strongly abusive (is_abuse.-3)"},
        "item_groups": ["bot", "n_annotators"],
        "fields": ["text", "prev_agent", "prev_user", "agent"],
        "template": "toxigen", "template_keys": {},
        "license": "CC BY 4.0",
        "citation": "Cercas Curry, Abercrombie & Rieser (2021), ConvAbuse: Data, Analysis, and Benchmarks "
                    "for Nuanced Abuse Detection in Conversational AI",
    }
    _write_meta(out / "meta.json", meta)
    return {"items": len(items), "repeated_cells_first_value_kept": repeated_cells, "invalid_one_hot": invalid}


BUILDERS = {"stsb": build_stsb, "squality": build_squality, "summeval_op": build_summeval_op,
            "convabuse": build_convabuse}
LICENSES = {"stsb": ["LICENSE.txt"], "squality": ["LICENSE_CC-BY-4.0.txt"],
            "summeval_op": ["LICENSE_MIT.md"], "convabuse": ["LICENSE_CC-BY-4.0.txt"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, type=Path, help="folder holding stsb/, squality/, ...")
    args = ap.parse_args()
    for name, build in BUILDERS.items():
        out = OUT / name
        out.mkdir(parents=True, exist_ok=True)
        for lic in LICENSES[name]:
            shutil.copyfile(args.source / name / lic, out / lic)
        shutil.copyfile(args.source / name / "PROVENANCE.md", out / "PROVENANCE.md")
        print(name, build(args.source / name, out))


if __name__ == "__main__":
    main()

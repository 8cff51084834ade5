"""Build tests/data/malformed_replies.jsonl: hand-written categories + seeded generated ones.

Expected causes are written by hand per category (never taken from the parser);
the parser is only run to report mismatches.  Usage: python make_malformed_corpus.py [--write]
"""
import json, random, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from pytest_judgerel.judging.parsing import try_parse
from pytest_judgerel.scales import Scale

SUMM = ["relevance", "coherence", "fluency", "consistency", "overall"]
MTB = ["score", "criteria_scores.helpfulness", "criteria_scores.correctness", "criteria_scores.depth", "criteria_scores.clarity"]
AX = ["Clinical Accuracy & Competence", "Ethical & Professional Conduct", "Assessment & Response",
      "Therapeutic Relationship & Alliance", "AI-Specific Communication Quality"]
rows = []

def add(reply, cause, scale="0-10", fmt="number", keys=None, fractional=False, category=None, origin="hand"):
    rows.append({"reply": reply, "fmt": fmt, "scale": scale, "fractional": fractional,
                 "keys": keys, "expected_cause": cause, "category": category or cause, "origin": origin})

# ---- number: hand-written
for r in ["", " ", "\n\t  \n", None, "```\n```", "****"]:
    add(r, "empty" if (r is None or not r.strip()) else "no_number", category="empty")
for r in [7, 7.5, ["7"], {"score": 7}]:
    add(r, "not_text")
for r in ["seven", "N/A", "I cannot rate this.", "The two sentences are similar.", "Score:", "**Score**: high",
          "As an AI language model, I cannot provide a rating.", "five out of ten", "1e3", "v2", "Score: ten",
          "7th", "version 1.2.3", "The answer is 3rd best", "Similarity: high", "Toxicity: none",
          "I'd rather not say.", "Score: N/A", "NaN", "inf", "Infinity", "score = ?", "<think>7</think>",
          "<think>It is clearly a 9.</think>", "0-10", "On a scale of 0 to 10.", "(0-10)", "out of 10",
          "between 0 and 10", "Score (0-10):", "x", "-", ".", "Rating: /10",
          "<think>The pairs are close, I would say 4", "<thinking>Score: 6. Let me double-check",
          "I think 5 </think>", "Rating: \u00a0"]:
    add(r, "no_number", category="no_number")
for r in ["7 or 8", "Score: 3. Actually 4", "7-8", "3 to 4", "between 6 and 7", "I'd say 3, maybe 4.",
          "Score: 4\nReasoning: both sentences mention 2 dogs.", "1. Semantic: 4\n2. Syntax: 3",
          "7 (0-5)", "~~3~~ 4", "3.5 or 4", "Score: 6\n\nFinal score: 7", "**8**, although 9 is defensible",
          "7, 8, 9", "Sentence 1 gets 3 and sentence 2 gets 4", "7/10 or 8/10", "Score: 7 (confidence 90%)",
          "2 of the 4 factors apply; score 5", "Rating: 6.\nNote: 1 minor issue.", "6 - 7", "6–7", "6—7",
          "I rate it 5 on a scale of 1 to 10", "Score: 3 (scale 1-5)", "10 10 9", "0 or 10",
          "First I thought 2. Final: 5", "5 (out of 10); previously 4", "{\"score\": 5, \"confidence\": 2}",
          "Score: 7 <think>or 8</think> 8"]:
    add(r, "ambiguous", category="ambiguous")
for r, sc in [("11", "0-10"), ("-1", "0-10"), ("101", "0-100"), ("6", "0-5"), ("0", "1-5"), ("12/10", "0-10"),
              ("Score: 15", "0-10"), ("**-3**", "0-10"), ("1000", "0-100"), ("7", "1-6"), ("0", "1-6"),
              ("11/10", "0-10"), ("100", "0-10"), ("5.5", "0-5"), ("-0.5", "0-5"), ("10.5", "0-10")]:
    add(r, "out_of_range", scale=sc, fractional=sc in ("0-5",) or r == "10.5", category="out_of_range")
for r, sc in [("7.5", "0-10"), ("3.25", "1-5"), ("4.9", "0-5"), ("99.5", "0-100"), ("Score: 2.5", "1-6"),
              ("**6.1**", "0-10"), ("7.5/10", "0-10"), ("0.1", "0-10"), ("4.50", "1-5"), ("3.999", "1-5")]:
    add(r, "off_grid", scale=sc, category="off_grid")
for r, sc in [("7/5", "0-10"), ("4/10", "0-5"), ("70/100", "0-10"), ("3 out of 4", "0-10"), ("8/10", "0-100"),
              ("Score: 4/6", "0-5"), ("7 out of 5", "0-10"), ("**3/4**", "1-5"), ("9/9", "0-10"),
              ("I'd give it 6 (out of 7).", "0-10"), ("5/10", "1-6"), ("2/3", "0-5")]:
    add(r, "bad_denominator", scale=sc, category="bad_denominator")

# ---- json: hand-written (SummEval Table 12 keys, fractional 0-5; MT-Bench Table 11 nested keys)
def summ(**kw):
    d = {"relevance": 4, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}
    d.update(kw)
    return d
for r in ["relevance 4, coherence 4", "Scores: 4, 4, 5, 4, 4", '{"relevance": 4, "coherence": 4,}',
          "{'relevance': 4, 'coherence': 4, 'fluency': 5, 'consistency': 4, 'overall': 4}",
          '{"relevance": 4, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4',
          '{"relevance": NaN, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}',
          '{"relevance": 4, // good\n "coherence": 4}', '{relevance: 4}', "```json\n{\n```",
          '[4, 4, 5, 4, 4]', '"4"', "```json\n{\"relevance\": 4 \"coherence\": 3}\n```",
          '{"relevance": Infinity, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}',
          '{"relevance": 4} and {"coherence": 4}', "}{",
          '<think>{"relevance": 4, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}']:
    add(r, "bad_json", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="bad_json")
add("", "empty", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="empty")
for drop in SUMM:
    d = summ(); d.pop(drop)
    add(json.dumps(d), "missing_key", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="missing_key")
add('{"score": 4, "helpfulness": 4, "correctness": 4, "depth": 3, "clarity": 5}', "missing_key", scale="0-5", fmt="json", keys=MTB, fractional=True)
add('{"score": 4, "criteria_scores": 4}', "missing_key", scale="0-5", fmt="json", keys=MTB, fractional=True)
add('{"criteria_scores": {"helpfulness": 4, "correctness": 4, "depth": 3, "clarity": 5}}', "missing_key", scale="0-5", fmt="json", keys=MTB, fractional=True)
add('{"score": 4, "criteria_scores": {"helpfulness": 4, "correctness": 4, "clarity": 5}}', "missing_key", scale="0-5", fmt="json", keys=MTB, fractional=True)
for v in [None, True, False, [4], {"value": 4}, ""]:
    add(json.dumps(summ(coherence=v)), "not_a_number", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="not_a_number")
for v in ["high", "N/A", "four"]:
    add(json.dumps(summ(fluency=v)), "no_number", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="no_number")
for v in ["4 or 5", "3-4", "4, maybe 5"]:
    add(json.dumps(summ(fluency=v)), "ambiguous", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="ambiguous")
add('{"relevance": 4, "relevance": 3, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}', "ambiguous", scale="0-5", fmt="json", keys=SUMM, fractional=True)
add('{"Relevance": 4, "relevance": 3, "coherence": 4, "fluency": 5, "consistency": 4, "overall": 4}', "ambiguous", scale="0-5", fmt="json", keys=SUMM, fractional=True)
add("```json\n" + json.dumps(summ()) + "\n```\nOn reflection:\n```json\n" + json.dumps(summ(overall=3)) + "\n```", "ambiguous", scale="0-5", fmt="json", keys=SUMM, fractional=True)
for k, v in [("relevance", 6), ("overall", -1), ("fluency", 50), ("coherence", "7/5"), ("consistency", 5.01)]:
    add(json.dumps(summ(**{k: v})), "out_of_range", scale="0-5", fmt="json", keys=SUMM, fractional=True, category="out_of_range")
for k, v in [("relevance", 4.5), ("overall", 3.2), ("fluency", "2.5")]:
    add(json.dumps(summ(**{k: v})), "off_grid", scale="1-5", fmt="json", keys=SUMM, category="off_grid")
add(json.dumps(summ(coherence="4/10")), "bad_denominator", scale="0-5", fmt="json", keys=SUMM, fractional=True)

# ---- axes: hand-written (MindEval 5 axes, 1-6 fractional)
def axes(vals, names=AX):
    return "\n".join(f"{a}: {v}" for a, v in zip(names, vals))
full = [4, 3, 3.5, 4, 2]
for i in range(5):
    add(axes(full[:i] + full[i + 1:], AX[:i] + AX[i + 1:]), "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True, category="missing_axis")
add("CAC: 4\nEPC: 3\nAR: 3\nTRA: 4\nASCQ: 2", "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("4\n3\n3\n4\n2", "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("Clinical Accuracy & Competence 4\nEthical & Professional Conduct 3", "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("Overall the therapist did well. Clinical Accuracy & Competence: 4", "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("", "empty", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(full) + "\nClinical Accuracy & Competence: 5", "ambiguous", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(["3-4", 3, 3, 4, 2]), "ambiguous", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(["4 or 5", 3, 3, 4, 2]), "ambiguous", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes([4, "3 (2 issues noted)", 3, 4, 2]), "ambiguous", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes([7, 3, 3, 4, 2]), "out_of_range", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes([4, 0, 3, 4, 2]), "out_of_range", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes([4, 3, 3, 4, 6.5]), "out_of_range", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes([4, 3, 3.5, 4, 2]), "off_grid", scale="1-6", fmt="axes", keys=AX)
add(axes(["good", 3, 3, 4, 2]), "no_number", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(["", 3, 3, 4, 2]), "no_number", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("Clinical Accuracy & Competence -4\n" + axes(full[1:], AX[1:]), "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("| Clinical Accuracy & Competence | 4 |\n" + axes(full[1:], AX[1:]), "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add("<think>" + axes(full), "missing_axis", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(["4 out of 5", 3, 3, 4, 2]), "bad_denominator", scale="1-6", fmt="axes", keys=AX, fractional=True)
add(axes(["4/5", 3, 3, 4, 2]), "bad_denominator", scale="1-6", fmt="axes", keys=AX, fractional=True)

# ---- generated (seeded)
rng = random.Random(20260126)
SCALES = [("0-5", False), ("0-5", True), ("0-10", False), ("0-10", True), ("0-100", False), ("0-100", True),
          ("1-5", False), ("1-6", True), ("1-10", False)]

def on_scale(sc, frac):
    s = Scale.parse(sc)
    if frac:
        return round(rng.uniform(s.low, s.high), rng.choice([0, 1, 2]))
    return rng.choice(s.points)

def r(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v))

AMBIG = ["{a} or {b}", "Score: {a}. Actually {b}", "{a}, no wait, {b}", "Score: {a}\nConfidence: {b}",
         "**{a}**\n\nOn reflection, {b}.", "I would say {a}; others might say {b}", "{a} {b}",
         "Rating: {a}\nFinal rating: {b}", "{a}? {b}.", "Between {a} and {b}"]
for i in range(70):
    sc, frac = rng.choice(SCALES)
    a, b = on_scale(sc, frac), on_scale(sc, frac)
    if a == b:
        continue
    s = Scale.parse(sc)
    t = rng.choice(AMBIG)
    if t == "Between {a} and {b}" and {a, b} == {s.low, s.high}:
        continue
    add(t.format(a=r(a), b=r(b)), "ambiguous", sc, fractional=frac, category="ambiguous", origin="generated")
OUT = ["{v}", "Score: {v}", "**{v}**", "{v}.", "I give it {v}.", "Rating: {v}"]
for i in range(50):
    sc, frac = rng.choice(SCALES)
    s = Scale.parse(sc)
    v = rng.choice([s.high + rng.choice([1, 2, 5, 10, 0.5 if frac else 1]), s.low - rng.choice([1, 2, 0.5 if frac else 1])])
    add(rng.choice(OUT).format(v=r(v)), "out_of_range", sc, fractional=frac, category="out_of_range", origin="generated")
for i in range(30):
    sc = rng.choice(["0-5", "0-10", "0-100", "1-5", "1-10"])
    s = Scale.parse(sc)
    v = rng.choice(s.points[:-1]) + rng.choice([0.5, 0.25, 0.1, 0.75, 0.9])
    add(rng.choice(OUT).format(v=r(v)), "off_grid", sc, category="off_grid", origin="generated")
for i in range(30):
    sc, frac = rng.choice(SCALES)
    s = Scale.parse(sc)
    den = rng.choice([d for d in (3, 4, 5, 6, 7, 10, 20, 100) if d != s.high])
    num = rng.randint(0, den)
    add(rng.choice(["{n}/{d}", "Score: {n}/{d}", "{n} out of {d}", "**{n}/{d}**"]).format(n=num, d=den),
        "bad_denominator", sc, fractional=frac, category="bad_denominator", origin="generated")
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
for i in range(25):
    sc, frac = rng.choice(SCALES)
    add(rng.choice(["{w}", "Score: {w}", "I'd say {w}.", "**{w}**", "A solid {w}"]).format(w=rng.choice(WORDS)),
        "no_number", sc, fractional=frac, category="no_number", origin="generated")
for i in range(25):
    d = summ(); k = rng.choice(SUMM); d.pop(k)
    d[rng.choice(["relevancy", "coherency", "fluent", "consistent", "total"])] = 3
    add(json.dumps(d), "missing_key", "0-5", "json", SUMM, True, category="missing_key", origin="generated")
for i in range(20):
    vals = [on_scale("1-6", True) for _ in AX]
    drop = rng.randrange(5)
    names = [a for j, a in enumerate(AX) if j != drop]
    add(axes([v for j, v in enumerate(vals) if j != drop], names), "missing_axis", "1-6", "axes", AX, True,
        category="missing_axis", origin="generated")

# verify every row against the parser and report mismatches
bad = 0
for row in rows:
    s = Scale.parse(row["scale"])
    s = Scale(s.low, s.high, fractional=row["fractional"])
    o = try_parse(row["reply"], row["fmt"], s, row["keys"])
    if o.ok or o.cause != row["expected_cause"]:
        bad += 1
        print("MISMATCH", row, o.cause, o.value, o.values, o.failure and o.failure.message)
print(len(rows), "rows;", bad, "mismatches", file=sys.stderr)
if "--write" in sys.argv:
    with open(HERE / "malformed_replies.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

"""The full MindEval configuration (seed 004): 50 patients x 20 turns per clinician,
whole-conversation 5-axis judge, leaderboard with significance clusters.

Every call goes through the plugin's cache, so an interrupted run resumes where it
stopped, and a finished run replays for free.  Example with real models::

    python examples/mindeval/run_full_benchmark.py \\
        --clinician openai/gpt-4o-mini --clinician anthropic/claude-3-5-haiku-latest \\
        --patient-model openai/gpt-4o --judge-model anthropic/claude-3-7-sonnet-latest \\
        --out mindeval-run

Models served by an OpenAI-compatible server (vLLM, llama.cpp, Ollama): name them
``openai/<name>`` and pass ``--api-base http://127.0.0.1:8000/v1`` (key from
``JUDGEREL_API_KEY``); every role (backstory, patient, clinician, judge) then calls that server.

Use ``--profiles profiles.jsonl`` to run the official 50 profiles (MindEval's
``profiles.jsonl`` format, backstories included) instead of sampling new ones.
Offline smoke run on the embedded model: ``--patients 2 --turns 4 --role-only``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clinician", action="append", required=True, help="clinician model (repeatable)")
    ap.add_argument("--patient-model", required=True)
    ap.add_argument("--judge-model", required=True)
    ap.add_argument("--patients", type=int, default=50)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profiles", help="MindEval profiles.jsonl (official profiles) instead of sampling")
    ap.add_argument("--role-only", action="store_true",
                    help="role-only patient prompt (seed 004 Figure 9 ablation): no backstory needed")
    ap.add_argument("--judge-repeats", type=int, default=1, help="independent judge runs (the paper uses 30)")
    ap.add_argument("--api-base", default=None,
                    help="OpenAI-compatible server that serves every model of the run (default: each provider's own)")
    ap.add_argument("--cache-dir", default=".judgerel_cache")
    ap.add_argument("--max-concurrency", type=int, default=16)
    ap.add_argument("--out", default="mindeval-run", help="directory for interactions.jsonl and results.json")
    args = ap.parse_args(argv)

    from pytest_judgerel.llm import LLMClient, LLMSettings, resolve_endpoint
    from pytest_judgerel.mindeval.backstory import generate_backstories
    from pytest_judgerel.mindeval.interaction import run_interactions
    from pytest_judgerel.mindeval.judge import MindEvalJudge
    from pytest_judgerel.mindeval.metrics import breakdown, leaderboard, system_scores, verbosity
    from pytest_judgerel.mindeval.profiles import load_profiles, sample_profiles

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    client = LLMClient(LLMSettings(cache_dir=args.cache_dir, max_concurrency=args.max_concurrency))
    profiles = load_profiles(args.profiles) if args.profiles else sample_profiles(args.patients, seed=args.seed)
    variant = "role_only" if args.role_only else "default"
    # one endpoint per role, all on --api-base when given (key from JUDGEREL_API_KEY)
    patient = resolve_endpoint(args.patient_model, args.api_base)
    if variant == "default" and not all(getattr(p, "member_narrative", None) for p in profiles):
        profiles = generate_backstories(profiles, patient, client)

    judge = MindEvalJudge(resolve_endpoint(args.judge_model, args.api_base), client)
    scores_by_system, results = {}, {}
    for clinician in args.clinician:
        interactions = run_interactions(profiles, resolve_endpoint(clinician, args.api_base), client,
                                        turns=args.turns, patient_model=patient, patient_variant=variant,
                                        output_path=out / "interactions.jsonl")
        runs = [judge.score(interactions, sample_index=r) for r in range(args.judge_repeats)]
        scores = runs[0]
        scores_by_system[clinician] = scores
        verb = verbosity(interactions)
        results[clinician] = {
            "score": system_scores({clinician: scores})[clinician].__dict__,
            "by_severity": {str(k): v.__dict__ for k, v in breakdown(interactions, scores, "severity").items()},
            "verbosity": {"mean_sentences": verb.mean_sentences, "share_over_4": verb.share_over_4},
            "parse_failures": sum(1 for s in scores if s.failure is not None),
        }
    board = leaderboard(scores_by_system) if len(scores_by_system) > 1 else None
    summary = {"settings": vars(args), "systems": results, "leaderboard": board.to_dict() if board else None,
               "calls": client.stats.to_dict()}
    (out / "results.json").write_text(json.dumps(summary, indent=2, default=str))
    for clinician, res in results.items():
        rank = f"rank {board.rank_of(clinician)}" if board else ""
        print(f"{clinician}: mean {res['score'].get('mean', float('nan')):.3f} {rank} "
              f"(verbosity: {res['verbosity']['share_over_4']:.0%} of turns > 4 sentences, "
              f"parse failures {res['parse_failures']})")
    print(f"calls: {client.stats.to_dict()}; results in {out / 'results.json'}")
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

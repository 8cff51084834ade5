"""``judgerel study reproduce``: seed 001's tables from its data release, printed beside the
paper's (:mod:`pytest_judgerel.study.reproduce`), optionally as JSON and HTML."""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``study reproduce`` to the ``judgerel`` command line."""
    study = subparsers.add_parser("study", help="the seed-001 grading-scale study")
    actions = study.add_subparsers(dest="study_command", metavar="ACTION", required=True)
    rep = actions.add_parser("reproduce", help="recompute the paper's Tables 1-6, 14, 15 from its data release")
    rep.add_argument("--release", required=True, metavar="DIR",
                     help="a checkout of github.com/Harvard-AI-and-Robotics-Lab/LLM-Judge (its root or data/)")
    rep.add_argument("--json", default=None, metavar="PATH", help="write every cell as JSON")
    rep.add_argument("--html", default=None, metavar="PATH", help="write the tables and a paper-vs-ours plot")
    from .release import SUMMEVAL_READINGS

    rep.add_argument("--summeval-reading", default="first", choices=SUMMEVAL_READINGS,
                     help="how a SummEval annotation becomes one score: first (default, reproduces the paper), "
                          "overall, mean, relevance, coherence, fluency or consistency")
    rep.add_argument("--notes", action="store_true", help="also print the release's quirks and how they were handled")
    rep.set_defaults(func=_run_reproduce)


def _run_reproduce(args: argparse.Namespace) -> int:
    from .._io import write_text_atomic

    from .reproduce import TOLERANCE, reproduce

    rep = reproduce(args.release, summeval_reading=args.summeval_reading)
    print(rep.render())
    main = ("2", "3", "4a", "4b", "6", "14", "15")
    ok, n = rep.count(main)
    ok5, n5 = rep.count(("5",))
    ok1, n1 = rep.count(("1",))
    print(f"Tables 2, 3, 4a, 4b, 6, 14, 15: {ok}/{n} cells within {TOLERANCE}; Table 5: {ok5}/{n5}; "
          f"Table 1: {ok1}/{n1} (the paper used every benchmark item, the release holds 25 per benchmark)")
    print(f"{len(rep.release_notes)} release quirks handled" + ("" if args.notes else " (--notes lists them)"))
    if args.notes:
        for note in rep.release_notes:
            print(f"  {note}")
    if args.json:
        write_text_atomic(args.json, json.dumps(rep.to_json(), indent=1) + "\n")
        print(f"JSON: {args.json}")
    if args.html:
        from .html import reproduction_html

        write_text_atomic(args.html, reproduction_html(rep))
        print(f"HTML: {args.html}")
    return 0

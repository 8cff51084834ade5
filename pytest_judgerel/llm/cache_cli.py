"""``judgerel cache``: stats, export, import, prune, salvage and compact of the LLM response cache
(:mod:`pytest_judgerel.llm.cache_admin`)."""

from __future__ import annotations

import argparse
import json

import sys

from pytest_judgerel.llm.settings import DEFAULT_CACHE_DIR


def _cache_location(args: argparse.Namespace) -> str:
    """``--backend URL``, else ``--dir D``, else $JUDGEREL_CACHE_BACKEND, else the default directory."""
    if args.backend:
        return args.backend
    if args.dir:
        return args.dir
    from pytest_judgerel.llm.settings import LLMSettings, read_environment

    found = read_environment(LLMSettings, "cache_backend")  # the option's variable, read by its one reader
    return found[0] if found else DEFAULT_CACHE_DIR


def _shown(location: str) -> str:
    from pytest_judgerel.llm.cache import display_location

    return display_location(location)


# cache ------------------------------------------------------------------------------------------
def _cache_stats(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import cache_stats

    result = cache_stats(_cache_location(args))
    # a damaged database is an error (exit 1): a script checking the cache must not read it as healthy
    status = 1 if result.damaged else 0
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, sort_keys=True))
        if result.damaged:
            print(f"error: the cache database is corrupt: {result.damage or 'its table cannot be read'}",
                  file=sys.stderr)
        return status
    label = "cache" if "://" in result.directory else "cache directory"
    print(f"{label}: {result.directory}")
    if result.damaged:
        lost = ("SQLite cannot reach its table, so they were read page by page and how many entries it held "
                "is unknown" if result.unreadable is None else f"{result.unreadable} rows are not")
        print(f"error: the cache database is corrupt ({result.damage or 'damaged pages'}); {result.entries} "
              f"entries are readable, {lost}. Keep the readable ones (and get a working cache) with: "
              f"judgerel cache salvage --dir {result.directory}", file=sys.stderr)
    elif result.unreadable:
        print(f"warning: {result.unreadable} unreadable entries (served as misses and re-recorded)", file=sys.stderr)
    print(f"entries: {result.entries}")
    if result.previous_layout:
        print(f"layout: {result.previous_layout} entries in the previous layout (format 1, about three times "
              f"the size); they replay as they are, and 'judgerel cache compact' rewrites them")
    print(f"size: {result.size_bytes / 1024:.1f} KiB")
    if result.hit_rate is None:
        print("hit rate: not recorded")
    else:
        print(f"hit rate: {result.hit_rate:.1%} ({result.recorded_hits} hits, {result.recorded_misses} misses)")
    for title, counts in (("namespaces", result.namespaces), ("models", result.models)):
        if counts:
            print(f"{title}:")
            for name, count in counts.items():
                print(f"  {name or '(default)'}: {count}")
    return status


def _cache_export(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import export_cache, last_run_keys

    location = _cache_location(args)
    keys = last_run_keys(location) if args.last_run else None
    count = export_cache(location, args.out, namespace=args.namespace, keys=keys)
    what = " used by the last run" if keys is not None else ""
    print(f"exported {count} entries{what} to {args.out}")
    return 0


def _cache_salvage(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import salvage_cache

    result = salvage_cache(_cache_location(args))
    where = f"into a fresh cache at {_shown(_cache_location(args))}; the damaged files are in {result.moved_to}"
    if result.unreadable is None:
        # SQLite could not reach the table: the entries were read from the file's pages, and
        # nothing tells how many the lost pages held.  Nothing saved is a failure (exit 1).
        print(f"salvaged {result.saved} entries {where}. SQLite could not read the damaged database's table "
              f"({result.damage or 'corrupt pages'}), so its pages were read one by one: an unknown number of "
              "entries were lost", file=sys.stderr if not result.saved else sys.stdout)
        return 0 if result.saved else 1
    print(f"salvaged {result.saved} entries {where}; {result.unreadable} unreadable rows lost"
          + (f" ({result.damage})" if result.damage else ""))
    return 0


def _cache_import(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import import_cache

    location = _cache_location(args)
    count = import_cache(location, args.file)
    print(f"imported {count} entries into {_shown(location)}")
    return 0


def _cache_prune(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import prune_cache

    location = _cache_location(args)
    count = prune_cache(location, older_than_days=args.older_than, namespace=args.namespace)
    print(f"pruned {count} entries from {_shown(location)}")
    return 0


def _cache_compact(args: argparse.Namespace) -> int:
    from pytest_judgerel.llm.cache_admin import compact_cache

    location = _cache_location(args)
    result = compact_cache(location)
    if not result.rewritten:
        print(f"nothing to rewrite: the {result.already} entries of {_shown(location)} are in the compact layout")
        return 0
    print(f"rewrote {result.rewritten} entries of {_shown(location)} from the previous layout (format 1) in the "
          f"compact one (format 2; {result.already} were already); keys and answers unchanged; size "
          f"{result.size_before / 1024:.1f} KiB -> {result.size_after / 1024:.1f} KiB")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``cache`` (stats, export, salvage, import, prune, compact) to the ``judgerel`` command line."""
    cache = subparsers.add_parser("cache", help="inspect and maintain the LLM response cache")
    actions = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)

    def with_dir(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--dir", default=None, help=f"cache directory (default {DEFAULT_CACHE_DIR})")
        where.add_argument("--backend", default=None, metavar="URL",
                           help="shared cache URL, redis://[:password@]host:port/db, rediss://... or "
                                "unix://path (default $JUDGEREL_CACHE_BACKEND when --dir is not given)")
        return parser

    stats = with_dir(actions.add_parser("stats", help="entries, size, recorded hit rate"))
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=_cache_stats)

    export = with_dir(actions.add_parser("export", help="write entries as sorted JSON lines (a cassette)"))
    export.add_argument("--out", required=True, help="output .jsonl file")
    export.add_argument("--namespace", default=None, help="only this namespace")
    export.add_argument("--last-run", action="store_true",
                        help="only the entries the last pytest run used (drops answers of changed prompts)")
    export.set_defaults(func=_cache_export)

    salvage = with_dir(actions.add_parser(
        "salvage", help="keep the readable entries of a corrupt cache in a fresh one (old files kept aside)"))
    salvage.set_defaults(func=_cache_salvage)

    imp = with_dir(actions.add_parser("import", help="load a JSON-lines export (keys are verified)"))
    imp.add_argument("file", help="a .jsonl file written by 'cache export'")
    imp.set_defaults(func=_cache_import)

    prune = with_dir(actions.add_parser("prune", help="delete old entries or a namespace"))
    prune.add_argument("--older-than", type=float, default=None, metavar="DAYS", help="entries older than DAYS")
    prune.add_argument("--namespace", default=None, help="entries of this namespace")
    prune.set_defaults(func=_cache_prune)

    compact = with_dir(actions.add_parser(
        "compact", help="rewrite entries of the previous layout (format 1) in the compact one (format 2)"))
    compact.set_defaults(func=_cache_compact)

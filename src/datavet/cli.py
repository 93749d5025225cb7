"""Command line: ``datavet audit``, ``datavet rules``, ``datavet rule CODE``.

Exit codes: 0 finished with nothing at or above --fail-on; 1 finished with findings at or above
it; 2 could not audit (usage, unreadable input, missing target, a crashed rule).
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import traceback

from datavet._io import write_atomic
from datavet.errors import DatavetError
from datavet.output import FORMATS, render
from datavet.output.text import clean
from datavet.rules import RULES, lookup


def _use_colour(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty() and os.environ.get("TERM") != "dumb"


def _parser() -> argparse.ArgumentParser:
    from datavet import __version__

    parser = argparse.ArgumentParser(
        prog="datavet",
        description="Vet a dataset before a model is trained on it.",
        epilog="Exit codes: 0 passed, 1 findings at or above --fail-on, 2 could not audit.",
    )
    parser.add_argument("--version", action="version", version=f"datavet {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    a = sub.add_parser(
        "audit",
        help="audit a train (and test) split",
        description="Audit TRAIN (and TEST); print findings; exit 0/1/2.",
    )
    a.add_argument(
        "train", metavar="TRAIN", help="CSV, TSV, Parquet file or directory, Arrow/Feather"
    )
    a.add_argument("--test", metavar="TEST", help="the test split, same formats")
    a.add_argument(
        "--target", metavar="COL", help="label column (default: a column named label/target)"
    )
    a.add_argument("--task", choices=("auto", "classification", "regression"), default="auto")
    a.add_argument(
        "--format", choices=sorted(FORMATS), default="text", help="output format (default text)"
    )
    a.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")
    a.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="write the result here (atomically) instead of stdout",
    )
    a.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        default="error",
        help="exit 1 when findings reach this severity (default error)",
    )
    a.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even with findings (an audit that could not run still exits 2)",
    )
    a.add_argument(
        "--select",
        metavar="CODES",
        action="append",
        help="rules to run: codes, prefixes or names, comma-separated (default all)",
    )
    a.add_argument("--ignore", metavar="CODES", action="append", help="rules to leave out")
    a.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="local: stream on every core of this machine (default); dask: a Dask cluster",
    )
    a.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address (tcp://host:8786); default: a LocalCluster on 127.0.0.1",
    )
    a.add_argument("--workers", type=int, metavar="N", help="scan threads (local engine)")
    a.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on stderr for long scans (default: only when stderr is a terminal)",
    )
    a.add_argument(
        "--no-baselines",
        dest="baselines",
        action="store_false",
        help="skip fitting the baselines (the B rules are then skipped)",
    )
    a.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")

    sub.add_parser("rules", help="list every rule")
    r = sub.add_parser("rule", help="explain one rule")
    r.add_argument("code", metavar="CODE", help="a rule code (V001) or name (nan-values)")
    return parser


def _cmd_rules() -> int:
    rows = [(r.code, r.name, r.severity.label, r.summary) for r in RULES]
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    print(f"{'code':<{w[0]}}  {'name':<{w[1]}}  {'default':<{max(w[2], 7)}}  summary")
    for code, name, sev, summary in rows:
        print(f"{code:<{w[0]}}  {name:<{w[1]}}  {sev:<{max(w[2], 7)}}  {summary}")
    return 0


def _cmd_rule(key: str) -> int:
    rule = lookup(key)
    doc = inspect.cleandoc(rule.__doc__ or "")
    print(f"{rule.code} {rule.name} (default severity: {rule.severity.label})\n")
    print(doc)
    if rule.thresholds:
        print("\nThresholds: " + ", ".join(f"{k} = {v}" for k, v in rule.thresholds.items()))
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from datavet.api import audit

    report = audit(
        args.train,
        args.test,
        target=args.target,
        task=args.task,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
        baselines=args.baselines,
        engine=args.engine,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=args.progress,
    )
    if args.format == "text":
        colour = args.output is None and _use_colour(sys.stdout)
        text = render(report, "text", colour=colour)
    else:
        text = render(report, args.format)
    if args.html:
        report.save_html(args.html)
        print(f"datavet: wrote {args.html}", file=sys.stderr)
    if args.output:
        write_atomic(args.output, text)
        print(f"datavet: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    code = report.exit_code()
    if code == 1 and args.exit_zero:
        return 0
    return code


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    verbose = getattr(args, "verbose", False)
    try:
        if args.command == "rules":
            return _cmd_rules()
        if args.command == "rule":
            return _cmd_rule(args.code)
        return _cmd_audit(args)
    except DatavetError as exc:
        if verbose:
            traceback.print_exc()
        print(f"datavet: error: {clean(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("datavet: interrupted", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug in datavet: still one line and exit 2, never exit 1
        if verbose:
            traceback.print_exc()
        print(
            f"datavet: internal error: {type(exc).__name__}: {clean(str(exc))} "
            "(rerun with --verbose for the traceback)",
            file=sys.stderr,
        )
        return 2

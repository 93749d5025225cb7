"""Command line: ``datavet audit``, ``check``, ``config``, ``diff``, ``render``, ``rules``,
``rule CODE``.

Exit codes: 0 finished with nothing at or above --fail-on; 1 finished with findings at or above
it; 2 could not audit (usage, unreadable input, missing target, a crashed rule).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import sys
import traceback

from datavet import journal as journal_cli
from datavet import outputs, preflight_cli, render_cli
from datavet._io import write_atomic  # noqa: F401 - kept importable from here
from datavet.curves import cli as curves_cli
from datavet.errors import DatavetError
from datavet.output import FORMATS, _one_line, render_many
from datavet.output.text import clean
from datavet.probes import cli as probe_cli
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
        help="audit a train (and test) split, or the datasets the config names",
        description="Audit TRAIN (and TEST), or without TRAIN the datasets named in "
        "[tool.datavet.datasets]; print findings; exit 0/1/2.",
    )
    a.add_argument(
        "train",
        metavar="TRAIN",
        nargs="?",
        help="CSV, TSV, Parquet file or directory, Arrow/Feather; tensors: .npy, .npz, .pt "
        "(default: the config's datasets)",
    )
    a.add_argument(
        "--dataset",
        metavar="NAME",
        action="append",
        help="audit this dataset of the config (repeatable; default: all of them)",
    )
    a.add_argument("--test", metavar="TEST", help="the test split, same formats")
    a.add_argument(
        "--target", metavar="COL", help="label column (default: a column named label/target)"
    )
    a.add_argument(
        "--inputs",
        metavar="KEY",
        help="tensor inputs (.npz, .pt, dict or tuple batches): the key or position of the "
        "inputs; --target then names the labels' key or position",
    )
    a.add_argument(
        "--channel-axis",
        metavar="AXIS",
        help="tensor inputs: the axis holding channels, or 'none' (default: 1 for 4-D inputs, "
        "the last axis for (N, T, F) sequences)",
    )
    a.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        help="default: the config's, else auto",
    )
    a.add_argument(
        "--format", choices=sorted(FORMATS), default="text", help="output format (default text)"
    )
    a.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")
    a.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="write the result here (atomically) instead of stdout; - is stdout",
    )
    render_cli.add_output_format_option(a)
    outputs.add_force_option(a)
    a.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        help="exit 1 when findings reach this severity (default: the config's, else error)",
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
        "--extend-select", metavar="CODES", action="append", help="rules to add to the selection"
    )
    a.add_argument(
        "--config",
        metavar="PATH",
        help="a datavet.toml or pyproject.toml (default: the nearest one above the working "
        "directory that configures datavet)",
    )
    a.add_argument("--isolated", action="store_true", help="ignore every config file")
    a.add_argument(
        "--group",
        metavar="COL",
        help="the column naming each row's subject (patient, user, device): S005",
    )
    a.add_argument(
        "--time",
        metavar="COL",
        help="the date/time column the split is meant to follow: S008",
    )
    a.add_argument(
        "--engine",
        choices=("local", "dask", "spark"),
        default="local",
        help="local: stream on every core of this machine (default); dask: a Dask cluster; "
        "spark: a Spark session",
    )
    a.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address (tcp://host:8786) or Spark master URL (spark://host:7077); "
        "default: a local cluster on 127.0.0.1",
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
    a.add_argument(
        "--encoding",
        metavar="NAME",
        help="text encoding of CSV/TSV inputs (default utf-8, checked strictly: an invalid byte "
        "is an error naming its offset, never replaced)",
    )
    a.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="field separator of CSV/TSV inputs: , ; | or tab (default: sniffed from the "
        "first lines)",
    )
    a.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="refuse inputs whose audit needs more memory than SIZE (512MB, 4GB), estimated "
        "from the files' metadata before reading: decompression bombs stop here",
    )
    a.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")

    c = sub.add_parser(
        "check",
        help="audit each data FILE (the pre-commit hook)",
        description="Audit each FILE; a file that a config dataset names is audited as that "
        "dataset (with its other split). Exit 0/1/2, the worst of all.",
    )
    c.add_argument("files", metavar="FILE", nargs="+", help="data files")
    _share(a, c, exclude={"help", "train", "test", "dataset"})

    cf = sub.add_parser(
        "config",
        help="print the resolved settings",
        description="Print the settings an audit here would use: the config file, with any "
        "flags given over it.",
    )
    cf.add_argument("--format", choices=("toml", "json"), default="toml")
    _share(a, cf, only={"config", "isolated", "select", "extend_select", "ignore", "fail_on"})

    d = sub.add_parser(
        "diff",
        help="findings that appeared or went away between two JSON reports",
        description="Compare two `datavet audit --format json` reports of a dataset. Exit 0: "
        "nothing new at or above --fail-on; 1: something new (or worse) at or above it; 2: "
        "could not compare, or the new audit did not finish.",
    )
    d.add_argument("old", metavar="OLD", help="the earlier report (JSON)")
    d.add_argument("new", metavar="NEW", help="the later report (JSON)")
    d.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        help="the severity at which a new finding fails (default: the new report's fail-on)",
    )
    d.add_argument("--format", choices=("text", "json"), default="text")
    d.add_argument("--output", "-o", metavar="PATH", help="write the result here; - is stdout")
    outputs.add_force_option(d)

    probe_cli.add_parser(sub)
    preflight_cli.add_parser(sub)
    curves_cli.add_parser(sub)
    journal_cli.add_parser(sub)
    render_cli.add_parser(sub)
    sub.add_parser("rules", help="list every rule")
    r = sub.add_parser("rule", help="explain one rule")
    r.add_argument("code", metavar="CODE", help="a rule code (V001) or name (nan-values)")
    return parser


def _share(src, dst, *, only=None, exclude=()) -> None:
    """Give ``dst`` options of ``src``, as argparse's ``parents=`` does (sharing the actions),
    so ``check`` keeps every ``audit`` option, including ones added later."""
    for action in src._actions:
        if action.dest in exclude or (only is not None and action.dest not in only):
            continue
        dst._add_action(action)


def _cmd_rules() -> int:
    from datavet.curves.registry import CURVE_RULES
    from datavet.probes.registry import PROBES

    rows = [(r.code, r.name, r.severity.label, r.summary) for r in (*RULES, *PROBES, *CURVE_RULES)]
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


def _audit_job(args: argparse.Namespace, settings, job):
    from datavet.api import audit

    return audit(
        job.train,
        job.test,
        target=job.target,
        inputs=getattr(args, "inputs", None) or job.inputs,
        channel_axis=getattr(args, "channel_axis", None),
        task=job.task,
        **settings.audit_options(),
        group=args.group or job.group,
        time=args.time or job.time,
        engine=args.engine,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=args.progress,
        encoding=getattr(args, "encoding", None),
        delimiter=getattr(args, "delimiter", None) or job.delimiter,
        max_memory=getattr(args, "max_memory", None),
    )


def _outputs(args: argparse.Namespace, settings, jobs) -> outputs.Outputs:
    """The output policy for an audit: the data of every job (files, and everything inside a
    Parquet directory) and the config file are inputs; every output is checked before reading
    anything (``--output train.csv`` is a slip of the fingers that would destroy the data)."""
    from datavet import config

    reads = outputs.Inputs()
    for job in jobs:
        reads.add("train input", job.train)
        reads.add("test input", job.test)
    if settings.config is not None:
        reads.add("config file", settings.config)
    plan = outputs.Outputs(reads, force=getattr(args, "force", False))
    if args.html:
        for job in jobs:
            html = args.html if len(jobs) == 1 else config.per_dataset_path(args.html, job)
            plan.claim("--html", html)
    if args.output:
        plan.claim("--output", args.output)
    elif args.html == outputs.STDOUT:
        outputs.stdout_twice("--html")
    render_cli.claim_output_formats(plan, args, several=len(jobs) > 1)
    return plan


def _cmd_audit(args: argparse.Namespace) -> int:
    from datavet import config
    from datavet.errors import UsageError
    from datavet.output import github

    settings = config.from_args(args)
    render_cli.html_output_format(args)
    if args.command == "check":
        jobs = config.plan_files(settings, args.files, args, note=_note)
        if not jobs:
            print("datavet: nothing to check: every file given is excluded", file=sys.stderr)
            return 0
    else:
        jobs = config.plan(settings, args)
    plan = _outputs(args, settings, jobs)
    if args.format == "json" and len(jobs) > 1:
        names = ", ".join(j.name or j.train for j in jobs)
        raise UsageError(f"--format json holds one report; {len(jobs)} to audit ({names})")
    results = []
    for job in jobs:
        if len(jobs) > 1:
            print(f"datavet: auditing {_one_line(job.name or job.train)}", file=sys.stderr)
        results.append((job, _audit_job(args, settings, job)))
    # several audits: each is named (a file outside the config by its path)
    items = [
        (job.name or (job.train if len(jobs) > 1 else None), report, job.locations)
        for job, report in results
    ]
    options = {}
    if args.format == "text":
        options["colour"] = args.output in (None, outputs.STDOUT) and _use_colour(sys.stdout)
    text = render_many(items, args.format, **options)
    if args.html:
        for job, report in results:
            path = args.html if len(results) == 1 else config.per_dataset_path(args.html, job)
            plan.write("--html", path, report.to_html())
            outputs.wrote(path)
    render_cli.write_output_formats(plan, args, items)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and "github" in (args.format, *(f for f, _ in args.output_formats or ())):
        plan.append("GITHUB_STEP_SUMMARY", summary, github.summary_many(items))
    if args.output:
        plan.write("--output", args.output, text)
        outputs.wrote(args.output)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    for _, report in results:  # exit 2 from a crashed rule always says which, on stderr
        for line in report.crash_lines():
            print(line, file=sys.stderr)
    code = max(report.exit_code() for _, report in results)
    if code == 1 and args.exit_zero:
        return 0
    return code


def _note(text: str) -> None:
    print(f"datavet: {_one_line(text)}", file=sys.stderr)


def _cmd_config(args: argparse.Namespace) -> int:
    from datavet import config
    from datavet.report import dumps

    settings = config.from_args(args)
    if args.format == "json":
        payload = {"config": str(settings.config) if settings.config else None}
        payload.update(settings.to_dict())
        payload["rules"] = [r.code for r in settings.rules()]
        sys.stdout.write(dumps(payload) + "\n")
    else:
        sys.stdout.write(settings.to_toml())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    verbose = getattr(args, "verbose", False)
    try:
        if args.command == "probe":
            return probe_cli.run(args)
        if args.command == "preflight":
            return preflight_cli.run(args)
        if args.command == "curves":
            return curves_cli.run(args)
        if args.command == "journal":
            return journal_cli.run(args)
        if args.command == "render":
            return render_cli.run(args)
        if args.command == "rules":
            return _cmd_rules()
        if args.command == "rule":
            return _cmd_rule(args.code)
        if args.command == "config":
            return _cmd_config(args)
        if args.command == "diff":
            from datavet.diff import run

            return run(args)
        return _cmd_audit(args)
    except DatavetError as exc:
        if verbose:
            traceback.print_exc()
        print(f"datavet: error: {clean(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("datavet: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`datavet ... | head`): as Python's docs advise, point stdout at
        # devnull so the interpreter's final flush cannot fail again, and exit quietly
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
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

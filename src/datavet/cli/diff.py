"""``datavet diff OLD.json NEW.json``: findings that appeared or went away between two JSON
reports (the comparison is :mod:`datavet.diff`)."""

from __future__ import annotations

import argparse
import os

from datavet import outputs
from datavet.cli import options
from datavet.diff import diff, load_report, not_a_directory, render_text
from datavet.errors import UsageError
from datavet.output.json import dumps

FORMATS = ("text", "json")  # a diff is not a report: its own two renderings


def add_parser(sub) -> argparse.ArgumentParser:
    d = sub.add_parser(
        "diff",
        help="findings that appeared or went away between two JSON reports",
        description="Compare two `datavet audit --format json` reports of a dataset. Exit 0: "
        "nothing new at or above --fail-on; 1: something new (or worse) at or above it; 2: "
        "could not compare (a report unreadable, OLD and NEW one file, or reports of different "
        "kinds: an audit, a curves diagnosis, a probe), or the new audit did not finish.",
    )
    d.add_argument("old", metavar="OLD", help="the earlier report (JSON)")
    d.add_argument("new", metavar="NEW", help="the later report (JSON)")
    d.add_argument(
        "--fail-on",
        choices=options.SEVERITIES,
        help="the severity at which a new finding fails (default: the new report's fail-on)",
    )
    d.add_argument("--format", choices=FORMATS, default="text")
    d.add_argument("--output", "-o", metavar="PATH", help="write the result here; - is stdout")
    outputs.add_force_option(d)
    return d


def run(args: argparse.Namespace) -> int:
    """``datavet diff`` from parsed arguments (old, new, format, fail_on, output)."""
    not_a_directory(args.old)
    not_a_directory(args.new)
    if _same_file(args.old, args.new):  # a job wired to one path twice: always "unchanged"
        raise UsageError(
            f"OLD {args.old} and NEW {args.new} are the same file: name the earlier report as OLD"
        )
    plan = outputs.Outputs(
        outputs.reads(("old report", args.old), ("new report", args.new)),
        force=getattr(args, "force", False),
    )
    if args.output:
        plan.claim("--output", args.output)
    old, new = load_report(args.old), load_report(args.new)
    d = diff(old, new, names=(args.old, args.new))
    fail_on = args.fail_on or new.get("fail_on") or "error"
    if args.format == "json":
        text = dumps(d.to_dict(fail_on)) + "\n"
    else:
        text = render_text(d, fail_on)
    options.emit(plan, args, text)
    return d.exit_code(fail_on)


def _same_file(a: str, b: str) -> bool:
    """Whether two paths lead to one file (the same path, a link, a hard link)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # a missing file is reported when it is read
        return False

"""``datavet render``: saved ``--format json`` reports in any format, without auditing again.

Every path is checked under the output policy (:mod:`datavet.outputs`) before anything is read
and written through it: never onto an input, never over a file that is not datavet's own output
without ``--force``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datavet import outputs
from datavet.cli import options
from datavet.diff import load_report, not_a_directory
from datavet.errors import InputError, UsageError
from datavet.output import render_many
from datavet.output.text import clean

# --------------------------------------------------------------------------------------------
# datavet render


class SavedReport:
    """A report read back from its JSON: what the renderers need (``to_dict``)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def to_dict(self) -> dict:
        return self._data


# Formats whose renderers print some fields as they are, trusting datavet's own messages to be
# one line (a rule quotes data with repr): from a report read back, every string is shown inert.
_INERT = {"text", "junit"}


def _inert(value: Any, key: str | None = None) -> Any:
    """A copy of report data with control characters and line breaks shown as escapes
    (a traceback keeps its lines, none of which can start with ``::``)."""
    if isinstance(value, str):
        if key == "traceback":
            lines = (clean(line) for line in value.splitlines())
            return "\n".join(
                ("  " + line.lstrip().replace("::", ": :")) if line.lstrip()[:2] == "::" else line
                for line in lines
            )
        return clean(value)
    if isinstance(value, dict):
        return {k: _inert(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_inert(v) for v in value]
    return value


def load(path: str) -> SavedReport:
    """A saved ``--format json`` report, read and checked as ``datavet diff`` reads and checks
    it (:func:`datavet.diff.load_report`); InputError when it is not one, or lacks what the
    renderers need."""
    return SavedReport(load_report(path))


def add_parser(sub) -> None:
    r = sub.add_parser(
        "render",
        help="render saved JSON reports in another format (no new audit)",
        description="Render reports written by `datavet audit --format json` in FORMAT, "
        "without auditing again. Exit 0 when rendered, 2 when a report cannot be read.",
    )
    r.add_argument("reports", metavar="REPORT", nargs="+", help="a `--format json` report")
    r.add_argument(
        "--name",
        metavar="NAME",
        help="the dataset's name (one report; several are named by their file names)",
    )
    options.add_output_options(r, output_formats=True)


def run(args) -> int:
    if args.name is not None and len(args.reports) > 1:
        raise UsageError("--name names one report; several are named by their file names")
    options.html_output_format(args)
    several = len(args.reports) > 1
    if args.html and several:
        raise UsageError("--html holds one report; render one REPORT at a time")
    for path in args.reports:
        not_a_directory(path)
    plan = options.plan_outputs(args, outputs.reads(many=(("report", p) for p in args.reports)))
    options.claim_output_formats(plan, args, several=several)
    summary = options.step_summary(args)
    if summary:  # appended to, as by `datavet audit --format github`
        plan.claim_append("GITHUB_STEP_SUMMARY", summary)
    if args.format == "json" and several:
        raise UsageError("--format json holds one report; render one REPORT at a time")
    reports = [load(p) for p in args.reports]
    names = _names(args.reports) if several else [args.name]
    items = [(name, report, None) for name, report in zip(names, reports)]
    shown = [(n, SavedReport(_inert(r.to_dict())), loc) for n, r, loc in items]
    try:
        text = render_many(
            shown if args.format in _INERT else items, args.format, **options.text_options(args)
        )
        extras = [
            (fmt, path, render_many(shown if fmt in _INERT else items, fmt))
            for fmt, path in args.output_formats
        ]
        page = _html(reports[0]) if args.html else None
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        what = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else exc
        raise InputError(
            ", ".join(args.reports), f"not a complete datavet JSON report ({what})"
        ) from None
    if page is not None:
        options.write_html(plan, args.html, page)
    for fmt, path, extra in extras:
        plan.write(f"--output-format {fmt}", path, extra)
        outputs.wrote(path)
    options.append_step_summary(plan, args, items)
    options.emit(plan, args, text)
    return 0


def _names(paths: list[str]) -> list[str]:
    """Each report's name: its file stem, with ``-2``, ``-3`` after a stem already taken
    (``a/h.json`` and ``b/h.json``), so SARIF runs and JUnit suites stay apart."""
    names: list[str] = []
    for path in paths:
        stem = name = Path(path).stem
        n = 1
        while name in names:
            n += 1
            name = f"{stem}-{n}"
        names.append(name)
    return names


def _html(report: SavedReport) -> str:
    from datavet.output.html import render  # jinja2: only when an HTML report is asked for

    return render(report)

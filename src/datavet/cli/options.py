"""What every command that prints a report shares: the output options (``--format``,
``--output``, ``--html``, ``--output-format``, ``--force``), the output policy built from them,
colour, writing the result and the exit code.

The ``--format`` choices are the renderers' registry (:data:`datavet.output.FORMATS`), for every
command: a new renderer is a choice of ``audit``, ``check``, ``probe``, ``preflight``, ``curves``
and ``render`` at once.
"""

from __future__ import annotations

import argparse
import os
import sys

from datavet import outputs
from datavet.errors import UsageError
from datavet.output import FORMATS, _one_line, render_many

HTML = "html"
SEVERITIES = ("info", "warning", "error")


def format_choices() -> list[str]:
    """The ``--format`` choices: every renderer in the registry."""
    return sorted(FORMATS)


def use_colour(stream) -> bool:
    """ANSI colour on ``stream``: only on a terminal, never with ``NO_COLOR``, always with
    ``FORCE_COLOR`` (``NO_COLOR`` wins)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty() and os.environ.get("TERM") != "dumb"


def note(text: str) -> None:
    """One ``datavet: ...`` line on stderr."""
    print(f"datavet: {_one_line(text)}", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# the options


def _format_path(value: str) -> tuple[str, str]:
    fmt, sep, path = value.partition("=")
    fmt = fmt.strip().lower()
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"expected FORMAT=PATH, got {value!r}")
    if fmt not in FORMATS and fmt != HTML:
        known = ", ".join([*format_choices(), HTML])
        raise argparse.ArgumentTypeError(f"unknown format {fmt!r} (choose from {known})")
    return fmt, path


def add_output_options(
    parser: argparse.ArgumentParser,
    *,
    html_help: str = "also write the HTML report to PATH",
    output_formats: bool = False,
) -> None:
    """``--format`` (the renderers' registry), ``--html``, ``--output``/``-o``, ``--force`` and,
    with ``output_formats``, ``--output-format FORMAT=PATH`` (repeatable)."""
    parser.add_argument(
        "--format", choices=format_choices(), default="text", help="output format (default text)"
    )
    parser.add_argument("--html", metavar="PATH", help=html_help)
    parser.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="write the result here (atomically) instead of stdout; - is stdout",
    )
    if output_formats:
        add_output_format_option(parser)
    outputs.add_force_option(parser)


def add_output_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output-format",
        metavar="FORMAT=PATH",
        action="append",
        type=_format_path,
        dest="output_formats",
        help="also write the result in FORMAT to PATH (repeatable): "
        + ", ".join([*format_choices(), HTML])
        + "; - is stdout",
    )


def add_gate_options(parser: argparse.ArgumentParser, *, default: str | None = "error") -> None:
    """``--fail-on`` and ``--exit-zero``."""
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default=default,
        help="exit 1 when findings reach this severity "
        + (f"(default {default})" if default else "(default: the config's, else error)"),
    )
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even with findings (an audit that could not run still exits 2)",
    )


def add_config_options(parser: argparse.ArgumentParser, default: str = "") -> None:
    """``--config PATH`` and ``--isolated``, as every command that reads the project's
    configuration takes them (``default``: what is read without either, said in the help)."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="a datavet.toml or pyproject.toml (default: the nearest one above the working "
        f"directory that configures datavet{default})",
    )
    parser.add_argument("--isolated", action="store_true", help="ignore every config file")


def add_verbose_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")


# --------------------------------------------------------------------------------------------
# the output policy and writing


def html_output_format(args: argparse.Namespace) -> None:
    """``--output-format html=PATH`` is ``--html PATH``."""
    extras = []
    for fmt, path in getattr(args, "output_formats", None) or ():
        if fmt != HTML:
            extras.append((fmt, path))
        elif args.html and args.html != path:
            raise UsageError("give --html PATH or --output-format html=PATH, not both")
        else:
            args.html = path
    args.output_formats = extras


def plan_outputs(
    args: argparse.Namespace, reads: outputs.Inputs, *, html: list | None = None
) -> outputs.Outputs:
    """The output policy of a command: every output path is checked against what it reads (and
    against files that are not datavet's) before anything is read. ``html``: the ``--html``
    paths when one command writes several."""
    plan = outputs.Outputs(reads, force=getattr(args, "force", False))
    if args.html is not None:  # an empty path is refused, never taken as "no report"
        for path in html or [args.html]:
            plan.claim("--html", path)
    if args.output is not None:
        plan.claim("--output", args.output)
    else:
        if args.html == outputs.STDOUT:
            outputs.stdout_twice("--html")
        plan.check_stdout()  # the result goes to standard output: never onto an input
    return plan


def claim_output_formats(plan: outputs.Outputs, args, *, several: bool = False) -> None:
    """Check every ``--output-format`` path before anything is read."""
    for fmt, path in getattr(args, "output_formats", None) or ():
        if fmt == "json" and several:
            raise UsageError(
                "--output-format json holds one report; choose one dataset with --dataset NAME"
            )
        option = f"--output-format {fmt}"
        if path == outputs.STDOUT and not getattr(args, "output", None):
            outputs.stdout_twice(option)
        plan.claim(option, path)


def write_output_formats(plan: outputs.Outputs, args, items) -> None:
    """Render ``items`` (as :func:`datavet.output.render_many` takes them) in each extra
    format and write it."""
    for fmt, path in getattr(args, "output_formats", None) or ():
        text = render_many(items, fmt)
        plan.write(f"--output-format {fmt}", path, text)
        outputs.wrote(path)


def step_summary(args: argparse.Namespace) -> str | None:
    """``$GITHUB_STEP_SUMMARY`` when the GitHub format is asked for (it gets the summary)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and "github" in (args.format, *(f for f, _ in args.output_formats or ())):
        return summary
    return None


def append_step_summary(plan: outputs.Outputs, args: argparse.Namespace, items) -> None:
    """Append the job summary of ``items`` to ``$GITHUB_STEP_SUMMARY`` (when
    :func:`step_summary` names it), within the room the step's earlier summaries left under
    GitHub's limit."""
    from datavet.output import github

    path = step_summary(args)
    if not path:
        return
    try:
        used = os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError:
        used = 0
    text = github.summary_many(items, limit=github.SUMMARY_LIMIT - used)
    plan.append("GITHUB_STEP_SUMMARY", path, text)


def text_options(args: argparse.Namespace) -> dict:
    """Renderer options: colour for text on a terminal."""
    if args.format != "text":
        return {}
    return {"colour": args.output in (None, outputs.STDOUT) and use_colour(sys.stdout)}


def write_html(plan: outputs.Outputs, path, page: str) -> None:
    plan.write("--html", path, page)
    outputs.wrote(path)


def emit(plan: outputs.Outputs, args: argparse.Namespace, text: str) -> None:
    """The result to ``--output`` (atomically) or to stdout."""
    if args.output:
        plan.write("--output", args.output, text)
        outputs.wrote(args.output)
    else:
        plan.check_stdout()
        outputs.write_stdout(text)


def mark_exit_zero(reports, args: argparse.Namespace) -> None:
    """Under ``--exit-zero`` each report's verdict line says the process exits 0, not 1."""
    for report in reports:
        report.exit_zero = bool(getattr(args, "exit_zero", False))


def gate(code: int, args: argparse.Namespace) -> int:
    """The exit code: ``--exit-zero`` turns 1 into 0, never 2."""
    if code == 1 and getattr(args, "exit_zero", False):
        return 0
    return code

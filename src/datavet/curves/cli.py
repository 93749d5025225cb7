"""``datavet curves LOG``: diagnose a training run from its log (rules C001-C009)."""

from __future__ import annotations

import argparse
import sys

from datavet import outputs

# text: the curve view (each finding with its likely causes); the others are the audit
# renderers, so CI reads a curve report as it reads an audit (JUnit, SARIF, GitHub annotations)
FORMATS = ("text", "json", "junit", "sarif", "github")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "curves",
        help="diagnose a training log: divergence, NaN, plateau, overfitting, spikes",
        description="Read a training log (CSV, TSV, JSON lines, a GradientMonitor's saved "
        "record), report the symptoms on its curves with the step each began and the likely "
        "causes in the order to check them; exit 0/1/2.",
    )
    p.add_argument("log", metavar="LOG", help="the training log")
    p.add_argument(
        "--column",
        metavar="CANONICAL=NAME",
        action="append",
        help="map a log column: step, epoch, train_loss, val_loss, grad_norm, lr, "
        "train_metric, val_metric (e.g. --column train_loss=nll); repeatable",
    )
    p.add_argument("--classes", type=int, metavar="C", help="number of classes (ln C for C004)")
    p.add_argument(
        "--prior",
        metavar="P1,P2,...",
        help="class frequencies or counts (their entropy for C004), for imbalanced classes",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--html", metavar="PATH", help="also write the HTML report (with charts)")
    p.add_argument(
        "--output", "-o", metavar="PATH", help="write the result here, atomically; - is stdout"
    )
    outputs.add_force_option(p)
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        default="error",
        help="exit 1 when findings reach this severity (default error)",
    )
    p.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings (never hides exit 2)"
    )
    p.add_argument("--select", metavar="CODES", action="append", help="curve rules to run")
    p.add_argument("--ignore", metavar="CODES", action="append", help="curve rules to leave out")
    p.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")
    return p


def run(args: argparse.Namespace) -> int:
    from datavet.curves.api import diagnose_curves
    from datavet.curves.text import render as render_text
    from datavet.report import dumps

    plan = outputs.Outputs(outputs.reads(("log", args.log)), force=getattr(args, "force", False))
    if args.html:
        plan.claim("--html", args.html)
    if args.output:
        plan.claim("--output", args.output)
    elif args.html == outputs.STDOUT:
        outputs.stdout_twice("--html")
    report = diagnose_curves(
        args.log,
        columns=args.column,
        classes=args.classes,
        prior=args.prior,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
    )
    if args.format == "text":
        from datavet.cli import _use_colour

        to_stdout = args.output in (None, outputs.STDOUT)
        text = render_text(report, colour=to_stdout and _use_colour(sys.stdout))
    elif args.format == "json":
        text = dumps(report.to_dict()) + "\n"
    else:
        from datavet.output import render

        text = render(report, args.format)
    if args.html:
        plan.write("--html", args.html, report.to_html())
        outputs.wrote(args.html)
    if args.output:
        plan.write("--output", args.output, text)
        outputs.wrote(args.output)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    code = report.exit_code()
    if code == 1 and args.exit_zero:
        return 0
    return code

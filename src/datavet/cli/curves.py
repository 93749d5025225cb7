"""``datavet curves LOG``: diagnose a training run from its log (rules C001-C009)."""

from __future__ import annotations

import argparse
import os

from datavet import outputs
from datavet.cli import options
from datavet.errors import InputError

# Every renderer of the registry: text shows a curve report as the curve view (each finding with
# its likely causes); CI reads a curve report as it reads an audit (JUnit, SARIF, annotations).


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
    p.add_argument(
        "--run",
        metavar="NAME",
        help="the run to diagnose, in a log of several (a run, run_id, name or experiment column)",
    )
    p.add_argument("--classes", type=int, metavar="C", help="number of classes (ln C for C004)")
    p.add_argument(
        "--prior",
        metavar="P1,P2,...",
        help="class frequencies or counts (their entropy for C004), for imbalanced classes",
    )
    options.add_output_options(p, html_help="also write the HTML report (with charts)")
    options.add_gate_options(p)
    p.add_argument("--select", metavar="CODES", action="append", help="curve rules to run")
    p.add_argument("--ignore", metavar="CODES", action="append", help="curve rules to leave out")
    options.add_verbose_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    from datavet.api.curves import diagnose_curves
    from datavet.output import render

    if os.path.isdir(args.log):  # said first: the output checks would blame a path inside it
        raise InputError(args.log, "is a directory, not a training log")
    plan = options.plan_outputs(args, outputs.reads(("log", args.log)))
    report = diagnose_curves(
        args.log,
        columns=args.column,
        run=args.run,
        classes=args.classes,
        prior=args.prior,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
    )
    options.mark_exit_zero([report], args)
    text = render(report, args.format, **options.text_options(args))
    if args.html:
        options.write_html(plan, args.html, report.to_html())
    options.emit(plan, args, text)
    return options.gate(report.exit_code(), args)

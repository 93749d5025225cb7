"""``datavet audit`` and ``datavet check``: argparse -> Settings -> jobs -> audit() -> render ->
exit code. ``check`` (the pre-commit hook) takes every option of ``audit``."""

from __future__ import annotations

import argparse
import os
import sys

from datavet import outputs
from datavet.cli import options, plan
from datavet.errors import InputError, UsageError
from datavet.output import _one_line, render_many


def add_parser(sub) -> argparse.ArgumentParser:
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
    options.add_output_options(a, output_formats=True)
    options.add_gate_options(a, default=None)
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
    options.add_config_options(a)
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
        help="skip fitting the baselines (B001 and B002 are then skipped; B003 and B004 run)",
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
    options.add_verbose_option(a)

    return a


def add_check_parser(sub, audit: argparse.ArgumentParser) -> argparse.ArgumentParser:
    c = sub.add_parser(
        "check",
        help="audit each data FILE (the pre-commit hook)",
        description="Audit each FILE; a file that is part of config datasets (a split, a file "
        "in a split's directory, or one its glob matches) is audited as each of those whole "
        "datasets (with its other split). Exit 0/1/2, the worst of all.",
    )
    c.add_argument("files", metavar="FILE", nargs="+", help="data files")
    share(audit, c, exclude={"help", "train", "test", "dataset"})

    return c


def share(src, dst, *, only=None, exclude=()) -> None:
    """Give ``dst`` options of ``src``, as argparse's ``parents=`` does (sharing the actions),
    so ``check`` keeps every ``audit`` option, including ones added later."""
    for action in src._actions:
        if action.dest in exclude or (only is not None and action.dest not in only):
            continue
        dst._add_action(action)


def _audit_job(args: argparse.Namespace, settings, job: plan.Job):
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


def _outputs(args: argparse.Namespace, settings, jobs: list[plan.Job]) -> outputs.Outputs:
    """The output policy for an audit: the data of every job (files, and everything inside a
    Parquet directory) and the config file are inputs; every output is checked before reading
    anything (``--output train.csv`` is a slip of the fingers that would destroy the data)."""
    reads = outputs.Inputs()
    for job in jobs:
        reads.add("train input", job.train)
        reads.add("test input", job.test)
    if settings.config is not None:
        reads.add("config file", settings.config)
    policy = options.plan_outputs(args, reads, html=_html_paths(args, jobs) or None)
    options.claim_output_formats(policy, args, several=len(jobs) > 1)
    summary = options.step_summary(args)
    if summary:  # appended to: refused up front when another output names the same file
        policy.claim_append("GITHUB_STEP_SUMMARY", summary)
    return policy


def _html_paths(args: argparse.Namespace, jobs: list) -> list[str | os.PathLike]:
    """The ``--html`` file of each job: PATH for one audit, one distinct file each for more."""
    if not args.html:
        return []
    if len(jobs) == 1:
        return [args.html]
    return list(plan.per_dataset_paths(args.html, jobs))


def run(args: argparse.Namespace) -> int:
    settings = plan.from_args(args)
    options.html_output_format(args)
    if args.command == "check":
        jobs = plan.plan_files(settings, args.files, args, note=options.note)
        if not jobs:
            print("datavet: nothing to check: every file given is excluded", file=sys.stderr)
            return 0
    else:
        jobs = plan.plan(settings, args)
    policy = _outputs(args, settings, jobs)
    if args.format == "json" and len(jobs) > 1:
        names = ", ".join(j.name or j.train for j in jobs)
        raise UsageError(f"--format json holds one report; {len(jobs)} to audit ({names})")
    reports = []  # one per job; None for a file that could not be read
    for job in jobs:
        if len(jobs) > 1:
            print(f"datavet: auditing {_one_line(job.name or job.train)}", file=sys.stderr)
        try:
            reports.append(_audit_job(args, settings, job))
        except InputError as exc:
            if len(jobs) == 1:
                raise
            # one unreadable file of several: its error, and the others' reports all the same
            print(f"datavet: error: {_one_line(exc)}", file=sys.stderr)
            reports.append(None)
    results = [(job, report) for job, report in zip(jobs, reports) if report is not None]
    if not results:
        return 2
    options.mark_exit_zero([report for _, report in results], args)
    # several audits: each is named (a file outside the config by its path)
    items = [
        (job.name or (job.train if len(jobs) > 1 else None), report, job.locations)
        for job, report in results
    ]
    text = render_many(items, args.format, **options.text_options(args))
    from datavet.output.html import render as html_page

    for html, job, report in zip(_html_paths(args, jobs), jobs, reports):
        if report is not None:  # a dataset's page names it (title, heading)
            options.write_html(policy, html, html_page(report, name=job.name))
    options.write_output_formats(policy, args, items)
    options.append_step_summary(policy, args, items)
    options.emit(policy, args, text)
    for _, report in results:  # exit 2 from a crashed rule always says which, on stderr
        for line in report.crash_lines():
            print(line, file=sys.stderr)
    code = options.gate(max(report.exit_code() for _, report in results), args)
    return 2 if None in reports else code

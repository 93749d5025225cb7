"""``datavet.audit``: the one entry point from data to Report.

``audit`` composes four steps, each in its own module:

1. check the arguments (:mod:`datavet.pipeline.arguments`) and open the inputs
   (:mod:`datavet.pipeline.inputs`);
2. the engine's passes over the data (:mod:`datavet.engines`: tables, tensors, near duplicates),
   the task and the baselines (:mod:`datavet.pipeline.evidence`);
3. the rules (:func:`datavet.framework.run_rules`, one runner for every family);
4. the Report, with the dataset summaries (:mod:`datavet.pipeline.summary`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping
from time import perf_counter

from datavet._blas import one_blas_thread
from datavet._later import Later
from datavet.auditors.base import AuditContext
from datavet.config import apply_column_ignores
from datavet.engines import get_engine
from datavet.findings import Severity
from datavet.framework import run_rules
from datavet.pipeline.arguments import AuditArgs, check_arguments
from datavet.pipeline.evidence import Evidence, gather
from datavet.pipeline.inputs import open_inputs
from datavet.pipeline.summary import dataset_summary, drift_histograms
from datavet.report import Report
from datavet.sources import DEFAULT_BATCH_ROWS


def _quiet_libraries(func):
    """Run ``func`` with the warnings of the libraries datavet calls (torch, NumPy, pandas,
    pyarrow, scikit-learn, dask) silenced: they are not the user's to read, and what matters
    (an input datavet cannot audit) is its own one-line error or a note in the report."""

    @functools.wraps(func)
    def quiet(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", module=r"(torch|numpy|pandas|pyarrow|sklearn|scipy|dask|distributed)\b"
            )
            return func(*args, **kwargs)

    return quiet


@_quiet_libraries
def audit(
    train,
    test=None,
    *,
    target: str | None = None,
    inputs: str | None = None,
    channel_axis: int | str | None = None,
    group: str | None = None,
    time: str | None = None,
    task: str = "auto",
    select=None,
    ignore=None,
    fail_on: str | Severity = "error",
    severity: Mapping[str, str | Severity] | None = None,
    thresholds: Mapping[str, Mapping[str, float]] | None = None,
    per_column_ignores=None,
    baselines: bool = True,
    engine: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    sample_rows: int = 50_000,
    encoding: str | None = None,
    delimiter: str | None = None,
    max_memory: int | str | None = None,
    max_samples: int | None = None,
) -> Report:
    """Audit a training split (and optionally a test split) and return a :class:`Report`.

    Parameters
    ----------
    train, test : path, DataFrame, pyarrow Table, or (X, y) NumPy arrays
        CSV/TSV, Parquet (a file or a directory of files) and Arrow IPC/Feather paths are
        streamed in batches; nothing is loaded whole. Also: a polars DataFrame or LazyFrame
        (streamed), any object with ``__arrow_c_stream__`` (DuckDB relations), a
        ``pyarrow.dataset.Dataset``, a Hugging Face ``Dataset`` (its Arrow table, no copy) or
        ``IterableDataset`` (streamed), a Dask DataFrame (the Dask engine), tensors.
    target : str, optional
        The label column. Without it, a column named ``label`` or ``target`` is used if there
        is exactly one; otherwise label rules are skipped. For tensor inputs: the key (``.npz``
        array, dict key) or tuple position of the labels.
    inputs : str, optional
        Tensor inputs only: the key or tuple position of the inputs (default: the only other
        array, or one named ``inputs``/``x``/``images``...; position 0 of a tuple).
    channel_axis : int or "none", optional
        Tensor inputs only: the axis holding channels (default 1 for 4-D inputs, the last axis
        for ``(N, T, F)`` sequences; ``"none"`` for one-channel ``(N, H, W)`` images).
    group : str, optional
        A column naming the subject each row belongs to (patient, user, device): S005 reports
        groups with rows in both splits.
    time : str, optional
        A date/time column along which the split is meant to be made: S008 reports test rows
        older than the newest train row. Without it, the only date/time column (if exactly one)
        is used, and S008 reports only splits that look meant to be temporal.
    task : {"auto", "classification", "regression"}
        "auto" decides from the target's type and number of distinct values, and says why.
    select, ignore : str or list of str
        Rule codes, code prefixes (families such as ``"L"``) or names, as in ruff.
    fail_on : {"info", "warning", "error"}
        The severity at or above which the report fails (``exit_code() == 1``).
    severity : mapping, optional
        Per-rule severity overrides, e.g. ``{"S002": "error"}``.
    thresholds : mapping, optional
        Per-rule threshold overrides, e.g. ``{"L001": {"max_ratio": 5}}``.
    per_column_ignores : mapping, optional
        Findings to leave out, per column, with the reason:
        ``{"user_id": {"rules": ["S002", "F002"], "reason": "one row per event"}}`` (a column
        name or a ``*``/``?`` pattern). They are listed in ``report.ignored`` with the reason.
    engine : {"local", "dask", "spark"}, optional
        Default: "dask" when an input is a Dask DataFrame, "spark" for a Spark DataFrame, else
        "local". "local" streams batches in this process on every core (``workers`` threads);
        "dask" profiles partitions on a Dask cluster: the one at ``scheduler``
        ("tcp://host:8786"), or a LocalCluster on 127.0.0.1 when no address is given; "spark"
        runs in a Spark session (``scheduler``: its master URL). Dask and Spark audit tables:
        tensor inputs with either raise UsageError. An unknown name raises UsageError.
    progress : bool, optional
        Progress on stderr for scans longer than a second or two; default: only on a terminal.
    baselines : bool
        Fit the mean / majority / prior / linear baselines (needs a target and a selected B
        rule). They use a uniform sample of at most ``sample_rows`` rows per split, and the
        report says so.
    encoding : str, optional
        The text encoding of CSV/TSV inputs (default UTF-8, checked: a byte that is not UTF-8
        raises InputError with its offset; nothing is replaced silently).
    delimiter : str, optional
        The field separator of CSV/TSV inputs (default: sniffed among ``,`` ``;`` tab ``|``
        from the first lines; the report's notes say when it is not ``,``).
    max_memory : int or str, optional
        A memory budget (bytes, or "512MB", "4GB"): the memory the audit of file inputs needs is
        estimated from their metadata (rows x decoded row width, plus row hashes) before any
        data is read, and InputError ("resource limit") is raised when it is over; then what
        is decoded is counted as it streams, and the scan stops with InputError as soon as
        what it keeps would pass the budget (compressed files say nothing reliable up front).
    max_samples : int, optional
        Tensor inputs only: read at most this many samples of each split. By default a torch
        Dataset or DataLoader (which may never end) is read up to its first 1,000,000 samples
        and arrays are read whole; a capped split says so in ``report.notes``.

    Returns
    -------
    Report

    Examples
    --------
    >>> import pandas as pd, datavet
    >>> df = pd.DataFrame({"x": [1.0, 2.0, float("nan"), 4.0], "label": [0, 1, 0, 1]})
    >>> report = datavet.audit(df, target="label")
    >>> [f.code for f in report.findings]
    ['V001']
    >>> report.exit_code()
    1
    """
    started = perf_counter()
    args = check_arguments(
        train=train,
        test=test,
        target=target,
        inputs=inputs,
        channel_axis=channel_axis,
        group=group,
        time=time,
        task=task,
        select=select,
        ignore=ignore,
        fail_on=fail_on,
        severity=severity,
        thresholds=thresholds,
        per_column_ignores=per_column_ignores,
        baselines=baselines,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        progress=progress,
        batch_rows=batch_rows,
        sample_rows=sample_rows,
        encoding=encoding,
        delimiter=delimiter,
        max_memory=max_memory,
        max_samples=max_samples,
    )
    opened = open_inputs(train, test, args)
    runner = get_engine(
        opened.engine,
        batch_rows=args.batch_rows,
        workers=args.workers,
        progress=args.progress,
        scheduler=args.scheduler,
    )
    # one BLAS thread for the fits (rules and baselines side by side): see datavet._blas
    with one_blas_thread():
        evidence = gather(runner, opened, args)
        ctx = _context(evidence)
        findings, outcomes = run_rules(
            args.auditors, ctx, workers=rule_workers(args.workers), pending=ctx.pending
        )
        evidence.settle()  # the evidence computed beside the rules, for the report
    return _report(evidence, findings, outcomes, args, perf_counter() - started)


def rule_workers(workers: int | None) -> int:
    """Threads for the rules: the cores, at most 4 (twenty-odd rules, most of them short; more
    threads only contend for the GIL), or ``workers`` when given."""
    import os

    cores = os.cpu_count() or 1
    return max(1, min(4, cores) if workers is None else min(workers, cores))


def _context(evidence: Evidence) -> AuditContext:
    """What the rules read: the profiles and what the passes found beside them."""
    table = evidence.table
    return AuditContext(
        train=evidence.profiles["train"],
        test=evidence.profiles.get("test"),
        target=evidence.target,
        task=evidence.task,
        baselines=evidence.baselines,
        precomputed_rows=table.precomputed_rows if table else None,
        group=evidence.group,
        time=evidence.time_column,
        time_declared=evidence.time_declared,
        near_pass=table.near if table else None,
        near_columns=table.near_columns if table else (),
        id_columns=evidence.id_columns,
        row_keys=table.row_keys if table else (),
        keyless_rows=table.keyless if table else None,
        columns=evidence.columns,
    )


def _report(evidence: Evidence, findings, outcomes, args: AuditArgs, duration: float) -> Report:
    profiles = evidence.profiles
    datasets = {split: dataset_summary(p, evidence.time_column) for split, p in profiles.items()}
    if "test" in profiles and not evidence.tensors:
        drift_histograms(datasets, profiles, findings)
    fitted = Later.now(evidence.baselines)  # settled: the value itself
    report = Report(
        findings=findings,
        outcomes=outcomes,
        datasets=datasets,
        fail_on=args.fail_level,
        target=evidence.target,
        task=evidence.task,
        task_reason=evidence.task_reason,
        notes=evidence.notes,
        baselines=fitted.to_dict() if fitted is not None else None,
        duration_s=duration if math.isfinite(duration) else None,
    )
    return apply_column_ignores(report, args.ignores)

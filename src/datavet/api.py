"""``datavet.audit``: the one entry point from data to Report."""

from __future__ import annotations

import difflib
import functools
import importlib
import math
import sys
import threading
import traceback
import warnings
from collections.abc import Mapping
from dataclasses import replace
from time import perf_counter

import numpy as np
import pyarrow as pa

from datavet.auditors.base import AuditContext
from datavet.config import apply_column_ignores, column_ignores, threshold_problem
from datavet.engines.local import prescan_columns, profile_source
from datavet.errors import InputError, UsageError
from datavet.findings import Severity
from datavet.framework import needing, option_of, run_rules
from datavet.report import Report
from datavet.rules import in_section, lookup, select_rules
from datavet.scan import Profile, ScanPlan
from datavet.scan.columns import column_kind
from datavet.scan.idlike import (
    id_like_columns,
    index_columns,
    looks_like_key_name,
    row_key_columns,
)
from datavet.scan.neardup import NearRows, near_pass
from datavet.scan.rowchecks import keyless_rows, row_checks
from datavet.scan.tensors import profile_tensors, tensor_summary
from datavet.sources import DEFAULT_BATCH_ROWS, TabularSource, TensorSource, open_source
from datavet.tasks import detect_task

AUTO_TARGETS = ("label", "target")


def _closest(name: str, names: list[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _resolve_target(
    target: str | None, source: TabularSource, role: str = "target"
) -> tuple[str | None, str | None]:
    names = source.schema.names
    if isinstance(target, int):  # pd.DataFrame(array): integer column names, stored as text
        target = str(target)
    if target is None:
        found = [n for n in names if n.lower() in AUTO_TARGETS]
        if len(found) == 1:
            return found[0], f"target {found[0]!r} found by name; pass --target to choose another"
        return None, None
    if target not in names:
        listed = ", ".join(map(repr, names[:20])) + (
            f" (+{len(names) - 20} more)" if len(names) > 20 else ""
        )
        hint = _closest(target, names)
        maybe = f"; did you mean {hint!r}?" if hint else ""
        raise InputError(
            source.name, f"{role} column {target!r} not found{maybe} Columns: {listed}"
        )
    return target, None


def _plan(
    train: TabularSource,
    test: TabularSource | None,
    target: str | None,
    sample_rows: int,
    group: str | None = None,
) -> ScanPlan:
    kinds = {f.name: column_kind(f.type) for f in train.schema}
    skip = {n for src in (train, test) if src is not None for n in index_columns(src.schema)}
    skip.discard(target)
    features = [n for n in train.schema.names if n != target and n not in skip]
    as_number: set[str] = set()
    if test is not None:
        test_kinds = {f.name: column_kind(f.type) for f in test.schema}
        features = [n for n in features if n in test_kinds]
        for n in features:
            pair = {kinds[n], test_kinds[n]}
            if pair & {"numeric", "bool"} and pair & {"string"}:
                as_number.add(n)
    return ScanPlan(
        target=target,
        group=group,
        hash_columns=tuple(features),
        as_number=frozenset(as_number),
        sample_rows=sample_rows,
        skip_columns=frozenset(skip),
    )


def _index_note(plan: ScanPlan) -> str | None:
    if not plan.skip_columns:
        return None
    names = ", ".join(
        repr(n) if n else "the unnamed first column" for n in sorted(plan.skip_columns)
    )
    return (
        f"left out {names}: the row index pandas writes with the data (df.to_csv() / "
        "to_parquet() without index=False); it numbers rows, it is no feature, and it would "
        "hide copied rows from the row checks"
    )


def _keyless(sources, profiles, plan, id_columns, batch_rows):
    """S001/S002 again with the row-key columns left out: a row copied under a fresh key (an
    order number, a UUID) differs from its original only there. Returns (row keys left out,
    RowChecks) or ((), None) when there is no such column, or too few features remain."""
    keys = [c for c in row_key_columns(profiles["train"], id_columns) if c in plan.hash_columns]
    if not keys:
        return (), None
    split_rows = {}
    for split, src in sources.items():
        if src is None:
            continue
        own = [n for n in src.schema.names if n != plan.target and n not in plan.skip_columns]
        columns = [n for n in own if n not in keys]
        shared = [n for n in plan.hash_columns if n not in keys]
        if len(shared) < 2 or len(columns) < 2:
            return (), None  # one feature left: equal values are no evidence of a copy
        split_rows[split] = keyless_rows(
            src, profiles[split].hashes, columns, shared, plan.as_number, batch_rows, plan.target
        )
    checks = row_checks(
        split_rows["train"],
        split_rows.get("test"),
        with_labels=profiles["train"].label is not None,
    )
    return tuple(keys), checks


def _time_range(profile: Profile, column: str | None) -> dict | None:
    from datavet.auditors.time_order_leakage import _unit, _when

    stats = profile.columns.get(column) if column else None
    if stats is None or stats.tmin is None:
        return None
    unit = _unit(stats.dtype)
    return {"column": column, "min": _when(stats.tmin, unit), "max": _when(stats.tmax, unit)}


def _summary(profile: Profile, time_column: str | None = None) -> dict:
    columns = []
    for c in profile.columns.values():
        entry = {
            "name": c.name,
            "dtype": c.dtype,
            "kind": c.kind,
            "count": c.present,
            "nan": c.missing,
            "inf": c.inf,
            "mean": c.mean if c.finite.n else None,
            "std": c.std if c.finite.n else None,
            "min": c.min if c.finite.n else None,
            "max": c.max if c.finite.n else None,
            "distinct": c.n_distinct,
        }
        if c.vector is not None:  # vector columns: figures over elements, rows apart
            entry.update(c.vector.summary(), nan_rows=c.missing, inf_rows=c.inf)
        columns.append(entry)
    out = {
        "source": profile.source,
        "format": profile.format,
        "rows": profile.rows,
        "columns": columns,
        "sample_rows": len(profile.sample.keys),
        "sampled": profile.sample.is_sample,
    }
    time_range = _time_range(profile, time_column)
    if time_range is not None:
        out["time"] = time_range
    if profile.label is not None:
        lab = profile.label
        out["label"] = {
            "name": lab.name,
            "dtype": lab.dtype,
            "missing": lab.missing,
            "distinct": lab.values.n_distinct,
            "classes": [{"value": v, "count": n} for v, n in lab.values.most_common(50)],
            "positions": lab.positions.summary(),
        }
    if profile.tensor is not None:
        out["tensor"] = tensor_summary(profile)
    return out


def _columns(source: TabularSource, skip=frozenset()) -> tuple[tuple[str, str, str], ...]:
    return tuple(
        (f.name, str(f.type), column_kind(f.type)) for f in source.schema if f.name not in skip
    )


def _column_arg(value, what: str):
    """A column argument: a name (str), or an integer (a DataFrame's integer column name, a
    tensor tuple position); anything else is a UsageError."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    kind = type(value).__name__
    one = isinstance(value, (list, tuple)) and what == "target"
    hint = "; datavet audits one target column" if one else ""
    raise UsageError(f"{what} must be one column name (a str), not a {kind} {value!r:.80}{hint}")


def _count_arg(value, what: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        if value >= 1:
            return int(value)
    raise UsageError(f"{what} must be a whole number of at least 1, not {value!r:.80}")


def _rule_map(value, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{what} must be a mapping of rule code to setting, such as "
            f"{_EXAMPLES[what]}, not a {type(value).__name__}"
        )
    for key in value:
        if not isinstance(key, str):
            raise UsageError(f"{what}: rule keys are codes or names (str), not {key!r:.80}")
    return dict(value)


_EXAMPLES = {"severity": '{"S002": "error"}', "thresholds": '{"L001": {"max_ratio": 5}}'}


def _threshold_values(code: str, values) -> dict:
    if not isinstance(values, Mapping):
        raise UsageError(
            f"thresholds[{code!r}] must be a mapping of threshold name to number, such as "
            f"{{'max_ratio': 5}}, not {values!r:.80}"
        )
    out = {}
    for name, number in values.items():
        ok = isinstance(number, (int, float, np.integer, np.floating)) and not isinstance(
            number, (bool, np.bool_)
        )
        if not ok or not math.isfinite(number) or number < 0:
            raise UsageError(
                f"threshold {code}.{name} must be a finite number of at least 0, not {number!r:.80}"
            )
        problem = threshold_problem(name, float(number))
        if problem is not None:  # the config file's ranges: one rule for both ways in
            raise UsageError(f"threshold {code}.{name}: {problem}")
        out[name] = number
    return out


def _selector_arg(value, what: str):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return value
    raise UsageError(
        f"{what} must be a rule code, prefix or name (str) or a list of them, not {value!r:.80}"
    )


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
    engine : {"local", "dask"}, optional
        Default: "dask" when an input is a Dask DataFrame, else "local". "local" streams batches in
        this process on every core (``workers`` threads); "dask" profiles partitions on a Dask
        cluster: the one at ``scheduler`` ("tcp://host:8786"), or a LocalCluster on 127.0.0.1 when
        no address is given.
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
    try:
        fail_level = Severity.parse(fail_on)
    except UsageError as exc:
        raise UsageError(f"fail_on: {exc}") from None
    rules = select_rules(_selector_arg(select, "select"), _selector_arg(ignore, "ignore"))
    overrides = {}
    for k, v in _rule_map(severity, "severity").items():
        try:
            overrides[lookup(k).code] = Severity.parse(v)
        except UsageError as exc:
            raise UsageError(f"severity[{k!r}]: {exc}") from None
    tuned = {
        lookup(k).code: _threshold_values(k, v)
        for k, v in _rule_map(thresholds, "thresholds").items()
    }
    target = _column_arg(target, "target")
    group, time = _column_arg(group, "group"), _column_arg(time, "time")
    if engine is None:
        from datavet.sources.frames import is_dask_frame

        engine = "dask" if is_dask_frame(train) or is_dask_frame(test) else "local"
    if engine not in ("local", "dask", "spark"):
        raise UsageError(f"unknown engine {engine!r:.80} (choose local, dask or spark)")
    if scheduler is not None and not isinstance(scheduler, str):
        raise UsageError(
            f"scheduler must be an address such as 'tcp://host:8786', not {scheduler!r:.80}"
        )
    if encoding is not None and not isinstance(encoding, str):
        raise UsageError(f"encoding must be a codec name such as 'utf-8', not {encoding!r:.80}")
    batch_rows = _count_arg(batch_rows, "batch_rows")
    sample_rows = _count_arg(sample_rows, "sample_rows")
    workers = _count_arg(workers, "workers", optional=True)
    max_samples = _count_arg(max_samples, "max_samples", optional=True)
    auditors = [r(severity=overrides.get(r.code), thresholds=tuned.get(r.code)) for r in rules]
    ignores = column_ignores(per_column_ignores)

    memory = None
    from datavet.engines.spark import spark_inputs  # imports pyspark only for Spark inputs

    engine, train, test = spark_inputs(engine, train, test)  # a Spark DataFrame: in place
    if max_memory is not None:
        from datavet.engines.local import default_workers
        from datavet.sources import budget

        limit = budget.parse_size(max_memory)
        budget.check(
            [("train", train), ("test", test)],
            limit,
            batch_rows=batch_rows,
            sample_rows=sample_rows,
        )
        memory = budget.Budget(
            limit,
            batch_rows=batch_rows,
            sample_rows=sample_rows,
            workers=default_workers() if workers is None else workers,
        )
    opts = {"target": target, "inputs": inputs, "channel_axis": channel_axis}
    if encoding is not None:
        opts["encoding"] = encoding
    if delimiter is not None:
        opts["delimiter"] = delimiter
    train_src = open_source(train, role="train", **opts)
    if (
        target is None
        and isinstance(train_src, TabularSource)
        and getattr(train_src, "label", None)
    ):
        # an (X, y) pair: y is the target, and a test pair's y takes the same name
        target = opts["target"] = train_src.label
    test_src = open_source(test, role="test", **opts) if test is not None else None
    for src in (train_src, test_src):
        if memory is not None and isinstance(src, TabularSource):
            src.budget = memory  # counts what is decoded as it streams
    tensors = None  # tensor inputs: NumPy, torch (see datavet.scan.tensors)
    if isinstance(train_src, TensorSource) or isinstance(test_src, TensorSource):
        if group is not None or time is not None:
            raise UsageError("group and time columns apply to tables, not tensor inputs")
        tensors = profile_tensors(
            train_src,
            test_src,
            sample_rows=sample_rows,
            batch_rows=batch_rows,
            workers=workers,
            max_samples=max_samples,
        )
        target, target_note = tensors.target, tensors.target_note
    else:
        target, target_note = _resolve_target(target, train_src)
    if group is not None:
        group, _ = _resolve_target(group, train_src, role="group")
    if time is not None:
        time, _ = _resolve_target(time, train_src, role="time")
    prefetch = None
    if tensors is None and engine == "local":
        prefetch = _prefetch(rules, baselines and target is not None)
    if tensors is None:
        plan = _plan(train_src, test_src, target, sample_rows, group=group)
    else:
        plan = ScanPlan(target=target, hash_columns=tuple(tensors.features))

    precomputed_rows = near_guess = None
    if tensors is not None:
        profiles = tensors.profiles
    elif engine == "dask":
        from datavet.engines.dask import profile_splits

        sources = {"train": train_src, **({"test": test_src} if test_src is not None else {})}
        profiles, precomputed_rows = profile_splits(
            sources, plan, scheduler=scheduler, batch_rows=batch_rows
        )
    elif engine == "spark":
        from datavet.engines.spark import profile_splits as spark_splits

        sources = {"train": train_src, **({"test": test_src} if test_src is not None else {})}
        profiles, precomputed_rows = spark_splits(
            sources, plan, master=scheduler, batch_rows=batch_rows
        )
    elif engine == "local":
        # S007/S008 in the same pass when the ID-like columns can be known first (near_plan)
        near_guess = _near_plan(train_src, test_src, plan, rules, auditors, group, time, batch_rows)
        train_plan = plan if near_guess is None else replace(plan, **near_guess)
        profiles = {
            "train": profile_source(
                train_src,
                train_plan,
                "train",
                batch_rows=batch_rows,
                workers=workers,
                progress=progress,
            )
        }
        if test_src is not None:
            test_plan = train_plan
            newest = profiles["train"].columns.get((near_guess or {}).get("time_column"))
            if near_guess is not None and newest is not None:
                test_plan = replace(train_plan, time_before=newest.tmax)
            profiles["test"] = profile_source(
                test_src,
                test_plan,
                "test",
                batch_rows=batch_rows,
                workers=workers,
                progress=progress,
            )
    else:
        raise UsageError(f"unknown engine {engine!r} (choose local, dask or spark)")
    for split, src in (("train", train_src), ("test", test_src)):
        if src is not None and profiles[split].rows == 0:
            raise InputError(src.name, "no data rows (only a header or an empty table)")

    notes = [target_note] if target_note else []
    notes += [
        src.read_note
        for src in (train_src, test_src)
        if isinstance(src, TabularSource) and src.read_note
    ]
    notes += [
        src.order_note
        for src in (train_src, test_src)
        if isinstance(src, TabularSource) and src.order_note
    ]
    notes += [
        note
        for src in (train_src, test_src)
        if isinstance(src, TabularSource)
        for note in getattr(src, "notes", ())
    ]
    notes += tensors.notes if tensors is not None else []
    if tensors is None and _index_note(plan):
        notes.append(_index_note(plan))
    task_name = task_reason = None
    if target is not None:
        task_name, task_reason = detect_task(profiles["train"].label, task)
    elif task != "auto":
        raise UsageError(f"--task {task} needs a target column (--target)")

    id_columns = tuple(id_like_columns(profiles["train"], exclude=(target or "", group or "")))
    time_column, time_declared = time, time is not None
    if time_column is None:
        temporal = [c.name for c in profiles["train"].columns.values() if c.kind == "temporal"]
        time_column = temporal[0] if len(temporal) == 1 else None
    keys = {c for c in (group, *id_columns) if c}
    row_keys, keyless = (), None
    if tensors is None and needing(rules, "row_keys"):
        row_keys, keyless = _keyless(
            {"train": train_src, "test": test_src}, profiles, plan, id_columns, batch_rows
        )
    near, near_columns = None, ()
    if test_src is not None and tensors is None and needing(rules, "near_hashes"):
        near_columns = tuple(c for c in plan.hash_columns if c not in keys and c != time_column)
        digits = int(option_of(auditors, "near_hashes", "digits", 6))
        if engine == "local" and near_guess == {
            "near_columns": near_columns,
            "near_digits": digits,
            "time_column": time_column,
        }:  # the scan computed them: the guess made before it holds
            near = {
                split: NearRows.of(p.hashes, p.older if split == "test" else 0, p.older_rows)
                for split, p in profiles.items()
            }
        else:
            near = _near_pass(
                {"train": train_src, "test": test_src},
                profiles,
                plan,
                near_columns,
                time_column,
                batch_rows,
                digits,
            )

    if prefetch is not None:
        prefetch.join()  # before anything here imports what it imports
    fitted = None
    # The baselines are the B rules' evidence: with every B rule deselected they are not fitted.
    if target is not None and baselines and needing(rules, "baselines"):
        features = [c for c in plan.hash_columns if c not in keys]
        fitted = _fit_baselines(profiles, target, task_name, features)
        left_out = [c for c in plan.hash_columns if c in keys]
        if left_out and fitted.skipped is None:
            fitted.notes.append(
                "left out of the linear model as group or ID-like columns (keys, not features): "
                + ", ".join(left_out)
            )
        if fitted.sampled:
            notes.append(
                f"baselines use a uniform sample of {fitted.train_rows:,} of "
                f"{fitted.sample_of:,} train rows"
            )

    ctx = AuditContext(
        train=profiles["train"],
        test=profiles.get("test"),
        target=target,
        task=task_name,
        baselines=fitted,
        precomputed_rows=precomputed_rows,
        group=group,
        time=time_column,
        time_declared=time_declared,
        near=near,
        near_columns=near_columns,
        id_columns=id_columns,
        row_keys=row_keys,
        keyless_rows=keyless,
        columns=tensors.columns
        if tensors is not None
        else {
            s: _columns(src, plan.skip_columns)
            for s, src in (("train", train_src), ("test", test_src))
            if src
        },
    )
    findings, outcomes = run_rules(auditors, ctx)

    datasets = {split: _summary(p, time_column) for split, p in profiles.items()}
    if "test" in profiles and tensors is None:
        _drift_histograms(datasets, profiles, findings)
    duration = perf_counter() - started
    report = Report(
        findings=findings,
        outcomes=outcomes,
        datasets=datasets,
        fail_on=fail_level,
        target=target,
        task=task_name,
        task_reason=task_reason,
        notes=notes,
        baselines=fitted.to_dict() if fitted is not None else None,
        duration_s=duration if math.isfinite(duration) else None,
    )
    return apply_column_ignores(report, ignores)


def _drift_histograms(datasets: dict, profiles: dict, findings) -> None:
    """Train and test histograms (shared bins) of the features a drift rule (section "drift")
    finds drifting, in their column summaries, for the report's side-by-side charts."""
    from datavet.auditors.feature_drift import histograms

    drifted = {c for f in findings if in_section(f.code, "drift") for c in f.columns}
    for column in drifted:
        hist = histograms(profiles["train"], profiles["test"], column)
        if hist is None:
            continue
        for split in ("train", "test"):
            for entry in datasets[split]["columns"]:
                if entry["name"] == column:
                    entry["histogram"] = {
                        k: v for k, v in hist.items() if k not in ("train", "test", "column")
                    } | {"counts": hist[split]}


PREFETCH_SKLEARN = (
    "sklearn.compose",
    "sklearn.impute",
    "sklearn.linear_model",
    "sklearn.metrics",
    "sklearn.pipeline",
    "sklearn.preprocessing",
)


def _prefetch(rules, baselines: bool) -> threading.Thread | None:
    """Import scipy.stats (~0.7 s) and, for the baselines, scikit-learn (~1 s more) in a
    background thread while the scan runs: the scan spends its time in NumPy and Arrow
    kernels that release the GIL, so the import mostly costs no wall time. ``audit`` joins the
    thread before anything else imports them (no two threads import one package at once)."""
    names = []
    if needing(rules, "scipy"):
        names.append("scipy.stats")
    if baselines and needing(rules, "baselines"):
        names += ["scipy.stats", *PREFETCH_SKLEARN, "threadpoolctl"]
    names = [n for n in dict.fromkeys(names) if n not in sys.modules]
    if not names:
        return None

    def run():
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the real import, later, reports it
                return

    thread = threading.Thread(target=run, name="datavet-prefetch", daemon=True)
    thread.start()
    return thread


def _near_plan(train_src, test_src, plan, rules, auditors, group, time, batch_rows):
    """What the scan needs to compute the near-duplicate hashes (S007) and count old test rows
    (S008) in the same pass: the columns they cover leave out the ID-like ones, so those are
    found first from the few columns that can be ID-like (text; whole numbers named like keys),
    read alone. None when S007/S008 are not selected or the source cannot read columns alone
    (CSV): then a second pass does it. ``audit`` checks the guess against the full scan and
    falls back to the second pass if it differs."""
    if test_src is None or not needing(rules, "near_hashes"):
        return None
    kinds = {f.name: column_kind(f.type) for f in train_src.schema}
    temporal = [n for n, k in kinds.items() if k == "temporal"]
    time_column = time if time is not None else (temporal[0] if len(temporal) == 1 else None)
    hashed = set(plan.hash_columns)
    candidates = [
        f.name
        for f in train_src.schema
        if f.name in hashed
        and f.name not in (plan.target, group)
        and (
            kinds[f.name] == "string"
            or (
                kinds[f.name] == "numeric"
                and looks_like_key_name(f.name)
                and pa.types.is_integer(getattr(f.type, "value_type", f.type))
            )
        )
    ]
    stats = prescan_columns(train_src, candidates, batch_rows=batch_rows)
    if stats is None:
        return None
    exclude = (plan.target or "", group or "")
    ids = id_like_columns(Profile(split="train", columns=stats), exclude=exclude)
    keys = {c for c in (group, *ids) if c}
    return {
        "near_columns": tuple(c for c in plan.hash_columns if c not in keys and c != time_column),
        "near_digits": int(option_of(auditors, "near_hashes", "digits", 6)),
        "time_column": time_column,
    }


def _near_pass(sources, profiles, plan, columns, time_column, batch_rows, digits):
    """The second streaming pass: near-duplicate hashes of both splits, and test rows older
    than the newest train row."""
    newest = None
    if time_column is not None and time_column in profiles["train"].columns:
        newest = profiles["train"].columns[time_column].tmax
    return {
        split: near_pass(
            src,
            columns=list(columns),
            exact_columns=list(plan.hash_columns),
            as_number=plan.as_number,
            time_column=time_column if split == "test" else None,
            time_before=newest,
            batch_rows=batch_rows,
            digits=digits,
        )
        for split, src in sources.items()
    }


def _fit_baselines(profiles: dict[str, Profile], target: str, task: str, features: list[str]):
    from datavet.baselines import Baselines, run_baselines

    test = profiles.get("test")
    try:
        return run_baselines(
            profiles["train"].sample.table,
            test.sample.table if test is not None else None,
            target=target,
            task=task,
            features=features,
            sample_of=profiles["train"].rows,
        )
    except Exception as exc:  # B001/B002 report it as a crash (exit 2); the other rules go on
        return Baselines(
            task=task,
            skipped=f"crashed: {type(exc).__name__}: {exc}",
            error=traceback.format_exc(),
        )

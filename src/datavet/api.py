"""``datavet.audit``: the one entry point from data to Report."""

from __future__ import annotations

import difflib
import math
import time
import traceback
from collections.abc import Mapping

from datavet.auditors.base import AuditContext, Skip
from datavet.engines.local import profile_source
from datavet.errors import InputError, UsageError
from datavet.findings import Outcome, Severity, Status
from datavet.report import Report
from datavet.rules import lookup, select_rules
from datavet.scan import Profile, ScanPlan
from datavet.scan.columns import column_kind
from datavet.sources import DEFAULT_BATCH_ROWS, TabularSource, open_source
from datavet.tasks import detect_task

AUTO_TARGETS = ("label", "target")


def _closest(name: str, names: list[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _resolve_target(target: str | None, source: TabularSource) -> tuple[str | None, str | None]:
    names = source.schema.names
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
            source.name, f"target column {target!r} not found{maybe} Columns: {listed}"
        )
    return target, None


def _plan(
    train: TabularSource, test: TabularSource | None, target: str | None, sample_rows: int
) -> ScanPlan:
    kinds = {f.name: column_kind(f.type) for f in train.schema}
    features = [n for n in train.schema.names if n != target]
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
        hash_columns=tuple(features),
        as_number=frozenset(as_number),
        sample_rows=sample_rows,
    )


def _summary(profile: Profile) -> dict:
    columns = []
    for c in profile.columns.values():
        columns.append(
            {
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
        )
    out = {
        "source": profile.source,
        "format": profile.format,
        "rows": profile.rows,
        "columns": columns,
        "sample_rows": len(profile.sample.keys),
        "sampled": profile.sample.is_sample,
    }
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
    return out


def _columns(source: TabularSource) -> tuple[tuple[str, str, str], ...]:
    return tuple((f.name, str(f.type), column_kind(f.type)) for f in source.schema)


def audit(
    train,
    test=None,
    *,
    target: str | None = None,
    task: str = "auto",
    select=None,
    ignore=None,
    fail_on: str | Severity = "error",
    severity: Mapping[str, str | Severity] | None = None,
    thresholds: Mapping[str, Mapping[str, float]] | None = None,
    baselines: bool = True,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    sample_rows: int = 50_000,
) -> Report:
    """Audit a training split (and optionally a test split) and return a :class:`Report`.

    Parameters
    ----------
    train, test : path, DataFrame, pyarrow Table, or (X, y) NumPy arrays
        CSV/TSV, Parquet (a file or a directory of files) and Arrow IPC/Feather paths are
        streamed in batches; nothing is loaded whole.
    target : str, optional
        The label column. Without it, a column named ``label`` or ``target`` is used if there
        is exactly one; otherwise label rules are skipped.
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
    engine : {"local", "dask"}
        "local" streams batches in this process on every core (``workers`` threads); "dask"
        profiles partitions on a Dask cluster: the one at ``scheduler`` ("tcp://host:8786"),
        or a LocalCluster on 127.0.0.1 when no address is given.
    progress : bool, optional
        Progress on stderr for scans longer than a second or two; default: only on a terminal.
    baselines : bool
        Fit the mean / majority / prior / linear baselines (needs a target and a selected B
        rule). They use a uniform sample of at most ``sample_rows`` rows per split, and the
        report says so.

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
    started = time.perf_counter()
    fail_level = Severity.parse(fail_on)
    rules = select_rules(select, ignore)
    overrides = {lookup(k).code: Severity.parse(v) for k, v in (severity or {}).items()}
    tuned = {lookup(k).code: dict(v) for k, v in (thresholds or {}).items()}
    auditors = [r(severity=overrides.get(r.code), thresholds=tuned.get(r.code)) for r in rules]

    train_src = open_source(train, role="train", target=target)
    test_src = open_source(test, role="test", target=target) if test is not None else None
    target, target_note = _resolve_target(target, train_src)
    plan = _plan(train_src, test_src, target, sample_rows)

    precomputed_rows = None
    if engine == "dask":
        from datavet.engines.dask import profile_splits

        sources = {"train": train_src, **({"test": test_src} if test_src is not None else {})}
        profiles, precomputed_rows = profile_splits(
            sources, plan, scheduler=scheduler, batch_rows=batch_rows
        )
    elif engine == "local":
        profiles = {
            "train": profile_source(
                train_src, plan, "train", batch_rows=batch_rows, workers=workers, progress=progress
            )
        }
        if test_src is not None:
            profiles["test"] = profile_source(
                test_src, plan, "test", batch_rows=batch_rows, workers=workers, progress=progress
            )
    else:
        raise UsageError(f"unknown engine {engine!r} (choose local or dask)")
    for split, src in (("train", train_src), ("test", test_src)):
        if src is not None and profiles[split].rows == 0:
            raise InputError(src.name, "no data rows (only a header or an empty table)")

    notes = [target_note] if target_note else []
    task_name = task_reason = None
    if target is not None:
        task_name, task_reason = detect_task(profiles["train"].label, task)
    elif task != "auto":
        raise UsageError(f"--task {task} needs a target column (--target)")

    fitted = None
    # The baselines are the B rules' evidence: with every B rule deselected they are not fitted.
    if target is not None and baselines and any(r.code.startswith("B") for r in rules):
        fitted = _fit_baselines(profiles, target, task_name, list(plan.hash_columns))
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
        columns={s: _columns(src) for s, src in (("train", train_src), ("test", test_src)) if src},
    )
    findings, outcomes = [], []
    for auditor in auditors:
        try:
            found = auditor.run(ctx)
        except Skip as skip:
            outcomes.append(Outcome(auditor.code, auditor.name, Status.SKIPPED, reason=str(skip)))
            continue
        except Exception as exc:  # one crashing rule never stops the others; exit code 2
            outcomes.append(
                Outcome(
                    auditor.code,
                    auditor.name,
                    Status.CRASHED,
                    reason=f"{type(exc).__name__}: {exc}",
                    traceback=traceback.format_exc(),
                )
            )
            continue
        findings.extend(found)
        status = Status.FAILED if found else Status.PASSED
        outcomes.append(Outcome(auditor.code, auditor.name, status, n_findings=len(found)))

    duration = time.perf_counter() - started
    return Report(
        findings=findings,
        outcomes=outcomes,
        datasets={split: _summary(p) for split, p in profiles.items()},
        fail_on=fail_level,
        target=target,
        task=task_name,
        task_reason=task_reason,
        notes=notes,
        baselines=fitted.to_dict() if fitted is not None else None,
        duration_s=duration if math.isfinite(duration) else None,
    )


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

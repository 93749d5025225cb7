"""diagnose_curves(log) -> Report: read a training log, run the curve rules, keep the chart data."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping

import numpy as np

from datavet.curves.base import CurveContext
from datavet.curves.causes import describe
from datavet.curves.source import SERIES, CurveLog, read_curves
from datavet.errors import UsageError
from datavet.findings import Severity, Status
from datavet.framework import run_rules
from datavet.report import Report
from datavet.rules import CURVE_RULES, select_curve_rules
from datavet.rules import find_curve_rule as find

MAX_CHART_POINTS = 2000  # per series in the report; extremes and flagged steps are always kept


def _classes(classes) -> int | None:
    if classes is None:
        return None
    if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or classes < 2:
        raise UsageError(f"classes must be a whole number >= 2, not {classes!r}")
    return int(classes)


def parse_prior(prior) -> tuple[float, ...] | None:
    """``"0.7,0.2,0.1"``, ``"700,200,100"`` (counts) or a sequence -> frequencies summing to 1."""
    if prior is None:
        return None
    if isinstance(prior, str):
        parts = [p for p in prior.replace(";", ",").split(",") if p.strip()]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise UsageError(
                f"prior {prior!r} is not a list of numbers (e.g. 0.7,0.2,0.1 or class counts)"
            ) from None
    else:
        values = [float(v) for v in prior]
    if len(values) < 2 or any(not math.isfinite(v) or v < 0 for v in values) or sum(values) <= 0:
        raise UsageError(
            f"prior must hold two or more non-negative class frequencies or counts, not {prior!r}"
        )
    total = sum(values)
    return tuple(v / total for v in values)


def diagnose_curves(
    log,
    *,
    columns: Mapping[str, str] | Iterable[str] | None = None,
    run: str | None = None,
    classes: int | None = None,
    prior=None,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    severity: Mapping[str, str | Severity] | None = None,
    thresholds: Mapping[str, Mapping[str, float]] | None = None,
    fail_on: str | Severity = "error",
) -> Report:
    """Diagnose a training run from its log: the symptom on the curve, the step it began, and
    the usual causes in the order to check them.

    Parameters
    ----------
    log : path, DataFrame, list of dicts or GradientMonitor
        A CSV/TSV or JSON-lines log (one row per step or evaluation), a JSON array of records,
        a GradientMonitor's saved ``to_dict()``, a DataFrame, or a live GradientMonitor.
        Columns are recognised by name: step, epoch, train_loss (or loss), val_loss,
        grad_norm, lr, train_metric (train_acc), val_metric (val_acc).
    columns : mapping or list of "CANONICAL=NAME", optional
        Names datavet does not recognise: ``{"train_loss": "nll", "step": "it"}``.
    run : str, optional
        The run to diagnose in a log of several runs (a ``run``, ``run_id``, ``name`` or
        ``experiment`` column); such a log is refused without it.
    classes : int, optional
        The number of classes: the no-learning loss is ln C (C004 needs this or ``prior``).
    prior : sequence or str, optional
        Class frequencies or counts for imbalanced classes: the no-learning loss is their
        entropy.
    select, ignore : codes, prefixes or names, optional
        Curve rules to run / leave out (``"C002"``, ``"C00"``, ``"overfitting"``).
    severity : mapping, optional
        Per-rule severity overrides, e.g. ``{"C009": "info"}``.
    thresholds : mapping, optional
        Per-rule threshold overrides, e.g. ``{"C002": {"factor": 3}}``.
    fail_on : {"info", "warning", "error"}
        The severity at which ``report.exit_code()`` becomes 1.

    Returns
    -------
    Report
        Findings C001-C009 with outcomes; ``report.curves`` holds the chart data, the flagged
        steps and, per rule that fired, its likely causes with the check for each.

    Examples
    --------
    >>> import math, datavet
    >>> loss = [1.4 * 0.99**i for i in range(100)] + [3.0 * 1.5**i for i in range(20)]
    >>> report = datavet.diagnose_curves([{"step": i, "loss": v} for i, v in enumerate(loss)])
    >>> [(f.code, f.metrics["onset_step"]) for f in report.findings]
    [('C002', 100.0)]
    """
    started = time.perf_counter()
    curve_log = read_curves(log, columns=columns, run=run)
    classes = _classes(classes)
    prior = parse_prior(prior)
    if classes is not None and prior is not None and len(prior) != classes:
        raise UsageError(f"prior has {len(prior)} classes but classes={classes}")
    rules = select_curve_rules(select, ignore)
    levels: dict[str, Severity] = {}
    for key, value in (severity or {}).items():
        rule = find(key)
        if rule is None:
            raise UsageError(f"unknown curve rule {key!r}; `datavet rules` lists them")
        levels[rule.code] = Severity.parse(value)
    tuned: dict[str, dict[str, float]] = {}
    for key, numbers in (thresholds or {}).items():
        rule = find(key)
        if rule is None:
            raise UsageError(f"unknown curve rule {key!r}; `datavet rules` lists them")
        tuned[rule.code] = dict(numbers)
    # every rule's thresholds, selected or not: the shared analyses (divergence, spikes) use them
    instances = {
        r.code: r(severity=levels.get(r.code), thresholds=tuned.get(r.code)) for r in CURVE_RULES
    }
    ctx = CurveContext(
        log=curve_log,
        classes=classes,
        prior=prior,
        options={code: inst.options for code, inst in instances.items()},
    )
    marks, fired = [], []

    def keep_marks(rule, outcome) -> None:
        if outcome.status in (Status.PASSED, Status.FAILED):
            marks.extend(rule.marks)
        if outcome.status is Status.FAILED:
            fired.append(type(rule))

    findings, outcomes = run_rules([instances[r.code] for r in rules], ctx, after=keep_marks)
    duration = time.perf_counter() - started
    return Report(
        findings=findings,
        outcomes=outcomes,
        datasets={"log": curve_log.summary()},
        fail_on=Severity.parse(fail_on),
        notes=list(curve_log.notes),
        duration_s=duration if math.isfinite(duration) else None,
        curves=_payload(ctx, marks, fired),
    )


def _keep_rows(log: CurveLog, marks: list[dict]) -> np.ndarray:
    """Row positions for the charts: all of them, or per bucket the first row and the extremes
    of each series, plus every flagged and every non-finite step."""
    n = len(log)
    if n <= MAX_CHART_POINTS:
        return np.arange(n)
    keep = set()
    buckets = np.array_split(np.arange(n), MAX_CHART_POINTS // 5)  # <= 5 rows each
    for b in buckets:
        keep.add(int(b[0]))
        for name in ("train_loss", "grad_norm"):
            if not log.has(name):
                continue
            v = log.values[name][b]
            ok = np.isfinite(v) & log.logged[name][b]
            if ok.any():
                idx = b[ok]
                keep.add(int(idx[np.argmin(v[ok])]))
                keep.add(int(idx[np.argmax(v[ok])]))
    for name in SERIES:  # sparse series (validation) keep every logged row
        if log.has(name) and log.logged[name].sum() <= MAX_CHART_POINTS // 4:
            keep.update(int(i) for i in np.flatnonzero(log.logged[name]))
        if log.has(name):
            bad = np.flatnonzero(log.logged[name] & ~np.isfinite(log.values[name]))
            keep.update(int(i) for i in bad[:10])
    index = {float(s): i for i, s in enumerate(log.steps)}
    keep.update(index[float(m["step"])] for m in marks if float(m["step"]) in index)
    return np.array(sorted(keep))


def _payload(ctx: CurveContext, marks: list[dict], fired: list) -> dict:
    log = ctx.log
    rows = _keep_rows(log, marks)
    series: dict[str, list[float | None]] = {"step": [float(s) for s in log.steps[rows]]}
    nonfinite = []
    for name in SERIES:
        if not log.has(name):
            continue
        v, logged = log.values[name][rows], log.logged[name][rows]
        series[name] = [
            float(x) if ok and math.isfinite(x) else None for x, ok in zip(v.tolist(), logged)
        ]
        _, steps, values = log.points(name)
        bad = np.flatnonzero(~np.isfinite(values))
        for i in bad[:5]:
            x = float(values[i])
            word = "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
            nonfinite.append({"series": name, "step": float(steps[i]), "value": word})
    level = ctx.no_learning_level
    end = ctx.end_step()
    return {
        "source": log.source,
        "format": log.format,
        "rows": len(log),
        "step_from": log.step_from,
        "columns": dict(log.columns),
        "classes": ctx.classes,
        "prior": list(ctx.prior) if ctx.prior is not None else None,
        "no_learning_level": {"value": level[0], "why": level[1]} if level else None,
        "end_step": end if math.isfinite(end) else None,
        "points": len(rows),
        "series": series,
        "nonfinite": nonfinite,
        "marks": marks,
        "causes": {r.code: describe(r.causes) for r in fired},
    }

"""``datavet.preflight`` / ``datavet preflight``: the staged diagnosis as one run.

The stages, in order, each worth running only when the one before passed:

1. **data**: the audit's data rules (leaks, duplicates, label problems, broken features);
2. **baselines**: majority / prior / linear baselines; B001 no-signal (a linear model at chance,
   as with labels unrelated to the inputs) stops the run here;
3. **initial loss**: the untrained model's loss against theory, NaN/inf in the forward or
   backward pass (M001, M004, M005);
4. **overfit one batch**: a copy of the model trained on one batch (M002, with M003 to say
   why when a softmax is applied twice).

The run stops at the first stage with findings at or above ``fail_on`` (or a crashed rule); the
later stages are reported as not run, as is a stage whose every check was skipped. The audit
fits the baselines with the data rules; when the data stage fails, the report leaves out their
numbers and findings (its rules are skipped, with the reason), as the stage is reported. One report
holds every stage's verdict, findings and fixes; it renders as text, JSON and HTML like any
other report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from datavet.errors import InputError, UsageError
from datavet.findings import Severity, Status
from datavet.report import Report

STAGES = (
    ("data", "data audit"),
    ("baselines", "baselines"),
    ("initial_loss", "initial loss"),
    ("overfit", "overfit one batch"),
)
INITIAL_LOSS_PROBES = ("M001", "M004", "M005")
OVERFIT_PROBES = ("M002", "M003")


@dataclass
class PreflightReport(Report):
    """A :class:`datavet.Report` with ``stages``: per stage its verdict ("passed", "failed",
    "not run"), the codes of its findings and a one-line summary."""

    stages: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = super().to_dict()
        data["preflight"] = {"stages": self.stages}
        return data


def _stage_of(code: str) -> str:
    if code.startswith("B"):
        return "baselines"
    if code in INITIAL_LOSS_PROBES:
        return "initial_loss"
    if code.startswith("M"):
        return "overfit"
    return "data"


def _read_table(train, target: str | None):
    import pandas as pd

    if isinstance(train, pd.DataFrame):
        return train
    if isinstance(train, (str, Path)):
        path = Path(train)
        if not path.exists():
            raise InputError(str(train), "no such file")
        try:
            if path.suffix.lower() in (".csv", ".tsv"):
                return pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",")
            return pd.read_parquet(path)
        except Exception as exc:
            raise InputError(str(train), f"cannot read it as a table: {exc}") from None
    raise UsageError(
        "preflight builds the model's batch from a table: pass batch= for other train inputs"
    )


def batch_from_table(train, target: str, task: str | None, n: int, seed: int = 0):
    """(inputs, target): ``n`` seeded random rows of the numeric columns other than the target
    as a float32 (n, features) tensor; the target as class indices (classification) or a float
    (n, 1) column (regression)."""
    return _table_batch(train, target, task, n, seed)[0]


def _table_batch(train, target: str, task: str | None, n: int, seed: int = 0):
    """(the batch, a description of it for messages: its feature columns and classes)."""
    import numpy as np
    import torch

    df = _read_table(train, target)
    if target not in df.columns:
        raise InputError(str(train), f"no target column {target!r}")
    df = df.dropna(subset=[target])
    features = [c for c in df.columns if c != target and np.issubdtype(df[c].dtype, np.number)]
    if not features or not len(df):
        raise InputError(str(train), "no numeric feature column to build a batch from")
    rows = np.random.default_rng(seed).permutation(len(df))[: max(1, n)]
    part = df.iloc[np.sort(rows)]
    x = torch.tensor(part[features].to_numpy(dtype="float32", na_value=0.0))
    x = torch.nan_to_num(x)
    shown = ", ".join(map(str, features[:6])) + (" ..." if len(features) > 6 else "")
    about = {"features": len(features), "n_classes": None}
    about["text"] = (
        f"the batch built from the training table has {len(features)} numeric feature "
        f"column(s) ({shown}), so inputs of shape {tuple(x.shape)}"
    )
    if task == "regression":
        y = torch.tensor(part[target].to_numpy(dtype="float32")).reshape(-1, 1)
    else:
        import pandas as pd

        codes, classes = pd.factorize(df[target], sort=True)
        y = torch.tensor(codes[np.sort(rows)], dtype=torch.long)
        about["n_classes"] = len(classes)
        about["text"] += f", and {len(classes)} classes in {target!r}"
    return (x, y), about


def preflight(
    model,
    train,
    test=None,
    *,
    loss_fn: Callable,
    target: str | None = None,
    batch=None,
    batch_size: int = 32,
    task: str = "auto",
    optimizer_factory: Callable | None = None,
    fail_on: str | Severity = "error",
    severity: Mapping[str, str | Severity] | None = None,
    thresholds: Mapping[str, Mapping[str, float]] | None = None,
    seed: int = 0,
    **audit_options,
) -> PreflightReport:
    """Data audit -> baselines -> initial loss -> overfit one batch; stop at the first failure.

    Parameters
    ----------
    model : torch.nn.Module
        The untrained model (never changed: the probes train copies).
    train, test :
        What :func:`datavet.audit` takes (paths, DataFrames, ...).
    loss_fn : callable
        ``loss_fn(model(inputs), target)``, the loss your training uses.
    target : str, optional
        The label column (as for ``audit``).
    batch : (inputs, target), optional
        The batch the model stages use. Default: ``batch_size`` seeded random rows of ``train``'s
        numeric feature columns (float32, missing values as 0) and the target (class indices,
        or a float column for regression).
    fail_on : {"info", "warning", "error"}
        A stage fails, and the run stops, when its findings reach this severity. B001 no-signal
        counts as an error here (override with ``severity={"B001": "warning"}``): a network
        trained on labels a linear model cannot predict at all memorises noise.
    severity, thresholds :
        Per-rule / per-probe overrides, as for ``audit`` and ``probe``.
    **audit_options :
        Passed to :func:`datavet.audit` (``group=``, ``time=``, ``select=``, ...).

    Returns
    -------
    PreflightReport
        A Report (exit codes 0/1/2 as usual) whose ``stages`` lists every stage's verdict.
    """
    from datavet.api import audit
    from datavet.api.probes import probe

    started = time.perf_counter()
    fail_level = Severity.parse(fail_on)
    sev = {"B001": "error", **{k.upper(): v for k, v in (severity or {}).items()}}
    audit_sev = {k: v for k, v in sev.items() if not _is_probe(k)}
    probe_sev = {k: v for k, v in sev.items() if _is_probe(k)}
    tuned = dict(thresholds or {})
    audit_tuned = {k: v for k, v in tuned.items() if not _is_probe(k)}
    probe_tuned = {k: v for k, v in tuned.items() if _is_probe(k)}

    data = audit(
        train,
        test,
        target=target,
        task=task,
        fail_on=fail_level,
        severity=audit_sev,
        thresholds=audit_tuned,
        **audit_options,
    )
    findings = list(data.findings)
    outcomes = list(data.outcomes)
    stages: list[dict] = []
    stopped = None

    def close(key: str, title: str, found, outs, ran: bool = True) -> None:
        nonlocal stopped
        if not ran or stopped is not None:
            stages.append(
                {
                    "stage": key,
                    "title": title,
                    "verdict": "not run",
                    "codes": [],
                    "summary": f"not run: the {stopped} stage failed" if stopped else "not run",
                }
            )
            return
        bad = [f for f in found if f.severity >= fail_level]
        crashed = [o for o in outs if o.status is Status.CRASHED]
        ran_codes = [o.code for o in outs if o.status in (Status.PASSED, Status.FAILED)]
        # a stage whose every check was skipped proved nothing: not "passed"
        verdict = "failed" if bad or crashed else "passed" if ran_codes or not outs else "not run"
        summary = (
            f"{len(ran_codes)} check(s) ran; "
            + (
                f"{len(bad)} finding(s) at or above {fail_level.label}: "
                + ", ".join(sorted({f.code for f in bad}))
                if bad
                else f"{len(found)} finding(s) below {fail_level.label}"
            )
            + (f"; crashed: {', '.join(o.code for o in crashed)}" if crashed else "")
        )
        stages.append(
            {
                "stage": key,
                "title": title,
                "verdict": verdict,
                "codes": sorted({f.code for f in found}),
                "summary": summary,
            }
        )
        if verdict == "failed":
            stopped = title

    for key, title in STAGES[:2]:
        close(
            key,
            title,
            [f for f in data.findings if _stage_of(f.code) == key],
            [o for o in data.outcomes if _stage_of(o.code) == key],
        )
    baselines = data.baselines
    if stages[1]["verdict"] == "not run" and stopped is not None:
        # The audit fitted the baselines with the data rules, but a stage after a failed one
        # is not run: its numbers (scored on data that failed the audit) and its findings are
        # left out, and its rules are skipped with the reason, as the stage says.
        why = stages[1]["summary"]
        findings = [f for f in findings if _stage_of(f.code) != "baselines"]
        outcomes = [
            replace(o, status=Status.SKIPPED, reason=why, traceback=None, n_findings=0)
            if _stage_of(o.code) == "baselines" and o.status in (Status.PASSED, Status.FAILED)
            else o
            for o in outcomes
        ]
        baselines = None

    probes_detail = None
    notes = list(data.notes)
    if stopped is None:
        about = None  # the batch built from the table, described for messages
        if batch is None:
            if data.target is None:
                raise UsageError("preflight needs a target column to build the batch (--target)")
            batch, about = _table_batch(train, data.target, data.task, batch_size, seed)
        merged: dict = {}
        for key, title in STAGES[2:]:
            if stopped is not None:
                close(key, title, [], [])
                continue
            try:
                report = probe(
                    model,
                    batch,
                    loss_fn=loss_fn,
                    task=task if task != "auto" else (data.task or "auto"),
                    optimizer_factory=optimizer_factory,
                    select=list(INITIAL_LOSS_PROBES if key == "initial_loss" else OVERFIT_PROBES),
                    fail_on=fail_level,
                    severity=probe_sev or None,
                    thresholds=probe_tuned or None,
                    seed=seed,
                )
            except UsageError as exc:
                if about is None:
                    raise
                raise type(exc)(f"{exc} ({about['text']})") from None
            findings += report.findings
            outcomes += report.outcomes
            if probes_detail is None:
                probes_detail = report.probes
                notes += report.notes
                outputs = report.probes["model"]["n_classes"]
                if about and about["n_classes"] and outputs and outputs != about["n_classes"]:
                    notes.append(
                        f"the model outputs {outputs} classes but the target column has "
                        f"{about['n_classes']} in the training table: check the output layer's "
                        "size (the labels are numbered 0 to "
                        f"{about['n_classes'] - 1} in sorted order)"
                    )
            else:
                probes_detail["checks"].update(report.probes["checks"])
            merged.update(report.probes["checks"])
            close(key, title, report.findings, report.outcomes)
    else:
        for key, title in STAGES[2:]:
            close(key, title, [], [])
    notes.append("preflight: " + "; ".join(f"{s['title']} {s['verdict']}" for s in stages))
    if all(s["verdict"] == "passed" for s in stages):
        notes.append(
            "preflight passed every stage: train on the full data with a GradientMonitor, then "
            "`datavet curves` on the log"
        )
    return PreflightReport(
        findings=findings,
        outcomes=outcomes,
        datasets=data.datasets,
        fail_on=fail_level,
        target=data.target,
        task=data.task,
        task_reason=data.task_reason,
        baselines=baselines,
        notes=notes,
        duration_s=time.perf_counter() - started,
        ignored=data.ignored,
        probes=probes_detail,
        stages=stages,
    )


__all__ = ["PreflightReport", "batch_from_table", "preflight"]


def _is_probe(key: str) -> bool:
    """Whether ``key`` (a code or a name) is a model-probe rule's: its settings go to the
    probes, every other rule's to the data audit."""
    from datavet.rules import PROBES, find

    return find(key) in PROBES

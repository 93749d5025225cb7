"""Everything the rules read, gathered by the engine's passes: the profiles of both splits, the
row checks beside them, the task, the baselines and the notes on how the inputs were read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from datavet._later import Later
from datavet.engines.base import Engine, TableNeeds, TableScan, key_columns
from datavet.engines.plan import plan_tables
from datavet.errors import UsageError
from datavet.framework import needing, option_of
from datavet.pipeline.arguments import AuditArgs
from datavet.pipeline.baselines import fit_baselines
from datavet.pipeline.inputs import Inputs, resolve_columns, unlabelled_test_note
from datavet.pipeline.summary import input_notes, table_columns
from datavet.scan import Profile, ScanPlan
from datavet.scan.vectors import length_notes
from datavet.tasks import detect_task

if TYPE_CHECKING:
    from datavet.baselines import Baselines


@dataclass
class Evidence:
    profiles: dict[str, Profile]
    plan: ScanPlan
    target: Any  # str | None (mypy: an int target is a name once resolved)
    group: str | None
    time_column: str | None
    time_declared: bool
    id_columns: tuple[str, ...]
    columns: dict  # split -> (name, dtype, kind) of its columns, S004's view
    table: TableScan | None = None  # the table passes' results (None for tensors)
    task: str | None = None
    task_reason: str | None = None
    # being fitted on a thread of its own while the rules run (settle() waits for it)
    baselines: Baselines | Later[Baselines] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tensors(self) -> bool:
        return self.table is None

    def settle(self) -> None:
        """Wait for the evidence still being computed beside the rules (the baselines, the
        near-duplicate rows) and put the values in its place; an error the near-duplicate pass
        raised is raised here, as the other passes' are."""
        fitted = Later.now(self.baselines)
        if isinstance(self.baselines, Later) and fitted is not None and fitted.sampled:
            self.notes.append(
                f"baselines use a uniform sample of {fitted.train_rows:,} of "
                f"{fitted.sample_of:,} train rows"
            )
        self.baselines = fitted
        if self.table is not None:
            self.table.near = Later.now(self.table.near)


def gather(engine: Engine, inputs: Inputs, args: AuditArgs) -> Evidence:
    """Run the engine's passes over the inputs, then detect the task and fit the baselines."""
    rules = args.rules
    if inputs.tensors:
        run = engine.profile_tensors(
            inputs.train, inputs.test, sample_rows=args.sample_rows, max_samples=args.max_samples
        )
        target, group, time = run.target, None, None
        plan = ScanPlan(target=target, hash_columns=tuple(run.features))
        id_columns, time_column = key_columns(run.profiles["train"], target, None, None)
        notes = [run.target_note] if run.target_note else []
        notes += run.notes
        evidence = Evidence(
            run.profiles, plan, target, None, time_column, False, id_columns, run.columns
        )
    else:
        target, target_note, group, time = resolve_columns(inputs, args)
        _task_needs_target(args.task, target)  # before the passes, not after
        plan = plan_tables(inputs.train, inputs.test, target, args.sample_rows, group=group)
        needs = TableNeeds(
            keyless=needing(rules, "row_keys"),
            rows=needing(rules, "row_checks"),
            near=needing(rules, "near_hashes"),
            near_digits=int(option_of(args.auditors, "near_hashes", "digits", 6)),
            group=group,
            time=time,
        )
        table = engine.scan_tables(inputs.splits, plan, needs)
        notes = [target_note] if target_note else []
        unlabelled = unlabelled_test_note(inputs, target, args)
        notes += [unlabelled] if unlabelled else []
        notes += input_notes((inputs.train, inputs.test), plan)
        for split, profile in table.profiles.items():  # ragged or empty float vectors
            notes += length_notes(split, profile.columns.values())
        columns = {
            s: table_columns(src, plan.skip_columns)
            for s, src in inputs.splits.items()
            if src is not None
        }
        evidence = Evidence(
            table.profiles,
            plan,
            target,
            group,
            table.time_column,
            time is not None,
            table.id_columns,
            columns,
            table,
        )
    evidence.notes = notes
    if target is not None:  # then train has label statistics
        label = evidence.profiles["train"].label
        evidence.task, evidence.task_reason = detect_task(label, args.task)  # type: ignore[arg-type]
    _task_needs_target(args.task, target)
    # The baselines are the B rules' evidence: with every B rule deselected they are not fitted.
    if target is not None and args.baselines and needing(rules, "baselines"):
        _baselines(evidence, thread=args.workers != 1)
    return evidence


def _task_needs_target(task: str, target: str | None) -> None:
    if target is None and task != "auto":
        raise UsageError(f"--task {task} needs a target column (--target)")


def _baselines(evidence: Evidence, thread: bool) -> None:
    """Start fitting the baselines on a thread of their own (the rules that need none of them
    run meanwhile; :meth:`Evidence.settle` adds the sample's note once they are fitted)."""
    plan = evidence.plan
    keys = {c for c in (evidence.group, *evidence.id_columns) if c}
    features = [c for c in plan.hash_columns if c not in keys]
    left_out = [c for c in plan.hash_columns if c in keys]

    def fit() -> Baselines:
        fitted = fit_baselines(
            evidence.profiles, evidence.target, evidence.task or "auto", features
        )
        if left_out and fitted.skipped is None:
            fitted.notes.append(
                "left out of the linear model as group or ID-like columns (keys, not features): "
                + ", ".join(left_out)
            )
        return fitted

    evidence.baselines = Later(fit, name="datavet-baselines", thread=thread)

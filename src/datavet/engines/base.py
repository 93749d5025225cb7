"""The engine interface: every pass over the data goes through an :class:`Engine`.

``audit`` asks an engine for two things and nothing else:

- :meth:`Engine.scan_tables`: the table passes. The main pass folds each split into a Profile
  (:meth:`Engine.profile_tables`, the part each engine does its own way: batches on threads, Dask
  partitions, Spark tasks); then, when the selected rules need them, the row-key pass (S001/S002
  with order numbers and UUIDs left out) and the near-duplicate pass (S007/S008; the local engine
  folds it into the main pass when it can know the ID-like columns first).
- :meth:`Engine.profile_tensors`: the tensor pass (blocks of samples; engines that cannot run it
  refuse it with a UsageError).

The statistics are :mod:`datavet.scan`'s (pure, mergeable: per batch, then merged); an engine
decides only where batches are read and profiled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from datavet._later import Later
from datavet.errors import InputError, UsageError
from datavet.scan import Profile, ScanPlan
from datavet.scan.idlike import id_like_columns, row_key_columns
from datavet.scan.neardup import DIGITS, NearRows, fold_near, near_batch, near_pair
from datavet.scan.rowchecks import (
    RowChecks,
    checks_of,
    fold_keyless,
    keyless_batch,
    row_checks,
)
from datavet.sources import DEFAULT_BATCH_ROWS, TabularSource


@dataclass(frozen=True)
class TableNeeds:
    """What the selected rules need from the table passes besides the profiles."""

    keyless: bool = False  # S001/S002: rows hashed again with the row-key columns left out
    rows: bool = False  # S001-S003: the row checks, started on a thread once the main pass ends
    near: bool = False  # S007/S008: near-duplicate hashes, test rows older than train
    near_digits: int = DIGITS
    group: str | None = None  # the declared group column
    time: str | None = None  # the declared time column


@dataclass
class TableScan:
    """What the table passes found: the profiles and what the row rules read beside them."""

    plan: ScanPlan
    profiles: dict[str, Profile]
    # S001-S003: computed where the data lives (Dask), or being computed here on a thread of
    # their own from the main pass's hashes while the other passes and the rules run
    precomputed_rows: RowChecks | Later[RowChecks] | None = None
    id_columns: tuple[str, ...] = ()
    time_column: str | None = None
    row_keys: tuple[str, ...] = ()
    keyless: RowChecks | None = None
    # being computed on a thread of its own when the main pass folded the hashes in (the rules
    # that need none of it run meanwhile)
    near: dict[str, NearRows] | Later[dict[str, NearRows]] | None = None
    near_columns: tuple[str, ...] = ()


class Engine:
    """Runs the passes over the data. Subclasses implement :meth:`profile_tables` (and, where
    they can, :meth:`profile_tensors`); the second passes stream the sources in this process
    unless an engine does better."""

    name = "engine"

    def __init__(
        self,
        *,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        workers: int | None = None,
        progress: bool | None = None,
        scheduler: str | None = None,
    ):
        self.batch_rows = batch_rows
        self.workers = workers
        self.progress = progress
        self.scheduler = scheduler

    # --- the engine's own passes -----------------------------------------------------------

    def profile_tables(
        self, sources: dict[str, TabularSource], plan: ScanPlan, needs: TableNeeds
    ) -> tuple[dict[str, Profile], RowChecks | None, dict | None]:
        """The main pass: (a Profile per split, the row checks if computed where the data
        lives, the near-duplicate plan the pass folded in or None)."""
        raise NotImplementedError

    def profile_tensors(
        self, train, test=None, *, sample_rows: int, max_samples: int | None = None
    ):
        """The tensor pass (:class:`datavet.engines.tensors.TensorRun`)."""
        raise UsageError(
            f"engine {self.name!r} audits tables only; tensor inputs (NumPy, PyTorch) run on the "
            "local engine (engine='local', the default)"
        )

    # --- the second passes: streamed here unless an engine does better --------------------

    def near_rows(
        self,
        source: TabularSource,
        *,
        columns: list[str],
        exact_columns: list[str],
        as_number: frozenset[str],
        digits: int = DIGITS,
        time_column: str | None = None,
        time_before: int | None = None,
    ) -> NearRows:
        """Near-duplicate hashes of one split (and its rows older than ``time_before``)."""
        return fold_near(
            [
                near_batch(
                    batch,
                    offset,
                    columns=columns,
                    exact_columns=exact_columns,
                    as_number=as_number,
                    digits=digits,
                    time_column=time_column,
                    time_before=time_before,
                )
                for offset, batch in source.batches(self.batch_rows)
            ]
        )

    def keyless_rows(self, source, hashes, columns, shared, as_number, target=None):
        """One split's rows hashed again with its row-key columns left out (``SplitRows``)."""
        if hashes.spill is not None:  # on disk: positions and labels recomputed, not read back
            pos, labels = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        else:
            pos, _, labels = hashes.arrays()
        rebuild = len(pos) == 0  # the Dask and Spark engines keep no hashes on the driver
        parts = [
            keyless_batch(batch, offset, columns, shared, as_number, target, rebuild=rebuild)
            for offset, batch in source.batches(self.batch_rows)
        ]
        return fold_keyless(pos, labels, parts)

    # --- the table passes, composed --------------------------------------------------------

    def scan_tables(
        self, sources: dict[str, TabularSource | None], plan: ScanPlan, needs: TableNeeds
    ) -> TableScan:
        """Every table pass the rules need, in order: the main pass, then the row-key pass and
        the near-duplicate pass when they are needed and the main pass did not do them."""
        present = {s: src for s, src in sources.items() if src is not None}
        profiles, precomputed, near_guess = self.profile_tables(present, plan, needs)
        check_rows(present, profiles)
        id_columns, time_column = key_columns(
            profiles["train"], plan.target, needs.group, needs.time
        )
        out = TableScan(plan, profiles, precomputed, id_columns, time_column)
        thread = self.workers != 1
        if needs.rows or needs.near:
            # one array per field before any thread reads them (consolidating swaps the chunks)
            for profile in profiles.values():
                profile.hashes.consolidate()
        if needs.rows and precomputed is None:
            test = profiles.get("test")
            out.precomputed_rows = Later(
                partial(checks_of, with_labels=profiles["train"].label is not None),
                profiles["train"].hashes,
                test.hashes if test is not None else None,
                name="datavet-rows",
                thread=thread,
            )
        if needs.keyless:
            out.row_keys, out.keyless = self._keyless(present, profiles, plan, id_columns)
        if needs.near and "test" in present:
            keys = {c for c in (needs.group, *id_columns) if c}
            out.near_columns = tuple(
                c for c in plan.hash_columns if c not in keys and c != time_column
            )
            if near_guess == {
                "near_columns": out.near_columns,
                "near_digits": needs.near_digits,
                "time_column": time_column,
            }:  # the main pass computed them: the guess made before it holds
                # hashes spilled to disk are read back only where a near match can be
                out.near = Later(
                    near_pair,
                    profiles["train"],
                    profiles["test"],
                    name="datavet-near",
                    thread=thread,
                )
            else:
                out.near = self._near_pass(
                    present, profiles, plan, out.near_columns, time_column, needs.near_digits
                )
        return out

    def _near_pass(self, sources, profiles, plan, columns, time_column, digits):
        """The second pass: near-duplicate hashes of both splits, and test rows older than the
        newest train row."""
        newest = None
        if time_column is not None and time_column in profiles["train"].columns:
            span = profiles["train"].columns[time_column].time_range
            newest = span[1] if span else None
        return {
            split: self.near_rows(
                src,
                columns=list(columns),
                exact_columns=list(plan.hash_columns),
                as_number=plan.as_number,
                time_column=time_column if split == "test" else None,
                time_before=newest,
                digits=digits,
            )
            for split, src in sources.items()
        }

    def _keyless(self, sources, profiles, plan, id_columns):
        """S001/S002 again with the row-key columns left out: a row copied under a fresh key (an
        order number, a UUID) differs from its original only there. Returns (row keys left out,
        RowChecks) or ((), None) when there is no such column, or too few features remain."""
        keys = [c for c in row_key_columns(profiles["train"], id_columns) if c in plan.hash_columns]
        if not keys:
            return (), None
        split_rows = {}
        for split, src in sources.items():
            own = [n for n in src.schema.names if n != plan.target and n not in plan.skip_columns]
            columns = [n for n in own if n not in keys]
            shared = [n for n in plan.hash_columns if n not in keys]
            if len(shared) < 2 or len(columns) < 2:
                return (), None  # one feature left: equal values are no evidence of a copy
            split_rows[split] = self.keyless_rows(
                src, profiles[split].hashes, columns, shared, plan.as_number, plan.target
            )
        checks = row_checks(
            split_rows["train"],
            split_rows.get("test"),
            with_labels=profiles["train"].label is not None,
            keep_rows=True,
        )
        return tuple(keys), checks


def key_columns(train: Profile, target, group, time) -> tuple[tuple[str, ...], str | None]:
    """(the ID-like columns of train, the time column: the declared one, else the only
    date/time column if there is exactly one)."""
    id_columns = tuple(id_like_columns(train, exclude=(target or "", group or "")))
    if time is None:
        temporal = [c.name for c in train.columns.values() if c.kind == "temporal"]
        time = temporal[0] if len(temporal) == 1 else None
    return id_columns, time


def check_rows(sources: dict, profiles: dict[str, Profile]) -> None:
    """InputError for a split with no rows: nothing to audit."""
    for split, src in sources.items():
        if src is not None and profiles[split].rows == 0:
            raise InputError(src.name, "no data rows (only a header or an empty table)")

"""The inputs of an audit, opened: the train and test sources, the memory budget, and the
target, group and time columns found in them."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from datavet.errors import InputError, UsageError
from datavet.pipeline.arguments import AuditArgs
from datavet.sources import TabularSource, TensorSource, open_source, refuse_shared_pipe
from datavet.sources.base import TableSource
from datavet.sources.tensor_memory import as_table_arrays

AUTO_TARGETS = ("label", "target")


@dataclass
class Inputs:
    """The opened splits and the columns named in them."""

    train: Any  # TabularSource | TensorSource
    test: Any  # TabularSource | TensorSource | None
    engine: str  # the engine the inputs call for (a Spark DataFrame: "spark")
    target: str | int | None  # as asked; tables resolve it in :func:`resolve_columns`
    budget: object | None = None

    @property
    def tensors(self) -> bool:
        return isinstance(self.train, TensorSource) or isinstance(self.test, TensorSource)

    @property
    def splits(self) -> dict:
        return {"train": self.train, "test": self.test}


def open_inputs(train, test, args: AuditArgs) -> Inputs:
    """Open both splits (nothing is read yet beyond headers and metadata); with ``max_memory``,
    check the estimate first and count what is decoded as it streams."""
    from datavet.engines.spark import spark_inputs  # imports pyspark only for Spark inputs

    refuse_sparse(train, "train")
    refuse_sparse(test, "test")
    # (N, D) torch features: a table, as the same NumPy arrays are
    train = as_table_arrays(train, "train")
    test = as_table_arrays(test, "test")
    refuse_shared_pipe(train, test)
    engine, train, test = spark_inputs(args.engine, train, test)  # a Spark DataFrame: in place
    memory = None
    if args.max_memory is not None:
        from datavet.engines.local import default_workers
        from datavet.sources import budget

        limit = budget.parse_size(args.max_memory)
        budget.check(
            [("train", train), ("test", test)],
            limit,
            batch_rows=args.batch_rows,
            sample_rows=args.sample_rows,
        )
        memory = budget.Budget(
            limit,
            batch_rows=args.batch_rows,
            sample_rows=args.sample_rows,
            workers=default_workers() if args.workers is None else args.workers,
        )
    target = args.target
    opts: dict[str, Any] = {
        "target": target,
        "inputs": args.inputs,
        "channel_axis": args.channel_axis,
    }
    if args.encoding is not None:
        opts["encoding"] = args.encoding
    if args.delimiter is not None:
        opts["delimiter"] = args.delimiter
    train_src = open_source(train, role="train", **opts)
    if (
        target is None
        and isinstance(train_src, TabularSource)
        and getattr(train_src, "label", None)
    ):
        # an (X, y) pair: y is the target, and a test pair's y takes the same name
        target = opts["target"] = getattr(train_src, "label", None)
    test_src = open_source(test, role="test", **opts) if test is not None else None
    if test_src is None and test is None:
        half = getattr(train_src, "test_half", None)  # x_train/y_train/x_test/y_test in one file
        test_src = half() if half is not None else None
    for src in (train_src, test_src):
        if memory is not None and isinstance(src, TabularSource):
            src.budget = memory  # counts what is decoded as it streams
    out = Inputs(train_src, test_src, engine, target, memory)
    if out.tensors and (args.group is not None or args.time is not None):
        raise UsageError("group and time columns apply to tables, not tensor inputs")
    if args.time is not None and isinstance(train_src, TableSource):
        _parse_times(train_src, test_src, args.time)
    return out


def refuse_sparse(data, role: str) -> None:
    """A scipy sparse matrix (alone, or as the X of an ``(X, y)`` pair: what a
    ``TfidfVectorizer`` hands on) is a UsageError that says so and names the conversion; NumPy
    would otherwise read it as a 0-d array of one object."""
    parts = data if isinstance(data, tuple) else (data,)
    for part in parts:
        module = type(part).__module__ or ""
        if module == "scipy.sparse" or module.startswith("scipy.sparse."):
            shape = "x".join(str(n) for n in getattr(part, "shape", ()))
            raise UsageError(
                f"cannot audit a scipy sparse matrix ({type(part).__name__}, {shape}) as {role}: "
                "sparse input is not supported; pass a dense array, X.toarray() (mind its "
                "memory: every zero is stored)"
            )


def _parse_times(train: TableSource, test, spec) -> None:
    """A data frame's text time column (``pd.read_csv`` leaves dates as text) read as ISO-8601
    dates/times in both splits, as a CSV reader reads them, with one note that says so."""
    time, _ = resolve_column(spec, train, role="time")
    if time is None:
        return
    failed = {}
    for split, src in (("train", train), ("test", test)):
        if isinstance(src, TableSource):
            n = src.parse_times(time)
            if n is not None:
                failed[split] = n
    if not failed:
        return
    bad = ", ".join(f"{split} {n:,}" for split, n in failed.items() if n)
    train.notes.append(
        f"time column {time!r} held text: read as ISO-8601 dates/times"
        + (f" (values that are not, read as missing: {bad})" if bad else "")
    )


def resolve_columns(inputs: Inputs, args: AuditArgs) -> tuple:
    """(target, the note saying how it was found, group, time) of a table audit: each one a
    column of train, or InputError with the closest name."""
    target, note = resolve_column(inputs.target, inputs.train)
    group = time = None
    if args.group is not None:
        group, _ = resolve_column(args.group, inputs.train, role="group")
    if args.time is not None:
        time, _ = resolve_column(args.time, inputs.train, role="time")
    return target, note, group, time


def unlabelled_test_note(inputs: Inputs, target: str | None, args: AuditArgs) -> str | None:
    """The note saying that a test split without the target column is audited as unlabelled
    (a supported case: overlap, drift and schema still apply), else None. Said where the user
    reads the report, not only in the skipped rules' reasons."""
    test = inputs.test
    if target is None or test is None or target in test.schema.names:
        return None
    how = "named" if args.target is not None else "found"
    return (
        f"test split {test.name} has no target column {target!r} (the {how} target): audited "
        "as unlabelled; the rules that compare labels (L003, L004) are skipped"
    )


def resolve_column(target: Any, source: Any, role: str = "target") -> tuple[str | None, str | None]:
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
        maybe = f"; did you mean {hint!r}? " if hint else ". "
        raise InputError(source.name, f"{role} column {target!r} not found{maybe}Columns: {listed}")
    return target, None


def _closest(name: str, names: list[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None

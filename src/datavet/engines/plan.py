"""The scan plan of a table audit, decided from the schemas of both splits before any pass."""

from __future__ import annotations

from datavet.scan import ScanPlan
from datavet.scan.columns import column_kind
from datavet.scan.idlike import index_columns
from datavet.sources import TabularSource


def plan_tables(
    train: TabularSource,
    test: TabularSource | None,
    target: str | None,
    sample_rows: int,
    group: str | None = None,
) -> ScanPlan:
    """What every pass computes: the features both splits share (the row hashes' columns),
    the columns numeric in one split and text in the other, the pandas index left out."""
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

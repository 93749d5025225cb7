"""What the report says of each split: the dataset summaries (columns, label, time range,
tensor layout), the drift histograms, and the notes on how the inputs were read."""

from __future__ import annotations

from typing import Any

from datavet.rules import in_section
from datavet.scan import Profile, ScanPlan
from datavet.scan.columns import column_kind
from datavet.scan.tensors import tensor_summary
from datavet.sources import TabularSource


def input_notes(splits, plan: ScanPlan | None) -> list[str]:
    """The notes of the table sources (how they were read, their row order, their own), then
    the pandas index left out; in that order."""
    tables = [src for src in splits if isinstance(src, TabularSource)]
    notes = [src.read_note for src in tables if src.read_note]
    notes += [src.order_note for src in tables if src.order_note]
    notes += [note for src in tables for note in getattr(src, "notes", ())]
    note = index_note(plan) if plan is not None else None
    if note:
        notes.append(note)
    return notes


def index_note(plan: ScanPlan) -> str | None:
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


def _time_range(profile: Profile, column: str | None) -> dict | None:
    from datavet.auditors.time_order_leakage import _unit, _when

    stats = profile.columns.get(column) if column else None
    if stats is None or stats.tmin is None or stats.tmax is None:
        return None
    unit = _unit(stats.dtype)
    return {"column": column, "min": _when(stats.tmin, unit), "max": _when(stats.tmax, unit)}


def dataset_summary(profile: Profile, time_column: str | None = None) -> dict[str, Any]:
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
    out: dict[str, Any] = {
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


def table_columns(source: TabularSource, skip=frozenset()) -> tuple[tuple[str, str, str], ...]:
    return tuple(
        (f.name, str(f.type), column_kind(f.type)) for f in source.schema if f.name not in skip
    )


def drift_histograms(datasets: dict, profiles: dict, findings) -> None:
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

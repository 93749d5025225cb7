"""Engines own every pass over the data: the table scan, the tensor pass and the second passes
(row keys, near duplicates). :func:`get_engine` names one; see :mod:`datavet.engines.base` for
the interface. The statistics they fold are :mod:`datavet.scan`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from datavet.errors import UsageError

if TYPE_CHECKING:
    from datavet.engines.base import Engine

ENGINES = ("local", "dask", "spark")


def get_engine(
    name: str,
    *,
    batch_rows: int | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    scheduler: str | None = None,
) -> Engine:
    """The engine called ``name`` (one of :data:`ENGINES`), or UsageError naming the choices.
    Dask and Spark are imported only when chosen."""
    cls: type[Engine]
    if name == "local":
        from datavet.engines.local import LocalEngine as cls
    elif name == "dask":
        from datavet.engines.dask import DaskEngine as cls
    elif name == "spark":
        from datavet.engines.spark import SparkEngine as cls
    else:
        choices = f"{', '.join(ENGINES[:-1])} or {ENGINES[-1]}"
        raise UsageError(f"unknown engine {name!r:.80} (choose {choices})")
    kwargs = {} if batch_rows is None else {"batch_rows": batch_rows}
    return cls(workers=workers, progress=progress, scheduler=scheduler, **kwargs)

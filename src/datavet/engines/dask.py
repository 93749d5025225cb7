"""The Dask engine: profile each partition where it lives, tree-reduce the profiles.

Partitions are Parquet row groups (or Arrow IPC record batches, or a whole CSV file, or slices of
an in-memory table). Each is profiled on a worker into a Profile; profiles are merged in a tree,
in row order, so the result equals the local engine's. Row hashes never travel to one place:
each partition splits its hashes by hash prefix into buckets, and one task per bucket computes
overlap, duplicates and conflicts for that bucket (a row and its copy always share a bucket);
only the small per-bucket results come back. The Profile is the only other thing that crosses
machines.

Without a scheduler address a ``LocalCluster`` is started, bound to 127.0.0.1 with no dashboard
(a Dask scheduler unpickles what it receives: never expose one on a shared network without TLS).
"""

from __future__ import annotations

import logging
import operator
import warnings
from contextlib import contextmanager

import pyarrow as pa

from datavet.engines.base import Engine, TableNeeds
from datavet.errors import DatavetError, EngineError, UsageError
from datavet.scan import Profile, ScanPlan
from datavet.scan.hashing import RowHashes
from datavet.scan.rowchecks import RowChecks, SplitRows, row_checks
from datavet.sources import DEFAULT_BATCH_ROWS, TableSource, TabularSource
from datavet.sources.csv import CsvSource
from datavet.sources.frames import DaskFrameSource, from_pandas
from datavet.sources.fs import FileSetSource
from datavet.sources.parquet import ArrowIpcSource, ParquetSource

BUCKET_BITS = 4  # 16 buckets for the row-identity checks
FAN_IN = 4  # profiles merged per reduction task


CONNECT_TIMEOUT_S = 5  # a scheduler that does not answer within this is reported, not awaited
_LOGGERS = ("distributed", "tornado", "asyncio")


@contextmanager
def _quiet_logs():
    """Keep the cluster's own logging (a failed task's traceback printed by its worker,
    "connection refused" retries) off the user's terminal: a failure is one line, from here."""
    saved = {}
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        saved[name] = logger.level
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def check_address(scheduler) -> str:
    """A scheduler address as Dask reads it (``tcp://host:8786``), or UsageError."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    expected = "expected an address such as tcp://127.0.0.1:8786"
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise UsageError(f"--scheduler {scheduler!r:.80}: {expected}")
    problem = None
    try:
        scheme, location = parse_address(scheduler, strict=True)
        if scheme not in backends:
            problem = f"unknown scheme {scheme!r}; known: {', '.join(sorted(backends))}"
        elif scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        problem = str(exc)
    if problem is not None:
        raise UsageError(
            f"--scheduler {scheduler!r:.80} is not a Dask address ({problem}); {expected}"
        )
    return scheduler


@contextmanager
def connect(scheduler: str | None, workers: int = 2):
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - the dask extra is missing
        raise UsageError(
            "the Dask engine needs the dask extra: pip install 'datavet[dask]'"
        ) from exc
    if scheduler is not None:
        check_address(scheduler)
        try:
            client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as exc:  # refused, unreachable, no answer
            raise EngineError(
                f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT_S} s "
                f"({_first_line(exc)}); is it running, and is the address right?"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    with warnings.catch_warnings():
        # With no dashboard the scheduler still serves health checks over HTTP on 127.0.0.1,
        # on port 8787 or, when that is taken, any free port: not worth a warning.
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
    with cluster, Client(cluster) as client:
        yield client


def _descriptors(source: TabularSource, client, batch_rows: int) -> list[tuple]:
    """(kind, payload, first row) for every partition of ``source``, in row order."""
    out = []
    offset = 0
    if isinstance(source, ParquetSource):
        # one task per row group; a piece names its file on the source's filesystem (absolute
        # local paths, or an object store every worker reaches)
        for piece, rows in source.pieces():
            out.append(("parquet", piece, offset))
            offset += rows
        return out
    if isinstance(source, DaskFrameSource):
        # a Dask DataFrame: each partition is computed and profiled on the cluster
        parts = client.compute(source.frame.to_delayed())
        sizes = client.gather(client.map(len, parts))
        for part, rows in zip(parts, sizes, strict=True):
            out.append(("pandas", (part, source.schema), offset))
            offset += rows
        return out
    if isinstance(source, ArrowIpcSource) and not source.stream:
        reader = source._reader()
        for i in range(reader.num_record_batches):
            out.append(("ipc", (source, i), offset))
            offset += reader.get_batch(i).num_rows
        return out
    if isinstance(source, (CsvSource, ArrowIpcSource, FileSetSource)):
        if getattr(source, "filesystem", None) is None and hasattr(source, "path"):
            source.path = source.path.resolve()
        return [("source", source, 0)]
    table = (
        source.table
        if isinstance(source, TableSource)
        else pa.Table.from_batches([b for _, b in source.batches(batch_rows)], schema=source.schema)
    )
    step = max(batch_rows, -(-table.num_rows // 8))
    for start in range(0, max(table.num_rows, 1), step):
        chunk = client.scatter(table.slice(start, step), hash=False)
        out.append(("table", chunk, start))
    return out


def _batches(kind: str, payload, offset: int, batch_rows: int):
    if kind == "parquet":
        from datavet.errors import InputError

        try:
            for batch in payload.batches(batch_rows):
                yield offset, batch
                offset += batch.num_rows
        except (pa.ArrowException, OSError) as exc:
            name = getattr(payload, "name", "input")
            raise InputError(name, f"cannot be read on a worker ({_first_line(exc)})") from None
        return
    if kind == "ipc":
        source, i = payload
        batch = source._reader().get_batch(i)
        for start in range(0, batch.num_rows, batch_rows):
            piece = batch.slice(start, batch_rows)
            yield offset + start, piece
        return
    if kind == "pandas":
        frame, schema = payload
        table = from_pandas(frame, "<partition>").table
        if table.schema.remove_metadata() != schema.remove_metadata():
            table = table.cast(schema)
        for batch in table.to_batches(max_chunksize=batch_rows):
            yield offset, batch
            offset += batch.num_rows
        return
    if kind == "table":
        for batch in payload.to_batches(max_chunksize=batch_rows):
            yield offset, batch
            offset += batch.num_rows
        return
    raise EngineError(f"unknown Dask partition kind {kind!r}")  # pragma: no cover


def plan_for(source: TabularSource, plan: ScanPlan) -> ScanPlan:
    """``plan`` with the sample's cut-off key when the split's row count is known up front:
    each partition then keeps (and ships) only the sample rows that stay in the final sample,
    about ``sample_rows x partition rows / split rows`` of them, instead of up to
    ``sample_rows`` each (the profile a partition ships shrinks as the split grows)."""
    from dataclasses import replace

    from datavet.engines.local import _exact_rows
    from datavet.scan.reservoir import Reservoir

    rows = _exact_rows(source)
    if plan.sample_cut is not None or rows is None:
        return plan
    return replace(plan, sample_cut=Reservoir.cut(rows, plan.sample_rows, plan.seed))


def _profile_part(kind, payload, offset, plan: ScanPlan, split, batch_rows, bits):
    """Runs on a worker: the partition's Profile (without its hashes) and its hash buckets."""
    if kind == "source":
        from datavet.engines.local import profile_source

        profile = profile_source(
            payload, plan, split, batch_rows=batch_rows, workers=1, progress=False
        )
    else:
        profile = Profile(split=split)
        for start, batch in _batches(kind, payload, offset, batch_rows):
            profile = profile.merge(Profile.of_batch(batch, start, plan, split))
    buckets = SplitRows.of(profile.hashes).bucket(bits)
    profile.hashes = RowHashes()
    return profile, buckets


def _merge_all(*profiles: Profile) -> Profile:
    out = profiles[0]
    for p in profiles[1:]:
        out = out.merge(p)
    return out


def _concat(parts: list[SplitRows]) -> SplitRows:
    import numpy as np

    if not parts:
        return SplitRows(
            np.zeros(0, np.int64),
            np.zeros((0, 2), np.uint64),
            np.zeros(0, np.uint64),
            np.zeros((0, 2), np.uint64),
        )
    pos = np.concatenate([p.pos for p in parts])
    order = np.argsort(pos, kind="stable")
    return SplitRows(
        pos[order],
        np.concatenate([p.rows for p in parts])[order],
        np.concatenate([p.labels for p in parts])[order],
        np.concatenate([p.shared for p in parts])[order],
    )


def _bucket_checks(train_parts, test_parts, with_labels: bool, has_test: bool) -> RowChecks:
    test = _concat(test_parts) if has_test else None
    return row_checks(_concat(train_parts), test, with_labels=with_labels)


def profile_splits(
    sources: dict[str, TabularSource],
    plan: ScanPlan,
    *,
    scheduler: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    bucket_bits: int = BUCKET_BITS,
) -> tuple[dict[str, Profile], RowChecks]:
    """Profiles of every split and the row-identity results, computed on a Dask cluster.

    Errors raised on a worker for the data (InputError) come back as they are; a cluster that
    fails (a worker killed, a lost connection) is an EngineError naming the scheduler."""
    with _quiet_logs():
        try:
            return _profile_splits(sources, plan, scheduler, batch_rows, bucket_bits)
        except DatavetError:
            raise
        except Exception as exc:
            from distributed import KilledWorker
            from distributed.comm import CommClosedError

            if isinstance(exc, (KilledWorker, CommClosedError, OSError, TimeoutError)):
                where = scheduler or "the local Dask cluster"
                raise EngineError(
                    f"the Dask engine failed on {where}: {_first_line(exc)}"
                ) from None
            raise


class DaskEngine(Engine):
    """Profiles each partition on a Dask cluster (the one at ``scheduler``, or a LocalCluster
    on 127.0.0.1) and tree-reduces the profiles; S001-S003 are computed per hash bucket on the
    workers. The second passes (row keys, near duplicates) stream in this process. Tables only:
    tensor inputs are refused with a UsageError."""

    name = "dask"

    def profile_tables(self, sources, plan: ScanPlan, needs: TableNeeds):
        profiles, rows = profile_splits(
            sources, plan, scheduler=self.scheduler, batch_rows=self.batch_rows
        )
        return profiles, rows, None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _profile_splits(sources, plan, scheduler, batch_rows, bucket_bits):
    with connect(scheduler) as client:
        profiles, buckets = {}, {}
        for split, source in sources.items():
            split_plan = plan_for(source, plan)
            futures = []
            split_buckets = [[] for _ in range(1 << bucket_bits)]
            for kind, payload, offset in _descriptors(source, client, batch_rows):
                part = client.submit(
                    _profile_part,
                    kind,
                    payload,
                    offset,
                    split_plan,
                    split,
                    batch_rows,
                    bucket_bits,
                    pure=False,
                )
                futures.append(client.submit(operator.getitem, part, 0))
                pieces = client.submit(operator.getitem, part, 1)
                for b in range(1 << bucket_bits):
                    split_buckets[b].append(client.submit(operator.getitem, pieces, b))
            while len(futures) > 1:
                futures = [
                    client.submit(_merge_all, *futures[i : i + FAN_IN])
                    for i in range(0, len(futures), FAN_IN)
                ]
            profiles[split] = futures[0]
            buckets[split] = split_buckets
        has_test = "test" in sources
        with_labels = plan.target is not None
        checks = [
            client.submit(
                _bucket_checks,
                buckets["train"][b],
                buckets["test"][b] if has_test else [],
                with_labels,
                has_test,
            )
            for b in range(1 << bucket_bits)
        ]
        gathered = client.gather({**profiles, "_checks": checks})
    rows = RowChecks()
    for part in gathered.pop("_checks"):
        rows = rows.merge(part)
    out = {}
    for split, profile in gathered.items():
        profile.source = sources[split].name
        profile.format = sources[split].format
        out[split] = profile
    return out, rows

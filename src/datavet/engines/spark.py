"""The Spark engine: profile each partition on the executors, merge the profiles on the driver.

Each Spark partition is profiled where it lives, with ``DataFrame.mapInArrow``: the partition's
Arrow batches go through ``Profile.of_batch`` exactly as in the local engine. Row positions are
global: a first, cheap job counts the rows of every partition, so each partition knows the
position of its first row. The profiles come back to the driver serialised and are merged there
in partition order (a tree of pairwise merges), so the result equals the local engine's.

Row hashes never travel to one place: each partition splits its hashes by hash prefix into
16 buckets, Spark shuffles them by bucket, and one task per bucket computes overlap,
duplicates and conflicts for that bucket (a row and its copy always share a bucket); only the
per-bucket counts and example rows come back.

Parquet and CSV paths are read by Spark itself (``spark.read.parquet``), one file after
another in the order the local engine reads them; a Spark DataFrame is audited in place.
pyspark is imported only when this engine runs: ``import datavet`` does not need it.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from datavet.engines.base import Engine
from datavet.errors import InputError, UsageError
from datavet.scan import Profile, ScanPlan
from datavet.scan.hashing import RowHashes
from datavet.scan.reservoir import Reservoir
from datavet.scan.rowchecks import RowChecks, SplitRows
from datavet.sources import DEFAULT_BATCH_ROWS, TableSource, TabularSource
from datavet.sources.csv import CsvSource
from datavet.sources.parquet import ParquetSource

BUCKET_BITS = 4  # 16 buckets for the row-identity checks, as in the Dask engine
EXTRA = 'the Spark engine needs the spark extra: pip install "datavet[spark]"'
_PROFILE = -1  # the bucket number of a partition's profile row


def is_spark_frame(obj: object) -> bool:
    """A pyspark DataFrame (classic or Spark Connect), recognised without importing pyspark."""
    cls = type(obj)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pyspark.sql")


def _pyspark():
    try:
        import pyspark.sql
    except ImportError:
        raise UsageError(f"{EXTRA} (pyspark is not installed)") from None
    return pyspark.sql


def require_java() -> None:
    """Spark runs on a JVM: refuse early, in one line, when there is none."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return
    if shutil.which("java"):
        return
    raise UsageError(
        "the Spark engine needs Java 17 or newer: no java on PATH and JAVA_HOME is not set "
        "(install a JRE, e.g. apt-get install openjdk-17-jre-headless; "
        'the Python side is pip install "datavet[spark]")'
    )


_MASTER_WAIT_S = 5.0


def check_master(master: str) -> None:
    """Refuse a master URL Spark cannot use in one line and a few seconds: Spark itself prints
    Java stack traces for a bad scheme and retries an unreachable standalone master for 80 s."""
    import socket
    from urllib.parse import urlsplit

    if master.startswith("local") or master == "yarn" or master.startswith("k8s://"):
        return
    if not master.startswith("spark://"):
        raise UsageError(
            f"could not start Spark ({master}): not a Spark master URL "
            "(local[*], spark://host:port, yarn, k8s://...)"
        )
    reason = "no host"
    for address in master[len("spark://") :].split(","):  # standalone masters with standbys
        try:
            url = urlsplit("spark://" + address)
            host, port = url.hostname, url.port or 7077
        except ValueError as exc:  # a port that is not a number
            reason = str(exc)
            continue
        if not host:
            reason = "no host"
            continue
        try:
            with socket.create_connection((host, port), _MASTER_WAIT_S):
                return
        except OSError as exc:
            reason = exc.strerror or str(exc)
    raise UsageError(f"could not start Spark ({master}): no master answers there ({reason})")


@contextmanager
def connect(master: str | None = None, session=None):
    """The SparkSession to run on: ``session`` (a DataFrame's own), the active one, or a new one
    (``master``, default ``local[*]``; no UI, bound to 127.0.0.1 when local), stopped at the end."""
    sql = _pyspark()
    if session is None:
        session = sql.SparkSession.getActiveSession()
    if session is not None:
        yield session
        return
    require_java()
    master = master or "local[*]"
    check_master(master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this interpreter
    builder = (
        sql.SparkSession.builder.master(master)
        .appName("datavet")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(1 << BUCKET_BITS))
        .config("spark.sql.caseSensitive", "true")  # 'Age' and 'age' are two columns, as here
        .config("spark.log.level", "OFF")  # failures reach the user as datavet's one line
    )
    if master.startswith("local"):
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: a wrong master, an old Java
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"could not start Spark ({master}): {first}") from None
    try:
        yield spark
    finally:
        spark.stop()


@contextmanager
def job_errors(sources):
    """Spark job failures the user can fix, as one line instead of a Java and Python traceback:
    executors whose Python lacks datavet, a CSV value that does not fit the type inferred from
    the file's first block (the local engine widens the column and reads again)."""
    try:
        yield
    except Exception as exc:
        text = str(exc)
        if "No module named 'datavet'" in text:
            raise UsageError(
                "Spark's Python workers cannot import datavet: set PYSPARK_PYTHON to a Python "
                "that has datavet (this version) installed, on every executor"
            ) from None
        cast = re.search(r"\[CAST_INVALID_INPUT\] (.*?) because", text)
        csv = [s for s in sources if isinstance(s, CsvSource)]
        if cast and csv:
            raise InputError(
                csv[0].name if len(csv) == 1 else "CSV input",
                f"{cast.group(1)}: a value does not fit the column's type inferred from the "
                "first block; the Spark engine cannot widen it (--engine local can)",
            ) from None
        raise


@dataclass
class SparkSource(TabularSource):
    """A Spark DataFrame, audited in place. Its batches (read only by the passes that need the
    rows once more on the driver: near duplicates, rows without their key columns) come one
    partition at a time, as Arrow."""

    frame: Any = None

    def open(self) -> SparkSource:
        # the types the executors see, but ML vectors (VectorUDT) as lists of numbers
        arrow = _positional(self.frame).limit(0).toArrow().schema
        self.schema = pa.schema(
            [
                pa.field(name, pa.list_(pa.float64()) if _is_vector(f.dataType) else t.type)
                for name, f, t in zip(self.frame.columns, self.frame.schema.fields, arrow)
            ]
        )
        self.check_schema()
        return self

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        frame = _positional(self.frame).mapInArrow(_serialise_batches, "payload binary")
        with job_errors([self]):
            for row in frame.toLocalIterator(prefetchPartitions=True):
                with pa.ipc.open_stream(bytes(row[0])) as reader:
                    for batch in reader:
                        yield _conform(batch, self.schema)


def _is_vector(spark_type) -> bool:
    """A Spark ML vector column (``pyspark.ml.linalg.VectorUDT``, dense or sparse)."""
    return type(spark_type).__name__ == "VectorUDT"


def _positional(frame):
    """``frame`` with its columns named by position (``_0``, ``_1``...): Spark resolves names
    without case by default, so 'Age' and 'age' would clash in a session datavet does not own.
    The executors give the batches their names back (``_conform``)."""
    return frame.toDF(*[f"_{i}" for i in range(len(frame.columns))])


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch as Spark gives it, in the source's names and the types the local engine reads:
    dictionary (categorical) columns, which Spark has not, encoded again; ML vectors (Arrow
    structs of type, size, indices, values) as lists of numbers."""
    columns = []
    for column, field in zip(batch.columns, schema):
        if column.type != field.type:
            if pa.types.is_struct(column.type) and pa.types.is_list(field.type):
                column = _dense(column)
            elif pa.types.is_dictionary(field.type):
                column = column.cast(field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=schema.names)


def _dense(vectors: pa.StructArray) -> pa.Array:
    """Spark ML vectors as lists of doubles: dense ones are their values, sparse ones are
    spread out to their size."""
    kind, size, indices, values = vectors.flatten()
    if not pc.any(pc.equal(kind, 0)).as_py():  # no sparse vector
        return values.cast(pa.list_(pa.float64()))
    rows = values.to_pylist()
    for i in pc.indices_nonzero(pc.equal(kind, 0)).to_pylist():
        dense = [0.0] * size[i].as_py()
        for j, v in zip(indices[i].as_py(), rows[i]):
            dense[j] = v
        rows[i] = dense
    return pa.array(rows, pa.list_(pa.float64()))


def _serialise_batches(batches):
    for batch in batches:
        if batch.num_rows == 0:
            continue
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        yield pa.RecordBatch.from_pydict(
            {"payload": pa.array([sink.getvalue().to_pybytes()], pa.binary())}
        )


def spark_inputs(engine: str, train, test):
    """Route Spark DataFrames to this engine: (engine, train, test), with each DataFrame wrapped
    in a :class:`SparkSource`. Other inputs pass through untouched."""
    frames = [x for x in (train, test) if is_spark_frame(x)]
    if not frames:
        return engine, train, test
    if engine not in ("local", "spark"):
        raise UsageError(f"a Spark DataFrame is audited by the Spark engine, not {engine!r}")
    _pyspark()

    def wrap(data, role):
        if not is_spark_frame(data):
            return data
        return SparkSource(name=f"<{role} Spark DataFrame>", format="spark", frame=data).open()

    return "spark", wrap(train, "train"), wrap(test, "test")


def _frame(spark, source: TabularSource, batch_rows: int):
    """The Spark DataFrame holding ``source``'s rows, in the local engine's row order, with its
    columns named by position (``_positional``)."""
    if isinstance(source, SparkSource):
        return _positional(source.frame)
    if isinstance(source, ParquetSource) and _local(source.filesystem):
        _same_but_case(spark, source)
        return _positional(_union([_file(spark, source, i) for i in range(len(source.files))]))
    if isinstance(source, CsvSource) and source.filesystem is None:
        return _csv(spark, source)
    if isinstance(source, TableSource):
        return _positional(spark.createDataFrame(source.table))
    raise UsageError(
        f"{source.name}: the Spark engine reads local Parquet and CSV paths and in-memory "
        "tables; read this input with spark.read (e.g. spark.read.parquet('s3a://...')) and "
        "pass the DataFrame"
    )


def _file(spark, source: ParquetSource, i: int):
    """The ``i``-th file of ``source`` in its columns, with its Hive partition values (from
    the directory names) as constant columns, as the local engine reads it."""
    from pyspark.sql import functions
    from pyspark.sql.pandas.types import from_arrow_type

    values = source.partition_values[i]
    columns = []
    for field in source.schema:
        if field.name in source.partition_schema.names:
            t = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
            value = functions.lit(values.get(field.name)).cast(from_arrow_type(t))
            columns.append(value.alias(field.name))
        else:
            columns.append(_col(field.name))
    return spark.read.parquet(source.files[i]).select(*columns)


def _same_but_case(spark, source: TabularSource) -> None:
    """Parquet and CSV columns are read by name: in a session that resolves names without case (not
    datavet's own), two names that differ only in case cannot be told apart. Refuse them."""
    if spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true":
        return
    seen: dict[str, str] = {}
    for name in source.schema.names:
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise UsageError(
                f"{source.name}: columns {other!r} and {name!r} differ only in case, and this "
                "Spark session resolves names without case: set spark.sql.caseSensitive=true, "
                "or read the file with spark.read and rename one"
            )


def _local(filesystem) -> bool:
    import pyarrow.fs as pafs

    return filesystem is None or isinstance(filesystem, pafs.LocalFileSystem)


def _col(name: str):
    from pyspark.sql import functions

    return functions.col("`" + name.replace("`", "``") + "`")


def _union(frames):
    out = frames[0]
    for frame in frames[1:]:  # a union keeps partitions in order: the files' order
        out = out.unionByName(frame, allowMissingColumns=True)
    return out


def _csv(spark, source: CsvSource):
    """The CSV file read by Spark as text, with the local reader's missing-value tokens ("NA",
    "null", "N/A"...) made null and each column cast to the type the local engine infers (no
    second inference: the report would otherwise differ in types). Spark's CSV reader knows
    one null token only, so it parses nothing itself."""
    from pyspark.sql import functions
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StringType, StructField, StructType

    _same_but_case(spark, source)
    frame = spark.read.csv(
        str(os.path.abspath(source.path)),
        schema=StructType([StructField(n, StringType()) for n in source.schema.names]),
        header=True,
        sep=source.delimiter,
        encoding=source.encoding,
        mode="FAILFAST",
        multiLine=True,
    )
    tokens = list(source._options()[2].null_values)
    columns = []
    for i, field in enumerate(source.schema):
        text = _col(field.name)
        value = functions.when(~text.isin(tokens), text)
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            value = value.cast(from_arrow_type(field.type))
        columns.append(value.alias(f"_{i}"))
    return frame.select(*columns)


def _count(batches):
    from pyspark import TaskContext

    rows = sum(b.num_rows for b in batches)
    part = TaskContext.get().partitionId()
    yield pa.RecordBatch.from_pydict(
        {"part": pa.array([part], pa.int32()), "rows": pa.array([rows], pa.int64())}
    )


def _rechunk(batches, batch_rows: int):
    """Spark's Arrow batches (10,000 rows by default) regrouped into ``batch_rows``-row ones."""
    held: list[pa.RecordBatch] = []
    n = 0
    for batch in batches:
        while batch.num_rows:
            take = min(batch.num_rows, batch_rows - n)
            held.append(batch.slice(0, take))
            n += take
            batch = batch.slice(take)
            if n == batch_rows:
                yield _one(held)
                held, n = [], 0
    if n:
        yield _one(held)


def _one(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


_PARTS = "split string, part int, bucket int, rows long, payload binary"


def _profiler(
    split: str,
    schema: pa.Schema,
    offsets: dict[int, int],
    plan: ScanPlan,
    batch_rows: int,
    bits: int,
):
    def run(batches):
        """Runs on an executor: the partition's Profile (without its hashes) and its buckets."""
        from pyspark import TaskContext

        part = TaskContext.get().partitionId()
        offset = start = offsets.get(part, 0)
        profile = Profile(split=split)
        for batch in _rechunk(batches, batch_rows):
            batch = _conform(batch, schema)
            profile = profile.merge(Profile.of_batch(batch, offset, plan, split))
            offset += batch.num_rows
        out = [(_PROFILE, offset - start, None)]
        if profile.rows:
            for b, piece in enumerate(SplitRows.of(profile.hashes).bucket(bits)):
                out.append((b, len(piece), pickle.dumps(piece, protocol=5)))
        profile.hashes = RowHashes()
        out[0] = (_PROFILE, out[0][1], pickle.dumps(profile, protocol=5))
        yield pa.RecordBatch.from_pydict(
            {
                "split": pa.array([split] * len(out), pa.string()),
                "part": pa.array([part] * len(out), pa.int32()),
                "bucket": pa.array([b for b, _, _ in out], pa.int32()),
                "rows": pa.array([n for _, n, _ in out], pa.int64()),
                "payload": pa.array([p for _, _, p in out], pa.binary()),
            }
        )

    return run


def _checker(with_labels: bool):
    def run(key, train: pa.Table, test: pa.Table | None = None) -> pa.Table:
        """Runs on an executor, once per bucket: the bucket's row checks from all partitions'
        pieces. The profiles (bucket -1) pass through to the driver unchanged."""
        from datavet.engines.dask import _bucket_checks

        bucket = key[0].as_py()
        if bucket == _PROFILE:
            return pa.concat_tables([t for t in (train, test) if t is not None])
        pieces = {
            name: [pickle.loads(p) for p in t.column("payload").to_pylist()]
            for name, t in (("train", train), ("test", test))
            if t is not None
        }
        checks = _bucket_checks(
            pieces["train"], pieces.get("test", []), with_labels, test is not None
        )
        return pa.table(
            {
                "split": pa.array([""], pa.string()),
                "part": pa.array([-1], pa.int32()),
                "bucket": pa.array([bucket], pa.int32()),
                "rows": pa.array([0], pa.int64()),
                "payload": pa.array([pickle.dumps(checks, protocol=5)], pa.binary()),
            }
        )

    return run


def _tree_merge(profiles: list[Profile]) -> Profile:
    """Merge in order, pairwise, level by level (as the Dask engine's reduction tree)."""
    while len(profiles) > 1:
        profiles = [
            profiles[i].merge(profiles[i + 1]) if i + 1 < len(profiles) else profiles[i]
            for i in range(0, len(profiles), 2)
        ]
    return profiles[0]


def profile_splits(
    sources: dict[str, TabularSource],
    plan: ScanPlan,
    *,
    master: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    bucket_bits: int = BUCKET_BITS,
) -> tuple[dict[str, Profile], RowChecks]:
    """Profiles of every split and the row-identity results, computed by Spark."""
    own = next((s.frame.sparkSession for s in sources.values() if isinstance(s, SparkSource)), None)
    with connect(master, own) as spark, job_errors(sources.values()):
        parts, counts = {}, {}
        for split, source in sources.items():
            frame = _frame(spark, source, batch_rows)
            counts[split] = rows = {
                r["part"]: r["rows"]
                for r in frame.mapInArrow(_count, "part int, rows long").collect()
            }
            offsets, total = {}, 0
            for part in sorted(rows):
                offsets[part] = total
                total += rows[part]
            split_plan = plan if plan.sample_cut is not None else _with_cut(plan, total)
            parts[split] = frame.mapInArrow(
                _profiler(split, source.schema, offsets, split_plan, batch_rows, bucket_bits),
                _PARTS,
            ).groupBy("bucket")
        # One job: every partition is profiled and bucketed in the map stage of each split (so a
        # task's partition number is its partition's); the buckets meet in the reduce stage.
        check = _checker(plan.target is not None)
        if "test" in parts:
            done = parts["train"].cogroup(parts["test"]).applyInArrow(check, _PARTS)
        else:
            done = parts["train"].applyInArrow(lambda key, t: check(key, t), _PARTS)
        rows = done.collect()
    result = RowChecks()
    profiles: dict[str, Profile] = {}
    for split, source in sources.items():
        mine = sorted((r for r in rows if r["split"] == split), key=lambda r: r["part"])
        if {r["part"]: r["rows"] for r in mine} != counts[split]:
            raise UsageError(
                f"{source.name}: the DataFrame gave other rows when read a second time (its plan "
                "is not deterministic): persist() or checkpoint() it first"
            )
        profile = _tree_merge([pickle.loads(r["payload"]) for r in mine])
        profile.source = source.name
        profile.format = source.format
        profiles[split] = profile
    for row in sorted((r for r in rows if r["bucket"] >= 0), key=lambda r: r["bucket"]):
        result = result.merge(pickle.loads(row["payload"]))
    return profiles, result


class SparkEngine(Engine):
    """Profiles each partition in a Spark task (the session at ``scheduler``, a Spark master
    URL, or a local one) and tree-merges the profiles on the driver; S001-S003 are computed per
    hash bucket in Spark. The second passes stream in this process. Tables only: tensor inputs
    are refused with a UsageError."""

    name = "spark"

    def profile_tables(self, sources, plan: ScanPlan, needs):
        profiles, rows = profile_splits(
            sources, plan, master=self.scheduler, batch_rows=self.batch_rows
        )
        return profiles, rows, None


def _with_cut(plan: ScanPlan, rows: int) -> ScanPlan:
    from dataclasses import replace

    return replace(plan, sample_cut=Reservoir.cut(rows, plan.sample_rows, plan.seed))


__all__ = [
    "SparkEngine",
    "SparkSource",
    "connect",
    "is_spark_frame",
    "profile_splits",
    "spark_inputs",
]

"""The frames people hold: polars, Arrow streams, pyarrow datasets, Hugging Face datasets and
Dask DataFrames audit to the same findings as the pandas DataFrame of the same data; what is
not accepted is refused with a message naming what is, and the conversion."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pds
import pytest

import datavet
from datavet.errors import UsageError
from datavet.sources import open_source
from datavet.sources.arrays import TensorSource

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
TRAIN, TEST = SAMPLE / "planted_train.parquet", SAMPLE / "planted_test.parquet"


def findings(report):
    return sorted((f.code, f.split, f.columns, f.n_affected, f.message) for f in report.findings)


@pytest.fixture(scope="module")
def frames():
    train, test = pd.read_parquet(TRAIN), pd.read_parquet(TEST)
    return train, test, findings(datavet.audit(train, test, target="label"))


class Stream:
    """A library we have never heard of that speaks the Arrow PyCapsule stream interface."""

    def __init__(self, table: pa.Table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


CONVERT = {
    "polars": pl.from_pandas,
    "polars-lazy": lambda df: pl.from_pandas(df).lazy(),
    "arrow-stream": lambda df: Stream(pa.Table.from_pandas(df, preserve_index=False)),
    "pyarrow-dataset": lambda df: pds.dataset(pa.Table.from_pandas(df, preserve_index=False)),
    "hf-dataset": lambda df: datasets.Dataset.from_pandas(df, preserve_index=False),
    # an index mapping (select / filter / shuffle) is read through it, in its order
    "hf-dataset-indexed": lambda df: datasets.Dataset.from_pandas(df, preserve_index=False).filter(
        lambda row: True
    ),
    "hf-iterable": lambda df: datasets.Dataset.from_pandas(
        df, preserve_index=False
    ).to_iterable_dataset(num_shards=2),
}


@pytest.mark.parametrize("kind", sorted(CONVERT))
def test_each_frame_gives_the_findings_of_pandas(frames, kind):
    train, test, expected = frames
    convert = CONVERT[kind]
    report = datavet.audit(convert(train), convert(test), target="label")
    assert findings(report) == expected
    assert report.datasets["train"]["rows"] == len(train)


def test_a_lazyframe_is_streamed_in_batches_never_collected_whole(monkeypatch):
    lf = pl.from_pandas(pd.read_parquet(TRAIN)).lazy()

    def refuse(*args, **kwargs):
        raise AssertionError("LazyFrame.collect() was called: the query was run whole")

    monkeypatch.setattr(pl.LazyFrame, "collect", refuse)
    source = open_source(lf)
    sizes = [b.num_rows for _, b in source.batches(100)]
    assert sum(sizes) == 400 and len(sizes) >= 4
    assert source.num_rows is None  # not run to count its rows either


def test_a_hugging_face_iterable_dataset_with_missing_values_audits():
    # it used to take the torch path: "TypeError: must be real number, not NoneType"
    ds = datasets.Dataset.from_dict(
        {"x": [1.0, None, 3.0] * 10, "s": ["a", "b", None] * 10, "label": [0, 1, 0] * 10}
    )
    report = datavet.audit(ds.to_iterable_dataset(), target="label")
    nan = {f.columns: f.n_affected for f in report.findings if f.code == "V001"}
    assert nan == {("x",): 10, ("s",): 10}


def test_a_hugging_face_dataset_hands_over_its_arrow_table_without_a_copy():
    ds = datasets.Dataset.from_dict({"x": np.arange(1000.0), "label": np.arange(1000) % 2})
    source = open_source(ds)
    column = ds.data.table.column("x").chunk(0)
    assert source.table.column("x").chunk(0).buffers()[1].address == column.buffers()[1].address


def test_hugging_face_media_columns_are_left_out_with_a_reason():
    png = {"bytes": b"\x89PNG\r\n", "path": None}
    table = pa.table(
        {
            "img": pa.array([png] * 40, pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            "x": np.r_[np.arange(39.0), np.nan],
            "label": np.arange(40) % 2,
        }
    )
    ds = datasets.Dataset(table).cast_column("img", datasets.Image())
    report = datavet.audit(ds, target="label")
    assert [c["name"] for c in report.datasets["train"]["columns"]] == ["x"]
    assert any("'img' (Image)" in n and "left out" in n for n in report.notes)
    assert [f.columns for f in report.findings if f.code == "V001"] == [("x",)]


def test_a_hugging_face_array_feature_takes_the_tensor_path():
    rng = np.random.default_rng(0)
    features = datasets.Features(
        {
            "pixels": datasets.Array3D((1, 4, 4), "float32"),
            "label": datasets.ClassLabel(names=["a", "b"]),
        }
    )
    ds = datasets.Dataset.from_dict(
        {"pixels": rng.integers(0, 256, (64, 1, 4, 4)).astype("float32"), "label": [0, 1] * 32},
        features=features,
    )
    assert isinstance(open_source(ds), TensorSource)
    report = datavet.audit(ds)
    assert report.target == "label"
    assert "T001" in {f.code for f in report.findings}  # raw 0..255 pixels


def test_a_dask_dataframe_chooses_the_dask_engine(frames, monkeypatch):
    import dask.dataframe as dd
    from distributed import LocalCluster

    import datavet.engines.dask as engine

    calls = []
    real = engine.profile_splits
    monkeypatch.setattr(engine, "profile_splits", lambda *a, **k: calls.append(1) or real(*a, **k))
    train, test, expected = frames
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        report = datavet.audit(
            dd.from_pandas(train, npartitions=3),
            dd.from_pandas(test, npartitions=2),
            target="label",
            scheduler=cluster.scheduler_address,
        )
    assert calls == [1]
    assert findings(report) == expected


def test_a_dask_dataframe_on_the_local_engine_is_read_a_partition_at_a_time(frames):
    import dask.dataframe as dd

    train, test, expected = frames
    report = datavet.audit(
        dd.from_pandas(train, npartitions=3),
        dd.from_pandas(test, npartitions=2),
        target="label",
        engine="local",
    )
    assert findings(report) == expected


class Frame:
    def to_pandas(self):  # pragma: no cover - never called
        raise AssertionError


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (object(), "pass a path"),
        (Frame(), "convert it with Frame.to_pandas()"),
        (datasets.DatasetDict({"train": datasets.Dataset.from_dict({"x": [1]})}), "ds['train']"),
        ([1, 2, 3], "pandas.DataFrame(data)"),
    ],
)
def test_what_is_not_accepted_is_refused_with_the_conversion(data, says):
    with pytest.raises(UsageError) as err:
        datavet.audit(data)
    text = str(err.value)
    assert says in text
    # the message tells Hugging Face Datasets apart from torch Datasets
    assert "Hugging Face Dataset" in text and "torch tensors, Datasets" in text

"""Tensor-shaped inputs that used to slip through: tensors inside DataFrame cells, ragged and
empty embedding vectors, Hugging Face IterableDatasets of arrays, object arrays inside an
``.npz``, the Keras layout (``x_train``, ``y_train``, ``x_test``, ``y_test``) and ``(N, C, T)``
audio."""

from __future__ import annotations

import json

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import datavet
from datavet.cli import main
from datavet.errors import InputError, UsageError
from datavet.scan.columns import ColumnStats
from datavet.scan.tensor_layout import resolve_layout
from datavet.sources.arrays import open_tensor
from datavet.sources.frames import from_hf_iterable, from_pandas

from .conftest import by_code, codes

# --- tensors and arrays inside DataFrame cells --------------------------------------------------


def _kinds(report) -> dict:
    columns = json.loads(report.to_json())["datasets"]["train"]["columns"]
    return {c["name"]: c["kind"] for c in columns}


def test_a_column_of_torch_tensors_is_a_vector_column_and_its_nan_and_inf_are_found():
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    emb = [torch.randn(8) for _ in range(200)]
    emb[20][3] = float("nan")
    emb[30][1] = float("inf")
    emb[40] = torch.randn(8, requires_grad=True)  # a tensor of a model's graph: detached
    frame = pd.DataFrame({"emb": emb, "label": rng.integers(0, 2, 200)})
    report = datavet.audit(frame, target="label", baselines=False)
    assert _kinds(report)["emb"] == "vector"
    (nan,) = by_code(report, "V001")
    (inf,) = by_code(report, "V002")
    assert (nan.columns, nan.examples, inf.columns, inf.examples) == (
        ("emb",),
        (20,),
        ("emb",),
        (30,),
    )
    assert "(row 20, element 3)" in nan.message


def test_bfloat16_and_matrix_tensors_and_other_arrays_become_vectors():
    class Jaxish:  # another library's array: NumPy reads it through __array__
        def __init__(self, values):
            self.values = values

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.values, dtype=dtype)

    frame = pd.DataFrame(
        {
            "bf16": [torch.ones(4, dtype=torch.bfloat16) * i for i in range(4)],
            "matrix": [torch.full((2, 3), float(i)) for i in range(4)],
            "other": [Jaxish([1.0, float(i)]) for i in range(4)],
            "mixed": [torch.ones(2), [1.0, None], np.zeros(2), (3, 4)],
        }
    )
    table = from_pandas(frame, "<t>").table
    assert table.column("bf16").to_pylist()[2] == [2.0] * 4
    assert table.column("matrix").to_pylist()[1] == [1.0] * 6  # a matrix per row, row-major
    assert table.column("other").to_pylist()[3] == [1.0, 3.0]
    mixed = table.column("mixed").to_pylist()
    assert mixed[0] == [1.0, 1.0] and np.isnan(mixed[1][1]) and mixed[3] == [3.0, 4.0]
    assert all(pa.types.is_large_list(t) for t in table.schema.types)


def test_one_number_tensors_are_a_numeric_column():
    # list(tensor) gives 0-d tensors: a label column built that way holds numbers, not text
    frame = pd.DataFrame({"x": np.arange(6.0), "y": list(torch.tensor([0, 1, 2, 0, 1, 2]))})
    source = from_pandas(frame, "<t>")
    assert source.table.column("y").type == pa.int64()
    assert source.table.column("y").to_pylist() == [0, 1, 2, 0, 1, 2]


def test_a_list_column_with_a_string_in_a_row_is_text_with_a_note_naming_the_row():
    rng = np.random.default_rng(0)
    rows = [list(rng.standard_normal(4)) for _ in range(50)]
    rows[3][1] = float("nan")
    rows[7][2] = "x"
    frame = pd.DataFrame({"emb": rows, "label": rng.integers(0, 2, 50)})
    report = datavet.audit(frame, target="label", baselines=False)
    assert _kinds(report)["emb"] == "string"
    (note,) = [n for n in report.notes if "'emb'" in n]
    assert "row 7" in note and "'x'" in note and "read as text" in note
    # a row that is not a list at all is named the same way
    rows[7] = "n/a"
    source = from_pandas(pd.DataFrame({"emb": rows}), "<t>")
    assert any("row 7 holds 'n/a'" in n for n in source.notes)


def test_text_and_tuples_of_text_get_no_vector_note():
    frame = pd.DataFrame({"a": ["x", 1, 2.5], "b": [("p", "q"), ("r", "s"), ("t", 1)]})
    assert from_pandas(frame, "<t>").notes == []


# --- ragged and empty vectors -------------------------------------------------------------------


def _ragged_rows() -> list[list[float]]:
    rows = [[float(v) for v in np.random.default_rng(i).standard_normal(8)] for i in range(200)]
    rows[10] = rows[10][:5]
    rows[11] = []
    return rows


def test_an_empty_float_vector_counts_as_a_missing_vector(tmp_path):
    path = tmp_path / "ragged.parquet"
    table = pa.table(
        {
            "emb": pa.array(_ragged_rows(), pa.list_(pa.float64())),
            "label": [i % 2 for i in range(200)],
        }
    )
    pq.write_table(table, path)
    report = datavet.audit(str(path), target="label", baselines=False)
    (nan,) = by_code(report, "V001")
    assert (nan.columns, nan.examples, nan.n_affected) == (("emb",), (11,), 1)
    column = json.loads(report.to_json())["datasets"]["train"]["columns"][0]
    assert (column["null_rows"], column["empty_rows"], column["min_length"]) == (1, 1, 5)


def test_ragged_float_vectors_get_a_note_with_the_length_range_and_the_rows():
    from datavet.scan.vectors import length_notes

    arr = pa.array(_ragged_rows(), pa.list_(pa.float64()))
    # two batches, merged as the scan merges them
    stats = ColumnStats.of("emb", arr.slice(0, 100), 0).merge(
        ColumnStats.of("emb", arr.slice(100), 100)
    )
    whole = ColumnStats.of("emb", arr, 0)
    assert (
        stats.vector.lengths
        == whole.vector.lengths
        == {5: (1, (10,)), 0: (1, (11,)), 8: (198, (0, 1, 2, 3, 4))}
    )
    (note,) = length_notes("train", [stats])
    assert "'emb'" in note and "0 to 8 elements" in note and "198 rows have 8" in note
    assert "rows 10 (5 elements), 11 (0 elements)" in note
    assert "1 empty vector counted as missing" in note
    # vectors of one length: no note
    same = ColumnStats.of("emb", pa.array([[1.0, 2.0]] * 5), 0)
    assert length_notes("train", [same]) == []


def test_ragged_and_empty_token_id_lists_are_normal():
    from datavet.scan.vectors import length_notes

    ids = pa.array([[1, 2, 3], [4], [], [5, 6]] * 10, pa.list_(pa.int64()))
    stats = ColumnStats.of("tokens", ids, 0)
    assert stats.missing == 0 and stats.vector.empty_rows == 0
    assert length_notes("train", [stats]) == []


def test_many_lengths_are_counted_within_bounds():
    from datavet.scan.vectors import length_notes

    rows = [[0.5] * (i % 100 + 1) for i in range(1000)]
    stats = ColumnStats.of("emb", pa.array(rows, pa.list_(pa.float64())), 0)
    (note,) = length_notes("train", [stats])
    assert "1 to 100 elements" in note and "more than 32 different lengths" in note
    assert len(stats.vector.lengths) <= 32


# --- Hugging Face IterableDataset of arrays -------------------------------------------------------


def test_an_iterable_dataset_of_arrays_takes_the_tensor_path_like_a_dataset():
    rng = np.random.default_rng(0)
    img = (rng.random((200, 3, 16, 16)) * 255).round().astype(np.float32)
    lab = rng.integers(0, 3, 200)
    test = img[:20].copy()
    test[:10] = np.clip(test[:10] + 1, 0, 255)  # brightened copies: T002
    test[3, 1, 2, 2] = np.nan
    features = datasets.Features(
        {
            "pixel_values": datasets.Array3D(shape=(3, 16, 16), dtype="float32"),
            "label": datasets.ClassLabel(num_classes=3),
        }
    )
    ds = datasets.Dataset.from_dict({"pixel_values": img, "label": lab.tolist()}, features=features)
    dt = datasets.Dataset.from_dict(
        {"pixel_values": test, "label": lab[:20].tolist()}, features=features
    )

    def seen(report):
        return sorted(
            (f.code, f.split, f.columns, f.examples, f.n_affected) for f in report.findings
        )

    mapped = datavet.audit(ds, dt, baselines=False)
    streamed = datavet.audit(
        ds.to_iterable_dataset(num_shards=2), dt.to_iterable_dataset(), baselines=False
    )
    assert "T002" in codes(streamed) and seen(streamed) == seen(mapped)
    (nan,) = by_code(streamed, "V001")
    assert nan.columns == ("channel 1",) and nan.examples == (3,)
    source = from_hf_iterable(ds.to_iterable_dataset(), "<it>", channel_axis="none")
    assert source.info().sample_shape == (3, 16, 16) and source.label == "label"
    assert source.channel_axis == "none"


# --- .npz ---------------------------------------------------------------------------------------


def test_an_object_member_of_an_npz_is_refused_as_objects_not_as_truncated(tmp_path, capsys):
    path = tmp_path / "obj.npz"
    x = np.random.default_rng(0).random((30, 1, 8, 8)).astype("f4")
    np.savez(path, x=x, y=np.array(["a"] * 30, dtype=object))
    with pytest.raises(InputError, match=r"\[y\]: refused: the array holds Python objects"):
        open_tensor(str(path))
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "refused: the array holds Python objects" in err and "truncated" not in err


@pytest.fixture
def keras_npz(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((300, 1, 16, 16)).astype(np.float32)
    xt = rng.random((50, 1, 16, 16)).astype(np.float32)
    xt[0, 0, 0, 0] = np.nan
    y, yt = rng.integers(0, 3, 300), rng.integers(0, 3, 50)
    keras = tmp_path / "keras.npz"
    np.savez(keras, x_train=x, y_train=y, x_test=xt, y_test=yt)
    plain = tmp_path / "xy_plus_test.npz"
    np.savez(plain, x=x, y=y, x_test=xt, y_test=yt)
    return keras, plain


def test_a_keras_npz_is_read_as_train_and_test(keras_npz, capsys):
    keras, _ = keras_npz
    train = open_tensor(str(keras))
    assert (train.num_rows, train.label) == (300, "y")
    assert any("train is 'x_train' with labels 'y_train'" in n for n in train.notes)
    test = train.test_half()
    assert (test.num_rows, test.label, test.format) == (50, "y", "npz")
    report = datavet.audit(train, test, baselines=False)
    (nan,) = by_code(report, "V001")
    assert (nan.split, nan.examples) == ("test", (0,))
    assert "S001" not in codes(report)
    # the same file as the test split gives its test half, even when --inputs names x_train
    for keys in ([], ["--inputs", "x_train", "--target", "y_train"]):
        args = ["audit", str(keras), "--test", str(keras), "--no-baselines", *keys]
        assert main(args) == 1
        out = capsys.readouterr().out
        assert "V001" in out and "S001" not in out


def test_arrays_left_out_of_an_npz_are_named(keras_npz):
    _, plain = keras_npz
    report = datavet.audit(str(plain), baselines=False)
    (note,) = [n for n in report.notes if "not audited" in n]
    assert "'x_test', 'y_test'" in note
    assert open_tensor(str(plain)).test_half() is None


def test_a_keras_dict_in_memory_is_read_the_same_way():
    rng = np.random.default_rng(1)
    data = {
        "X_train": rng.random((60, 1, 8, 8)).astype(np.float32),
        "y_train": rng.integers(0, 2, 60),
        "X_test": rng.random((20, 1, 8, 8)).astype(np.float32),
        "y_test": rng.integers(0, 2, 20),
    }
    train = open_tensor(data)
    assert train.num_rows == 60 and train.test_half().num_rows == 20
    assert open_tensor(data, role="test").num_rows == 20


# --- (N, C, T) audio ----------------------------------------------------------------------------


@pytest.mark.parametrize("channels", [1, 2])
def test_mono_and_stereo_audio_read_channels_first(channels):
    x = (0.1 * np.random.default_rng(0).standard_normal((60, channels, 16000))).astype(np.float32)
    x[7, channels - 1, 5] = np.nan
    layout = resolve_layout(x.shape[1:], "float32")
    assert (layout.channel_axis, layout.kind, layout.n_channels) == (0, "sequence", channels)
    report = datavet.audit(x, baselines=False)
    (nan,) = by_code(report, "V001")
    assert nan.columns == (f"channel {channels - 1}",) and nan.examples == (7,)


def test_channel_axis_errors_name_the_python_argument_and_the_flag():
    with pytest.raises(UsageError) as huge:
        datavet.audit(np.zeros((10, 20, 3000), np.float32))
    with pytest.raises(UsageError) as bad:
        resolve_layout((3, 8, 8), "float32", "x")
    for exc in (huge, bad):
        assert "channel_axis=" in str(exc.value) and "--channel-axis" in str(exc.value)


def test_ragged_parquet_vectors_are_noted_and_empty_ones_named_in_v001(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [[float(v) for v in np.random.default_rng(i).standard_normal(8)] for i in range(200)]
    rows[10] = rows[10][:5]
    rows[11] = []
    rows[12] = None
    path = tmp_path / "ragged.parquet"
    table = pa.table(
        {"emb": pa.array(rows, pa.list_(pa.float64())), "label": [i % 2 for i in range(200)]}
    )
    pq.write_table(table, path)
    report = datavet.audit(path, target="label", baselines=False)
    (note,) = [n for n in report.notes if "different lengths" in n]
    assert "0 to 8 elements" in note and "rows 10 (5 elements), 11 (0 elements)" in note
    (v,) = [f for f in report.findings if f.code == "V001"]
    assert v.examples == (11, 12)
    assert "1 null row (no vector) and 1 empty vector (no elements)" in v.message
    assert v.metrics["empty_rows"] == 1 and v.metrics["null_rows"] == 2


def test_keras_layout_npz_alone_is_audited_as_train_and_test(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((300, 1, 16, 16)).astype(np.float32)
    xt = rng.random((50, 1, 16, 16)).astype(np.float32)
    xt[0, 0, 0, 0] = np.nan
    path = tmp_path / "keras.npz"
    y, yt = rng.integers(0, 3, 300), rng.integers(0, 3, 50)
    np.savez(path, x_train=x, y_train=y, x_test=xt, y_test=yt)
    report = datavet.audit(path, baselines=False)
    assert report.datasets["train"]["rows"] == 300 and report.datasets["test"]["rows"] == 50
    (v,) = [f for f in report.findings if f.code == "V001"]
    assert v.split == "test" and v.examples == (0,)
    assert not [f for f in report.findings if f.code == "S001"]


def test_an_endless_hugging_face_stream_of_arrays_is_capped(monkeypatch):
    hd = pytest.importorskip("datasets")
    from datavet.engines import tensors

    rng = np.random.default_rng(0)
    features = hd.Features(
        {
            "pixel_values": hd.Array3D(shape=(1, 8, 8), dtype="float32"),
            "label": hd.ClassLabel(num_classes=2),
        }
    )
    ds = hd.Dataset.from_dict(
        {"pixel_values": rng.random((50, 1, 8, 8)).astype(np.float32), "label": [0, 1] * 25},
        features=features,
    )
    stream = ds.to_iterable_dataset().repeat(None)  # never ends
    monkeypatch.setattr(tensors, "DEFAULT_MAX_SAMPLES", 300)
    report = datavet.audit(stream, baselines=False)
    assert report.datasets["train"]["rows"] == 300
    assert any("capped: only the first 300 samples" in n for n in report.notes)

"""Tensor sources: .npy, .npz, .pt, arrays, tensors, Datasets and DataLoaders.

Every file is read without unpickling; bad inputs are refused with exit 2 and a message that
says why; blocks come in dataset order with their global sample offsets.
"""

from __future__ import annotations

import pathlib
import zipfile

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset

import datavet
from datavet.cli import main
from datavet.errors import InputError, UsageError
from datavet.sources import TensorSource, open_source
from datavet.sources.arrays import _ArrayReader, open_tensor

from .conftest import images, labels


class Planted:
    """Unpickling this touches a file: proof that a loader ran pickle code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def read_all(source: TensorSource, max_values: int = 1 << 20, max_rows: int = 1 << 16):
    offsets, xs, ys = [], [], []
    for offset, x, y in source.blocks(max_values, max_rows):
        offsets.append(offset)
        xs.append(np.array(x))
        ys.append(None if y is None else np.array(y))
    x = np.concatenate(xs)
    y = None if ys[0] is None else np.concatenate(ys)
    return offsets, x, y


def cli(*args: str) -> int:
    return main(["audit", *args, "--no-baselines"])


# --- .npy --------------------------------------------------------------------------------------


def test_npy_is_memory_mapped_and_read_in_blocks_with_offsets(tmp_path):
    x = images(50, (2, 4, 4))
    path = tmp_path / "x.npy"
    np.save(path, x)
    src = open_source(str(path))
    assert isinstance(src, TensorSource) and src.format == "npy" and src.num_rows == 50
    info = src.info()
    assert info.sample_shape == (2, 4, 4) and info.dtype == np.float32
    assert info.label_shape is None
    assert isinstance(src.x.arr, np.memmap)
    offsets, got, y = read_all(src, max_values=32 * 7)  # 7 samples per block
    assert offsets == list(range(0, 50, 7))
    np.testing.assert_array_equal(got, x)
    assert y is None


def test_pages_given_back_after_a_block_read_again_unchanged(tmp_path):
    x = images(400, (4, 16, 16))
    path = tmp_path / "x.npy"
    np.save(path, x)
    reader = _ArrayReader(np.load(path, mmap_mode="r"))
    assert reader._map is not None  # madvise is available here (Linux)
    first = np.array(reader.read(0, 100))
    reader.done(0, 100)  # drops the pages of samples 0-99
    np.testing.assert_array_equal(reader.read(0, 100), first)  # refaulted from the file
    reader.done(0, 400)
    np.testing.assert_array_equal(reader.read(250, 400), x[250:400])


def test_fortran_order_npy_reads_the_same_samples(tmp_path):
    x = np.asfortranarray(images(20, (3, 5)))
    path = tmp_path / "f.npy"
    np.save(path, x)
    _, got, _ = read_all(open_source(str(path)), max_values=15 * 3)
    np.testing.assert_array_equal(got, x)


def test_object_npy_is_refused_without_unpickling(tmp_path, capsys):
    sentinel = tmp_path / "unpickled"
    arr = np.empty(3, dtype=object)
    arr[:] = [Planted(str(sentinel)), 1, "a"]
    path = tmp_path / "objects.npy"
    np.save(path, arr, allow_pickle=True)
    assert cli(str(path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "objects.npy" in err and "refused" in err and "dtype object" in err
    assert "unpickl" in err and "arbitrary code" in err
    assert not sentinel.exists()
    with pytest.raises(InputError, match="Python objects"):
        datavet.audit(str(path))


def test_truncated_npy_says_expected_and_actual_bytes(tmp_path, capsys):
    path = tmp_path / "cut.npy"
    np.save(path, np.zeros((1000, 4), np.float32))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 5000])
    assert cli(str(path)) == 2
    err = capsys.readouterr().err
    assert "truncated" in err and "16,000 bytes of data" in err and "11,000" in err


def test_npy_with_a_cut_header_or_junk_is_an_input_error(tmp_path):
    head = tmp_path / "head.npy"
    np.save(head, np.zeros(10))
    head.write_bytes(head.read_bytes()[:20])
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"this is not an array at all")
    for path in (head, junk):
        with pytest.raises(InputError, match="not a valid .npy"):
            datavet.audit(str(path))


@pytest.mark.parametrize(
    "arr, problem",
    [
        (np.array(["a", "b"]), "expected numbers"),
        (np.zeros(3, dtype=[("a", "f4"), ("b", "i4")]), "structured array"),
        (np.zeros(3, dtype=complex), "expected numbers"),
        (np.float32(3.0), "single number"),
    ],
)
def test_npy_inputs_must_be_numeric_samples(tmp_path, arr, problem):
    path = tmp_path / "x.npy"
    np.save(path, arr)
    with pytest.raises(InputError, match=problem):
        datavet.audit(str(path))


def test_empty_and_missing_files(tmp_path, capsys):
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    assert cli(str(empty)) == 2
    assert "empty (0 bytes)" in capsys.readouterr().err
    assert cli(str(tmp_path / "nope.npy")) == 2
    assert "no such file" in capsys.readouterr().err


def test_npy_with_zero_samples_has_no_data_rows(tmp_path):
    path = tmp_path / "none.npy"
    np.save(path, np.zeros((0, 3, 4, 4), np.float32))
    with pytest.raises(InputError, match="no data rows"):
        datavet.audit(str(path))


def test_npy_has_no_target_key(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, images(10))
    with pytest.raises(UsageError, match="np.savez"):
        datavet.audit(str(path), target="label")


# --- .npz --------------------------------------------------------------------------------------


def test_npz_members_are_streamed_with_labels(tmp_path):
    x, y = images(40, (2, 3, 3)), labels(40)
    path = tmp_path / "d.npz"
    np.savez_compressed(path, inputs=x, label=y)
    src = open_source(str(path))
    assert src.format == "npz" and src.label == "label"
    assert any("'label'" in n and "found by name" in n for n in src.notes)
    offsets, got_x, got_y = read_all(src, max_values=18 * 6)
    assert offsets == list(range(0, 40, 6))
    np.testing.assert_array_equal(got_x, x)
    np.testing.assert_array_equal(got_y, y)


def test_npz_keys_chosen_by_flag_and_checked(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, pixels=images(10), cls=labels(10), other=np.arange(10))
    with pytest.raises(UsageError, match="--inputs KEY"):
        datavet.audit(str(path))
    src = open_source(str(path), inputs="pixels", target="cls")
    assert src.label == "cls"
    assert src.info().sample_shape == (3, 8, 8)
    with pytest.raises(InputError, match="did you mean 'pixels'"):
        open_source(str(path), inputs="pixel", target="cls")
    with pytest.raises(InputError, match="no array 'lbl' for the target"):
        open_source(str(path), inputs="pixels", target="lbl")
    with pytest.raises(UsageError, match="both the inputs and the labels"):
        open_source(str(path), inputs="cls", target="cls")


def test_npz_labels_must_match_the_samples(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=images(10), y=labels(9))
    with pytest.raises(InputError, match="one row per sample: 10 samples"):
        open_source(str(path))


def test_npz_object_member_refused_and_never_unpickled(tmp_path, capsys):
    sentinel = tmp_path / "unpickled"
    arr = np.empty(2, dtype=object)
    arr[:] = [Planted(str(sentinel)), 2]
    path = tmp_path / "d.npz"
    np.savez(path, x=images(2), label=arr)
    assert cli(str(path)) == 2
    err = capsys.readouterr().err
    assert "d.npz[label]" in err and "refused" in err and "unpickl" in err
    assert not sentinel.exists()


def test_truncated_and_corrupt_npz(tmp_path):
    path = tmp_path / "d.npz"
    np.savez_compressed(path, x=np.random.default_rng(0).normal(size=(500, 20)))
    data = path.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="not a valid .npz"):
        datavet.audit(str(cut))
    flipped = bytearray(data)
    middle = len(data) // 2
    flipped[middle : middle + 64] = bytes(64)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(bytes(flipped))
    with pytest.raises(InputError, match="corrupt"):
        datavet.audit(str(bad))


def test_npz_member_shorter_than_its_header_says(tmp_path):
    """A member whose header declares more data than it holds is caught before reading."""
    path = tmp_path / "lie.npz"
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1000, 8), np.float64))
    with zipfile.ZipFile(path, "w") as zf, zf.open("x.npy", "w") as fp:
        np.lib.format.write_array_header_1_0(fp, header)
        fp.write(np.zeros(80, np.float64).tobytes())
    with pytest.raises(InputError, match=r"truncated: the header declares shape \(1000, 8\)"):
        datavet.audit(str(path))


# --- .pt ---------------------------------------------------------------------------------------


def test_pt_dict_tuple_and_tensor(tmp_path):
    x, y = torch.from_numpy(images(30)), torch.from_numpy(labels(30))
    torch.save({"inputs": x, "label": y}, tmp_path / "d.pt")
    torch.save((x, y), tmp_path / "t.pt")
    torch.save(x, tmp_path / "x.pt")
    for name, label in (("d.pt", "label"), ("t.pt", "label"), ("x.pt", None)):
        src = open_source(str(tmp_path / name))
        assert src.format == "pt" and src.label == label
        _, got_x, got_y = read_all(src)
        np.testing.assert_array_equal(got_x, x.numpy())
        if label:
            np.testing.assert_array_equal(got_y, y.numpy())


def test_pt_with_pickled_objects_is_refused_and_never_unpickled(tmp_path, capsys):
    sentinel = tmp_path / "unpickled"
    path = tmp_path / "evil.pt"
    torch.save({"inputs": torch.zeros(4, 3), "extra": Planted(str(sentinel))}, path)
    assert cli(str(path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "evil.pt" in err and "refused" in err and "pickled Python object" in err
    assert "weights_only=True" in err and "never falls back" in err
    assert "weights_only set to False" not in err  # no advice to do the unsafe thing
    assert not sentinel.exists()


def test_pt_without_tensors_is_refused(tmp_path):
    torch.save([1, "a", 2.5], tmp_path / "list.pt")
    torch.save({"a": 1, "b": "x"}, tmp_path / "dict.pt")
    with pytest.raises(InputError, match="element 0 is an int, not a tensor"):
        datavet.audit(str(tmp_path / "list.pt"))
    with pytest.raises(InputError, match="no tensors in it"):
        datavet.audit(str(tmp_path / "dict.pt"))


def test_corrupt_pt_is_an_input_error(tmp_path):
    path = tmp_path / "bad.pt"
    torch.save(torch.zeros(10), path)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(InputError, match="not a readable .pt file"):
        datavet.audit(str(path))


# --- in memory ---------------------------------------------------------------------------------


def test_in_memory_arrays_and_tensors_take_the_tensor_path():
    x = images(20)
    assert open_source(x).format == "numpy"
    assert open_source(torch.from_numpy(x)).format == "torch"
    src = open_source((torch.from_numpy(x), torch.from_numpy(labels(20))))
    assert src.format == "torch" and src.label == "label"
    src = open_source((x, labels(20).tolist()), target="digit")
    assert src.label == "digit"
    # a 2-D torch tensor is a tensor input; a 2-D NumPy array stays a table
    assert isinstance(open_source(torch.zeros(5, 3)), TensorSource)
    assert not isinstance(open_source(np.zeros((5, 3))), TensorSource)
    assert not isinstance(open_source((np.zeros((5, 3)), np.zeros(5))), TensorSource)


def test_bfloat16_tensors_are_read_as_float32_and_named_as_stored():
    x = torch.from_numpy(images(10)).to(torch.bfloat16)
    src = open_source(x)
    info = src.info()
    assert info.dtype == np.float32 and info.dtype_name == "bfloat16"
    _, got, _ = read_all(src)
    np.testing.assert_array_equal(got, x.float().numpy())


def test_unsupported_tensors_and_mismatched_labels():
    with pytest.raises(InputError, match="not supported"):
        open_source(torch.zeros(4, 3, dtype=torch.complex64))
    with pytest.raises(InputError, match="one row per sample"):
        open_source((torch.zeros(4, 3, 2), torch.zeros(3)))


def test_table_and_tensor_splits_do_not_mix():
    import pandas as pd

    with pytest.raises(UsageError, match="both be tensors or both be tables"):
        datavet.audit(images(10), pd.DataFrame({"a": [1.0, 2.0]}))


# --- torch.utils.data --------------------------------------------------------------------------


def test_dataloader_is_read_in_dataset_order_whatever_it_shuffles():
    x, y = torch.from_numpy(images(50)), torch.from_numpy(labels(50))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, drop_last=True)
    src = open_source(loader)
    assert src.format == "dataloader" and src.num_rows == 50
    offsets, got_x, got_y = read_all(src)
    assert offsets == list(range(0, 50, 8))
    np.testing.assert_array_equal(got_x, x.numpy())  # every sample, drop_last or not
    np.testing.assert_array_equal(got_y, y.numpy())
    assert any("RandomSampler is not used" in n for n in src.notes)


class DictData(Dataset):
    def __init__(self, n: int) -> None:
        self.x = torch.from_numpy(images(n))
        self.y = labels(n)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i):
        return {"image": self.x[i], "target": int(self.y[i]), "name": f"s{i}"}


def test_dict_batches_pick_keys_by_name_or_flag():
    data = DictData(20)
    src = open_source(DataLoader(data, batch_size=6))
    _, got_x, got_y = read_all(src)
    assert src.label == "target"
    np.testing.assert_array_equal(got_x, data.x.numpy())
    np.testing.assert_array_equal(got_y, data.y)
    src = open_source(data, inputs="image", target="name")  # a Dataset directly; text labels
    _, _, names = read_all(src)
    assert names.tolist() == [f"s{i}" for i in range(20)]
    with pytest.raises(InputError, match="did you mean 'image'"):
        open_source(data, inputs="imag").info()


def test_tuple_batches_pick_positions():
    x, y, w = torch.from_numpy(images(12)), torch.from_numpy(labels(12)), torch.ones(12)
    loader = DataLoader(TensorDataset(x, w, y), batch_size=5)
    src = open_source(loader, target="2")
    _, _, got_y = read_all(src)
    np.testing.assert_array_equal(got_y, y.numpy())
    with pytest.raises(UsageError, match="must be a position"):
        open_source(loader, target="label").info()
    with pytest.raises(UsageError, match="out of range"):
        open_source(loader, target="5").info()
    src = open_source(loader)
    src.info()
    assert any("inputs element 0, labels element 1" in n for n in src.notes)


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(30):
            yield torch.full((2, 4), float(i)), i % 3


def test_iterable_dataset_is_read_in_stream_order():
    src = open_source(DataLoader(Stream(), batch_size=4))
    assert src.num_rows is None
    offsets, got_x, got_y = read_all(src)
    assert offsets == list(range(0, 30, 4))
    assert got_x[:, 0, 0].tolist() == list(range(30))
    assert got_y.tolist() == [i % 3 for i in range(30)]
    assert any("IterableDataset" in n for n in src.notes)


class Ragged(Dataset):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, i):
        return torch.zeros(3, 8 if i < 6 else 9), 0


class Broken(Dataset):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, i):
        if i == 7:
            raise OSError("disk on fire")
        return torch.zeros(3), 0


class Pictures(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        return object(), 0  # e.g. a PIL image without ToTensor()


def test_bad_datasets_are_input_errors_with_a_reason():
    with pytest.raises(InputError, match=r"samples have different shapes: \(3, 9\) from sample 6"):
        datavet.audit(DataLoader(Ragged(), batch_size=3))
    # the batch of samples 6-8 fails: the sample that fails on its own is named
    with pytest.raises(InputError, match="reading sample 7 failed: OSError: disk on fire"):
        datavet.audit(DataLoader(Broken(), batch_size=3, shuffle=True))
    with pytest.raises(InputError, match="reading sample 7 failed"):
        datavet.audit(Broken())
    # each sample loads but they cannot be collated: the batch is named, with a remedy
    with pytest.raises(InputError, match="batch at sample 0 failed: .*ToTensor"):
        datavet.audit(Pictures())


def test_variable_shapes_within_one_batch_are_refused():
    def keep(batch):
        return [b[0] for b in batch], torch.tensor([b[1] for b in batch])

    with pytest.raises(InputError, match="samples in a batch have different shapes"):
        datavet.audit(DataLoader(Ragged(), batch_size=10, collate_fn=keep))


def test_open_tensor_passes_a_source_through():
    src = open_tensor(images(5))
    assert open_source(src) is src

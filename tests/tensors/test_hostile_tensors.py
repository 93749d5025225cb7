"""Tensor layouts datavet cannot audit are one-line errors naming the file, with no library
warnings on the terminal: nested, quantized and meta tensors, and samples with a zero-length
axis. An endless DataLoader is read up to a cap, and the report says so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import datavet
from datavet.cli import main

torch = pytest.importorskip("torch")


def _cli(capfd, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    return (code, *capfd.readouterr())


def _save(path, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own warnings while building the input
        torch.save(make(), path)
    return path


CASES = {
    "nested.pt": (
        lambda: {
            "x": torch.nested.nested_tensor([torch.rand(3), torch.rand(5)]),
            "y": torch.arange(2),
        },
        "nested",
    ),
    "quantized.pt": (
        lambda: {
            "x": torch.quantize_per_tensor(torch.rand(10, 4), 0.1, 10, torch.quint8),
            "y": torch.arange(10) % 2,
        },
        "quantized",
    ),
    "meta.pt": (lambda: (torch.empty(10, 4, device="meta"), torch.arange(10) % 2), "meta"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unsupported_torch_tensors_are_one_line(capfd, tmp_path, name):
    make, word = CASES[name]
    path = _save(tmp_path / name, make)
    code, out, err = _cli(capfd, ["audit", path])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # no torch warnings around it
    assert lines[0].startswith(f"datavet: error: {path}: ") and word in lines[0], lines[0]


@pytest.mark.parametrize("shape", [(10, 0, 3), (10, 0)])
def test_zero_length_sample_axis_is_one_line(capfd, tmp_path, shape):
    path = tmp_path / "empty_axis.npy"
    np.save(path, np.zeros(shape, np.float32))
    code, out, err = _cli(capfd, ["audit", path])
    assert code == 2 and out == ""
    assert err.startswith(f"datavet: error: {path}: ") and "length 0" in err, err
    assert len(err.strip().splitlines()) == 1


def test_library_warnings_do_not_reach_the_caller(recwarn):
    x = torch.rand(40, 3)
    x[0, 0] = float("nan")

    # a warning raised inside torch while datavet reads is silenced; the audit still runs
    import torch.utils.data as tud

    class Noisy(tud.Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            warnings.warn_explicit(
                "deprecated", DeprecationWarning, "x.py", 1, module="torch._utils"
            )
            return x[i], i % 2

    report = datavet.audit(Noisy(), baselines=False)
    assert report.datasets["train"]["rows"] == 40
    assert not [w for w in recwarn if "deprecated" in str(w.message)]


class _Endless(torch.utils.data.IterableDataset):
    def __iter__(self):
        i = 0
        while True:
            yield torch.full((3,), float(i % 7)), i % 2
            i += 1


def test_an_endless_dataloader_is_capped_and_the_report_says_so():
    loader = torch.utils.data.DataLoader(_Endless(), batch_size=50)
    report = datavet.audit(loader, max_samples=1_000, baselines=False)
    assert report.datasets["train"]["rows"] == 1_000
    assert any("capped" in n and "1,000" in n for n in report.notes), report.notes


def test_the_default_cap_applies_to_datasets_not_to_arrays(monkeypatch):
    import datavet.engines.tensors as tensors

    monkeypatch.setattr(tensors, "DEFAULT_MAX_SAMPLES", 300)
    report = datavet.audit(torch.utils.data.DataLoader(_Endless(), batch_size=64), baselines=False)
    assert report.datasets["train"]["rows"] == 300
    arrays = (np.random.default_rng(0).random((500, 3)), np.arange(500) % 2)
    assert datavet.audit(arrays, baselines=False).datasets["train"]["rows"] == 500

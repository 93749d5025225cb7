"""sample_data/images: the stored set is a fresh make_images.py build and yields its codes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import datavet
from datavet.cli import main

IMAGES = Path(__file__).resolve().parents[2] / "sample_data" / "images"
TRAIN, TEST = IMAGES / "train.npz", IMAGES / "test.npz"
# Planted in make_images.py (its docstring lists them); B rules are left out as model-dependent.
EXPECTED = {
    ("V001", "train", ("channel 0",), (7,)),
    ("V002", "train", ("channel 1",), (123,)),
    ("F001", "train", ("channel 2",), ()),
    ("T001", "train"),
    ("T001", "test"),
    ("L002", "train"),
    ("S001", "test", (), (80, 81, 82, 83, 84)),
}


def make_images():
    spec = importlib.util.spec_from_file_location("make_images", IMAGES / "make_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def summary(findings) -> set[tuple]:
    out = set()
    for f in findings:
        code, split = f["code"], f["split"]
        if code in ("V001", "V002", "F001", "S001"):
            out.add((code, split, tuple(f["columns"]), tuple(f["examples"])))
        else:
            out.add((code, split))
    return out


def test_stored_files_are_a_fresh_build():
    built = make_images().build()
    for split, path in (("train", TRAIN), ("test", TEST)):
        with np.load(path, allow_pickle=False) as stored:
            assert sorted(stored.files) == ["inputs", "label"]
            for key in ("inputs", "label"):
                np.testing.assert_array_equal(stored[key], built[split][key])
                assert stored[key].dtype == built[split][key].dtype


def test_cli_finds_every_planted_problem(capsys):
    code = main(["audit", str(TRAIN), "--test", str(TEST), "--format", "json", "--no-baselines"])
    assert code == 1  # errors: V001, V002, S001
    payload = json.loads(capsys.readouterr().out)
    assert summary(payload["findings"]) == EXPECTED
    (f001,) = [f for f in payload["findings"] if f["code"] == "F001"]
    # one summarised finding: the constant channel and the constant border of the others
    assert "120 of the 768 input positions never change: the border" in f001["message"]
    tensor = payload["datasets"]["train"]["tensor"]
    assert tensor["constant_positions"] == 16 * 16 + 120


def test_the_same_data_through_a_dataloader_gives_the_same_findings():
    with np.load(TRAIN) as tr, np.load(TEST) as te:
        train = TensorDataset(torch.from_numpy(tr["inputs"]), torch.from_numpy(tr["label"]))
        test = TensorDataset(torch.from_numpy(te["inputs"]), torch.from_numpy(te["label"]))
    loaders = (DataLoader(train, batch_size=32, shuffle=True), DataLoader(test, batch_size=32))
    from_loaders = datavet.audit(*loaders, baselines=False)
    from_files = datavet.audit(str(TRAIN), str(TEST), baselines=False)

    def key(report):
        return sorted((f.code, f.split, f.columns, f.examples, f.message) for f in report.findings)

    assert key(from_loaders) == key(from_files)


def test_drift_rules_skip_tensor_inputs_with_the_reason():
    report = datavet.audit(IMAGES / "train.npz", IMAGES / "test.npz")
    skipped = {o.code: o.reason for o in report.outcomes if o.status.value == "skipped"}
    assert "tensor inputs" in skipped["S010"] and "tensor inputs" in skipped["S011"]

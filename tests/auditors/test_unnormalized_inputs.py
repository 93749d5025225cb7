"""T001 unnormalized-inputs: tensor inputs that look raw (0..255 pixels, far from unit scale)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import datavet
from datavet import Severity

CHANNEL_MEANS = (100.0, -40.0, 3.0)
CHANNEL_STDS = (50.0, 5.0, 20.0)


def run(train, test=None, **kw):
    return datavet.audit(train, test, select="T001", **kw)


def status(report) -> str:
    (outcome,) = report.outcomes
    return outcome.status.value


def raw_uint8(n: int = 50, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 3, 8, 8)).astype(np.uint8)


def standardised(n: int = 60, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 3, 8, 8)).astype(np.float32)


def far_from_unit(n: int = 200, seed: int = 1) -> np.ndarray:
    """Float images whose channel c has mean CHANNEL_MEANS[c] and std CHANNEL_STDS[c]."""
    z = np.random.default_rng(seed).standard_normal((n, 3, 8, 8))
    x = z * np.array(CHANNEL_STDS)[:, None, None] + np.array(CHANNEL_MEANS)[:, None, None]
    return x.astype(np.float32)


def normalize_args(hint: str) -> tuple[list[float], list[float]]:
    found = re.search(r"Normalize\(mean=\[([^\]]*)\], std=\[([^\]]*)\]\)", hint)
    assert found, hint
    return [float(v) for v in found[1].split(",")], [float(v) for v in found[2].split(",")]


def test_uint8_images_fire_and_the_hint_says_divide_by_255():
    x = raw_uint8()
    report = run(x)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("T001", "unnormalized-inputs", Severity.WARNING)
    assert f.split == "train" and f.n_affected == 50
    assert "uint8" in f.message and "0..255" in f.message
    assert f.columns == ("channel 0", "channel 1", "channel 2")
    assert f.metrics["min"] == 0 and f.metrics["max"] == 255
    assert f.metrics["mean"] == pytest.approx(x.mean())
    assert "divide by 255" in f.hint
    # then the per-channel statistics of the scaled inputs, to standardise with
    means, stds = normalize_args(f.hint)
    scaled = x.astype(np.float64) / 255
    assert means == pytest.approx(scaled.mean(axis=(0, 2, 3)), rel=1e-3)
    assert stds == pytest.approx(scaled.std(axis=(0, 2, 3)), rel=1e-3)
    assert status(report) == "failed"


def test_whole_numbers_0_to_255_stored_as_float_fire_too():
    x = raw_uint8().astype(np.float32)
    (f,) = run(x).findings
    assert "raw 0..255 pixel values stored as float32" in f.message
    assert "divide by 255" in f.hint


def test_float_inputs_far_from_normalised_name_the_per_channel_mean_and_std():
    x = far_from_unit()
    (f,) = run(x).findings
    assert "far from a normalised range" in f.message
    assert "divide" not in f.hint  # not pixels: nothing to divide by, only standardise
    means, stds = normalize_args(f.hint)
    assert means == pytest.approx(x.astype(np.float64).mean(axis=(0, 2, 3)), rel=1e-3)
    assert stds == pytest.approx(x.astype(np.float64).std(axis=(0, 2, 3)), rel=1e-3)
    # and they are the planted ones, give or take sampling noise
    assert means == pytest.approx(CHANNEL_MEANS, abs=2.0)
    assert stds == pytest.approx(CHANNEL_STDS, rel=0.1)


def test_inputs_scaled_down_too_far_fire():
    x = standardised() * 1e-5
    (f,) = run(x).findings
    assert "vary very little" in f.message and f.metrics["std"] < 1e-3


@pytest.mark.parametrize(
    "x",
    [
        standardised(),
        (standardised() * 0.25 + 0.5).clip(0, 1),  # 0..1 images (ToTensor without Normalize)
        (np.random.default_rng(0).random((40, 1, 8, 8)) > 0.5).astype(np.uint8),  # 0/1 masks
    ],
    ids=["standardised", "zero-to-one", "binary-uint8"],
)
def test_normalised_inputs_are_quiet(x):
    report = run(x)
    assert report.findings == []
    assert status(report) == "passed"


def test_thresholds_are_options():
    x = standardised() * 4 + 6  # mean 6, std 4: inside the defaults
    assert run(x).findings == []
    (f,) = run(x, thresholds={"T001": {"max_abs_mean": 5}}).findings
    assert f.metrics["mean"] == pytest.approx(6, abs=0.3)


def test_tables_are_skipped_with_a_reason():
    table = pd.DataFrame({"a": [1000.0, 2000.0, 3000.0, 4000.0], "label": [0, 1, 0, 1]})
    report = datavet.audit(table, target="label", select="T001")
    assert report.findings == []
    (outcome,) = report.outcomes
    assert outcome.status.value == "skipped" and "tensor" in outcome.reason


def test_raw_test_split_with_a_raw_train_is_told_to_do_as_for_train():
    found = {f.split: f for f in run(raw_uint8(), raw_uint8(20, seed=4)).findings}
    assert set(found) == {"train", "test"}
    assert found["test"].hint.startswith("as for train: convert to float and divide by 255")


def test_raw_test_split_with_a_normalised_train_is_told_to_preprocess_like_train():
    (f,) = run(standardised(), raw_uint8(20)).findings
    assert f.split == "test"
    assert "preprocess test exactly as train" in f.hint


def test_torch_tensors_and_dataloaders_fire_the_same():
    x = raw_uint8()
    expected = [(f.message, f.hint) for f in run(x).findings]
    assert [(f.message, f.hint) for f in run(torch.from_numpy(x)).findings] == expected
    loader = DataLoader(TensorDataset(torch.from_numpy(x)), batch_size=7)
    assert [(f.message, f.hint) for f in run(loader).findings] == expected


def test_integer_ids_get_a_hint_that_embeddings_are_exempt():
    tokens = np.random.default_rng(5).integers(0, 30_000, size=(100, 12, 1))
    (f,) = run(torch.from_numpy(tokens)).findings
    assert "far from a normalised range" in f.message and "embedding" in f.hint
    (g,) = run(far_from_unit()).findings  # floats: no such escape hatch
    assert "embedding" not in g.hint

"""Rules on tensor inputs: one-hot labels decided on the whole split, +inf and -inf counted
apart, T001 on (N, D) features, exact copies of images, and L002 behind a shuffling loader."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import datavet
from datavet import Severity

from .conftest import by_code, images

# --- one-hot labels: the whole split decides, not the first block -----------------------------


def one_hot_loader_data(n: int = 400, bad: int = 100):
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n, 1, 16, 16, generator=gen)
    y = torch.nn.functional.one_hot(torch.randint(0, 3, (n,), generator=gen), 3).float()
    y[bad] = 0  # one label row with no class
    return x, y


@pytest.mark.parametrize("batch_size", [1, 64, 200, 400])
def test_a_row_that_is_not_one_hot_is_a_missing_label_whatever_the_batch_size(batch_size):
    x, y = one_hot_loader_data()
    loader = DataLoader(TensorDataset(x, y), batch_size=batch_size)
    report = datavet.audit(loader, baselines=False)
    assert report.target == "label" and report.task == "classification"
    (v,) = by_code(report, "V003")
    assert v.examples == (100,) and v.n_affected == 1
    (note,) = [n for n in report.notes if "one-hot" in n]
    assert "one-hot rows of 3 values" in note and "1 of 400" in note
    assert not any("label rules skipped" in n for n in report.notes)


@pytest.mark.parametrize("bad", [0, 5, 59])
def test_where_the_bad_row_sits_does_not_matter(bad):
    x = images(60)
    onehot = np.eye(3)[np.random.default_rng(1).integers(0, 3, 60)]
    onehot[bad] = [1, 1, 0]
    report = datavet.audit((x, onehot), batch_rows=16, baselines=False)
    assert report.target == "label"
    (v,) = by_code(report, "V003")
    assert v.examples == (bad,)
    counts = {c["value"]: c["count"] for c in report.datasets["train"]["label"]["classes"]}
    assert sum(counts.values()) == 59  # the bad row is no class


def test_labels_mostly_not_one_hot_skip_the_label_rules_wherever_they_start():
    x = images(300)
    rng = np.random.default_rng(2)
    multi = (rng.random((300, 4)) > 0.5).astype(np.float32)  # multi-label rows
    multi[:40] = np.eye(4)[rng.integers(0, 4, 40)]  # the first block all one-hot
    report = datavet.audit((x, multi), batch_rows=16, baselines=False)
    assert report.target is None
    assert not by_code(report, "V003")
    (note,) = [n for n in report.notes if "label rules skipped" in n]
    assert "shape (4,)" in note and "of 300 rows are not one-hot" in note
    assert report.datasets["train"].get("label") is None


def test_test_labels_shaped_as_trains_are_read_as_train_reads_them():
    x = images(300)
    y = np.eye(3)[np.random.default_rng(3).integers(0, 3, 300)]
    y_test = np.eye(3)[np.random.default_rng(4).integers(0, 3, 50)]
    y_test[:30] = 0  # most test rows without a class: missing labels, not another label kind
    report = datavet.audit((x, y), (images(50, seed=9), y_test), baselines=False)
    (v,) = [f for f in by_code(report, "V003") if f.split == "test"]
    assert v.n_affected == 30


# --- V002: +inf and -inf samples counted apart -------------------------------------------------


@pytest.mark.parametrize("batch_rows", [65_536, 16])
def test_a_sample_holding_both_infinities_counts_for_each_sign(batch_rows):
    x = np.random.default_rng(0).random((100, 2, 16, 16)).astype(np.float32)
    x[4, 1, 0, 0] = np.inf
    x[5, 1, 2, 2] = -np.inf
    x[5, 1, 3, 3] = np.inf
    x[70, 1, 0, 0] = -np.inf
    report = datavet.audit(x, baselines=False, batch_rows=batch_rows)
    (f,) = by_code(report, "V002")
    assert "+inf and -inf in 3 samples" in f.message
    assert f.metrics["posinf"] == 2 and f.metrics["neginf"] == 2
    assert f.n_affected == 3 and f.examples == (4, 5, 70)
    channel = json.loads(report.to_json())["datasets"]["train"]["tensor"]["channels"][1]
    assert channel["inf_samples"] == f.n_affected
    assert (channel["posinf_values"], channel["neginf_values"]) == (2, 2)


# --- T001: (N, D) features are not pixels ------------------------------------------------------


def test_feature_tensors_are_not_called_raw_pixels(tmp_path):
    rng = np.random.default_rng(0)
    counts = rng.poisson(0.3, (500, 200)).astype(np.float32)  # bag-of-words counts
    counts[rng.integers(0, 500, 20), rng.integers(0, 200, 20)] = rng.integers(64, 150, 20)
    np.save(tmp_path / "bow.npy", counts)
    assert not by_code(datavet.audit(tmp_path / "bow.npy", baselines=False), "T001")
    ages = rng.integers(18, 91, 500)
    table = np.column_stack([ages, rng.integers(0, 2, (500, 5))]).astype(np.float32)
    np.save(tmp_path / "tab.npy", table)
    (f,) = by_code(datavet.audit(tmp_path / "tab.npy", baselines=False), "T001")
    assert "far from a normalised range" in f.message and "pixel" not in f.message
    assert "divide" not in f.hint and "255" not in f.hint
    assert "standardise per feature" in f.hint and "mean=[53.2" in f.hint


def test_uint8_feature_tensors_get_no_divide_by_255(tmp_path):
    flat = np.random.default_rng(0).integers(0, 256, (300, 64)).astype(np.uint8)
    np.save(tmp_path / "flat.npy", flat)
    (f,) = by_code(datavet.audit(tmp_path / "flat.npy", baselines=False), "T001")
    assert "far from a normalised range" in f.message
    assert "divide" not in f.hint
    # the same values as images: raw pixels, divide by 255
    (g,) = by_code(datavet.audit(flat.reshape(300, 1, 8, 8), baselines=False), "T001")
    assert "uint8" in g.message and "divide by 255" in g.hint


# --- S001/S002: equal images are copies, never a chance match ----------------------------------


def test_blank_images_are_copies_not_chance():
    blank = np.zeros((50, 1, 28, 28), np.float32)
    report = datavet.audit(
        (blank, np.zeros(50, int)),
        (np.zeros((10, 1, 28, 28), np.float32), np.zeros(10, int)),
        baselines=False,
    )
    for f in by_code(report, "S001") + by_code(report, "S002"):
        assert "coincide" not in f.message and "chance" not in f.message
        assert f.severity != Severity.INFO
    (s002,) = [f for f in by_code(report, "S002") if f.split == "train"]
    assert s002.severity == Severity.WARNING
    assert "All 50 samples of train are the same sample, every value 0" in s002.message
    assert "expected_by_chance" not in s002.metrics
    (s001,) = by_code(report, "S001")
    assert s001.severity == Severity.ERROR
    assert "equals train sample 0" in s001.message


def test_all_nan_images_are_one_sample_repeated():
    report = datavet.audit(np.full((100, 3, 16, 16), np.nan, np.float32), baselines=False)
    (f,) = by_code(report, "S002")
    assert f.severity == Severity.WARNING and "coincide" not in f.message
    assert "every value NaN" in f.message


def test_a_few_blank_images_among_real_ones_are_named_and_one_copy_is_just_a_copy():
    x = images(100, (1, 16, 16))
    x[[10, 20, 30, 40]] = 0  # four blank images
    (f,) = by_code(datavet.audit(x, baselines=False, select="S002"), "S002")
    assert f.n_affected == 3 and f.severity == Severity.WARNING
    assert "Every copy is of one sample (4 equal samples)" in f.message
    y = images(100, (1, 16, 16))
    y[50] = y[7]  # one ordinary copy: no guess about blanks
    (g,) = by_code(datavet.audit(y, baselines=False, select="S002"), "S002")
    assert g.n_affected == 1 and "blank" not in g.message and "coincide" not in g.message


def test_coarse_feature_tensors_keep_the_chance_estimate(tmp_path):
    coarse = np.random.default_rng(0).integers(0, 2, (200, 2)).astype(np.float32)
    np.save(tmp_path / "coarse.npy", coarse)
    (f,) = by_code(datavet.audit(tmp_path / "coarse.npy", baselines=False), "S002")
    assert f.severity == Severity.INFO and "coincide" in f.message


# --- L002 behind a DataLoader that shuffles ----------------------------------------------------


def sorted_dataset():
    gen = torch.Generator().manual_seed(0)
    y, _ = torch.sort(torch.randint(0, 3, (300,), generator=gen))
    return TensorDataset(torch.rand(300, 1, 16, 16, generator=gen), y)


def test_l002_behind_a_shuffling_loader_does_not_say_shuffle_before_batching():
    loader = DataLoader(sorted_dataset(), batch_size=32, shuffle=True)
    (f,) = by_code(datavet.audit(loader, baselines=False, select="L002"), "L002")
    assert "shuffle before" not in f.hint
    assert "RandomSampler already shuffles the batches" in f.hint
    assert "by position" in f.hint and "mislabelled" in f.hint


def test_l002_behind_an_ordered_loader_still_says_shuffle():
    loader = DataLoader(sorted_dataset(), batch_size=32)
    (f,) = by_code(datavet.audit(loader, baselines=False, select="L002"), "L002")
    assert f.hint.startswith("shuffle before splitting and batching")


def test_multi_label_rows_where_most_carry_one_tag_are_not_one_hot():
    rng = np.random.default_rng(4)
    n = 1000
    y = np.eye(4)[rng.integers(0, 4, n)]
    two = rng.random(n) < 0.3  # 30% of rows carry a second tag
    y[two, (np.argmax(y[two], axis=1) + 1) % 4] = 1
    x = rng.random((n, 1, 16, 16)).astype(np.float32)
    report = datavet.audit((x, y), baselines=False)
    assert not [f for f in report.findings if f.code == "V003"]
    assert any("label rules skipped" in n for n in report.notes)

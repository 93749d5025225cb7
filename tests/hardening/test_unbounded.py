"""Work grows with the cells, not with columns squared or a statistics record per feature of a
very wide tensor; a crashed rule says on stderr which one and how to skip it."""

from __future__ import annotations

import numpy as np

import datavet
from datavet.auditors.nan_values import NanValues
from datavet.scan.tensors import MAX_FEATURE_COLUMNS

from .helpers import run_cli


def test_a_very_wide_vector_is_one_channel_of_positions(tmp_path):
    path = tmp_path / "wide.npy"
    x = np.random.default_rng(0).random((4, MAX_FEATURE_COLUMNS + 1)).astype(np.float32)
    x[:, 7] = 3.0  # a constant feature is still found, by position
    np.save(path, x)
    report = datavet.audit(path, baselines=False)
    assert len(report.datasets["train"]["columns"]) == 1  # not 4,097 column records
    assert any("read as one sequence of positions" in n for n in report.notes)


def test_up_to_the_limit_features_stay_columns(tmp_path):
    x = np.random.default_rng(0).random((20, 64))
    report = datavet.audit((x, np.arange(20) % 2), baselines=False)
    assert len(report.datasets["train"]["columns"]) == 64


def test_a_crashed_rule_says_which_and_how_to_skip_it(tmp_path, capsys, monkeypatch):
    def crash(self, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(NanValues, "check", crash)
    path = tmp_path / "d.csv"
    path.write_text("x,label\n1,0\n2,1\n3,0\n")
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label", "--no-baselines"])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"datavet: error: {path}: rule V001 (nan-values) crashed:")
    assert "RuntimeError: boom" in lines[0] and "--ignore V001" in lines[0]

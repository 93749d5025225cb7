"""Acceptance: the seed chapter's planted-problem table (seeds/004), end to end through the CLI.

Expected figures are the chapter's: 3 NaN in x1 of train and 1 in test (row 94, the copy of
train row 4), x3 constant, x0 (kelvin) 300x the other scales, the first 40 labels forced to 1,
10 train rows copied into test. Each is also derived here from the table itself with pandas,
independently of datavet."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from datavet.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def _load_generator():
    spec = importlib.util.spec_from_file_location("_seed_generator", SAMPLE / "make_sample_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


def _audit_json(capsys, train: Path, test: Path, *extra: str) -> tuple[int, dict]:
    code = main(
        ["audit", str(train), "--test", str(test), "--target", "label", "--format", "json", *extra]
    )
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


@pytest.fixture(scope="module")
def truth():
    """The planted figures, computed from the table itself."""
    train, test = GEN.planted()
    feats = GEN.COLUMNS
    nan_train = np.flatnonzero(train["x1"].isna()).tolist()
    nan_test = np.flatnonzero(test["x1"].isna()).tolist()

    # rows of test whose features equal a train row (NaN equal to NaN)
    def keys(df):  # repr of each float: NaN equals NaN, 0.1 stays 0.1
        return [tuple(repr(float(v)) for v in row) for row in df[feats].to_numpy()]

    train_keys = set(keys(train))
    overlap = [i for i, k in enumerate(keys(test)) if k in train_keys]
    constant = [c for c in feats if train[c].nunique(dropna=True) == 1]
    rest_rate = float((train["label"].iloc[40:] == 1).mean())
    return {
        "nan_train": nan_train,
        "nan_test": nan_test,
        "overlap": overlap,
        "constant": constant,
        "rest_rate": rest_rate,
        "head_rate": float((train["label"].iloc[:40] == 1).mean()),
        "n_train": len(train),
        "n_test": len(test),
    }


def test_truth_matches_the_chapter(truth):
    assert len(truth["nan_train"]) == 3
    assert truth["nan_test"] == [94]
    assert 94 - 90 in truth["nan_train"]  # test row 94 is the copy of train row 4
    assert truth["overlap"] == list(range(90, 100))
    assert truth["constant"] == ["x3"]
    assert truth["head_rate"] == 1.0
    assert round(truth["rest_rate"], 2) == 0.47
    assert (truth["n_train"], truth["n_test"]) == (400, 100)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_planted_table(ext, capsys, truth):
    code, payload = _audit_json(
        capsys, SAMPLE / f"planted_train.{ext}", SAMPLE / f"planted_test.{ext}"
    )
    assert code == 1
    assert payload["exit_code"] == 1 and payload["passed"] is False
    findings = payload["findings"]
    keys = sorted((f["code"], f["split"] or "-", tuple(f["columns"])) for f in findings)
    assert keys == sorted(
        [
            ("V001", "train", ("x1",)),
            ("V001", "test", ("x1",)),
            ("F001", "train", ("x3",)),
            ("F003", "train", ("x0",)),
            ("L002", "train", ("label",)),
            ("S001", "test", ()),
        ]
    )
    codes = [f["code"] for f in findings]
    assert "V002" not in codes and "L001" not in codes
    by = {(f["code"], f["split"]): f for f in findings}

    v_train, v_test = by[("V001", "train")], by[("V001", "test")]
    assert v_train["n_affected"] == 3 == len(truth["nan_train"])
    assert v_train["examples"] == truth["nan_train"]
    assert v_train["severity"] == "error"
    assert v_test["n_affected"] == 1
    assert v_test["examples"] == [94] == truth["nan_test"]

    assert by[("F001", "train")]["severity"] == "warning"
    assert "x0" in by[("F003", "train")]["message"]

    drift = by[("L002", "train")]
    m = drift["metrics"]
    assert m["segment_rows"] == 40
    assert m["segment_rate"] == 1.0
    assert round(m["rest_rate"], 2) == 0.47
    assert m["rest_rate"] == pytest.approx(truth["rest_rate"], abs=1e-12)
    assert m["p_value"] < 0.001
    assert drift["n_affected"] == 40

    overlap = by[("S001", "test")]
    assert overlap["n_affected"] == 10 == len(truth["overlap"])
    assert overlap["examples"] == truth["overlap"][:5]
    assert overlap["severity"] == "error"

    assert payload["datasets"]["train"]["rows"] == 400
    assert payload["datasets"]["test"]["rows"] == 100


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_clean_sample_passes(ext, capsys):
    code, payload = _audit_json(capsys, SAMPLE / f"clean_train.{ext}", SAMPLE / f"clean_test.{ext}")
    assert code == 0
    assert payload["findings"] == []
    assert payload["passed"] is True and payload["exit_code"] == 0
    assert payload["datasets"]["train"]["rows"] == 800
    assert payload["datasets"]["test"]["rows"] == 200


@pytest.mark.parametrize("stem", ["planted", "clean"])
def test_sample_files_equal_a_fresh_regeneration(stem):
    frames = dict(zip(("train", "test"), getattr(GEN, stem)()))
    for split, frame in frames.items():
        from_csv = pd.read_csv(SAMPLE / f"{stem}_{split}.csv")
        pd.testing.assert_frame_equal(from_csv, frame, check_exact=True)
        from_parquet = pd.read_parquet(SAMPLE / f"{stem}_{split}.parquet")
        pd.testing.assert_frame_equal(from_parquet.reset_index(drop=True), frame, check_exact=True)


def test_regeneration_writes_the_same_tables(tmp_path):
    written = GEN.write(tmp_path)
    assert sorted(p.name for p in written) == sorted(
        p.name for p in SAMPLE.glob("*_*.*") if p.suffix in (".csv", ".parquet")
    )
    for path in written:
        if path.suffix == ".csv":
            pd.testing.assert_frame_equal(
                pd.read_csv(path), pd.read_csv(SAMPLE / path.name), check_exact=True
            )
        else:
            pd.testing.assert_frame_equal(
                pd.read_parquet(path), pd.read_parquet(SAMPLE / path.name), check_exact=True
            )

"""Auditing tensors end to end: the same rules, report and exit codes as for tables."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import numpy as np
import pytest
import torch
from jsonschema import Draft202012Validator
from torch.utils.data import DataLoader, TensorDataset

import datavet
from datavet.cli import main
from datavet.errors import UsageError
from datavet.output import html, html_tensors
from datavet.output.json import schema

from .conftest import by_code, codes, images, labels


def findings(report) -> list[tuple]:
    return sorted(
        (f.code, f.split or "", f.columns, f.examples, f.n_affected, f.message)
        for f in report.findings
    )


# --- the acceptance criteria -------------------------------------------------------------


def test_dataloader_nan_sample_is_named_by_its_dataset_index(tmp_path):
    x, y = images(200), labels(200)
    x[123, 0, 4, 5] = np.nan
    loader = DataLoader(
        TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=16, shuffle=True
    )
    report = datavet.audit(loader)
    (f,) = by_code(report, "V001")
    assert f.examples == (123,) and f.columns == ("channel 0",) and f.split == "train"
    assert f.n_affected == 1 and "sample 123" in f.message  # not "batch 7"
    assert report.exit_code() == 1
    # the same data as .npz, .pt, .npy and in memory: the same findings
    np.savez(tmp_path / "d.npz", inputs=x, label=y)
    torch.save({"inputs": torch.from_numpy(x), "label": torch.from_numpy(y)}, tmp_path / "d.pt")
    assert findings(datavet.audit(str(tmp_path / "d.npz"))) == findings(report)  # B rules too
    expected = findings(datavet.audit(loader, baselines=False))
    assert findings(datavet.audit(str(tmp_path / "d.pt"), baselines=False)) == expected
    assert findings(datavet.audit((x, y), baselines=False)) == expected
    tensors = (torch.from_numpy(x), torch.from_numpy(y))
    assert findings(datavet.audit(tensors, baselines=False)) == expected
    np.save(tmp_path / "x.npy", x)
    (g,) = by_code(datavet.audit(str(tmp_path / "x.npy"), baselines=False), "V001")
    assert (g.columns, g.examples) == (f.columns, f.examples)


def test_train_and_test_dataloaders_match_the_npz_files(tmp_path):
    x, y = images(150), labels(150)
    xt, yt = images(60, seed=9), labels(60, seed=9)
    x[7, 2, 0, 0] = np.inf
    xt[10:15] = x[40:45]  # copies across the splits
    yt[10:15] = y[40:45]
    xt[33, 1, 1, 1] = np.nan

    def loader(a, b):
        return DataLoader(TensorDataset(torch.from_numpy(a), torch.from_numpy(b)), batch_size=9)

    from_loaders = datavet.audit(loader(x, y), loader(xt, yt))
    np.savez(tmp_path / "train.npz", inputs=x, label=y)
    np.savez(tmp_path / "test.npz", inputs=xt, label=yt)
    from_files = datavet.audit(str(tmp_path / "train.npz"), str(tmp_path / "test.npz"))
    assert findings(from_loaders) == findings(from_files)
    assert {"V001", "V002", "S001"} <= set(codes(from_files))
    (s,) = by_code(from_files, "S001")
    assert s.n_affected == 5 and s.examples == (10, 11, 12, 13, 14)
    assert "test 10 = train 40" in s.message
    (v,) = by_code(from_files, "V001")
    assert (v.split, v.examples) == ("test", (33,))


# --- every rule on tensors -----------------------------------------------------------------------


def test_many_nan_and_inf_samples_name_the_first_five_by_channel():
    x, y = images(300, (2, 6, 6)), labels(300)
    nan_at = [3, 40, 41, 99, 150, 151, 152, 290]
    for i in nan_at:
        x[i, 1, 2, 2] = np.nan
    x[[200, 5], 0, 0, 0] = -np.inf
    x[77, 0, 5, 5] = np.inf
    loader = DataLoader(
        TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=13, shuffle=True
    )
    report = datavet.audit(loader, baselines=False)
    (nan,) = by_code(report, "V001")
    assert nan.columns == ("channel 1",) and nan.n_affected == len(nan_at)
    assert nan.examples == tuple(nan_at[:5]) and "(+3 more)" in nan.message
    (inf,) = by_code(report, "V002")
    assert inf.columns == ("channel 0",) and inf.n_affected == 3
    assert inf.examples == (5, 77, 200)
    (chan0, chan1) = report.datasets["train"]["tensor"]["channels"]
    assert (chan0["posinf_values"], chan0["neginf_values"], chan0["nan_values"]) == (1, 2, 0)
    assert (chan1["nan_values"], chan1["nan_samples"]) == (8, 8)


def test_sequences_n_t_f_end_to_end():
    x = images(100, (20, 5))  # (N, T, F): 20 steps of 5 features
    x[:, 15:, :] = 0.0  # padding at the end of every sequence
    x[42, 3, 1] = np.nan
    x[:, :, 4] *= 500
    report = datavet.audit(torch.from_numpy(x), baselines=False)
    assert report.datasets["train"]["tensor"]["layout"] == "sequence"
    (nan,) = by_code(report, "V001")
    assert (nan.columns, nan.examples) == (("channel 1",), (42,))
    (const,) = by_code(report, "F001")
    assert const.message.startswith("25 of 100 input positions are constant in train")
    assert "steps 15-19 in every channel" in const.message
    (scale,) = by_code(report, "F003")
    assert scale.columns == ("channel 4",)
    # --channel-axis 1 reads the same tensor as 20 channels (steps) of 5 values
    other = datavet.audit(x, channel_axis=1, baselines=False)
    assert len(other.datasets["train"]["tensor"]["channels"]) == 20
    (nan,) = by_code(other, "V001")
    assert (nan.columns, nan.examples) == (("channel 3",), (42,))


def test_feature_tensors_n_d_end_to_end():
    x = images(100, (6,))
    x[:, 2] = 1.0
    x[17, 4] = np.inf
    batch = {"inputs": torch.from_numpy(x), "label": torch.from_numpy(labels(100))}
    report = datavet.audit(batch, baselines=False)
    assert report.datasets["train"]["tensor"]["layout"] == "features"
    (inf,) = by_code(report, "V002")
    assert (inf.columns, inf.examples) == (("x4",), (17,))
    (const,) = by_code(report, "F001")
    assert const.columns == ("x2",) and const.message.startswith("1 of 6 input features")


def test_duplicates_and_overlap_use_canonical_sample_hashes():
    x = np.rint(images(100) * 10).astype(np.float32)
    x[60] = x[5]
    x[61] = x[5]
    y = labels(100)
    y[60] = y[61] = y[5]
    test = x[:30].astype(np.float64)  # another dtype, the same values
    test[:3] = -test[:3] + 0.0  # these differ...
    test[0, 0, 0, 0] = x[0, 0, 0, 0]  # ...even where a value is shared
    report = datavet.audit((x, y), (test, y[:30]), baselines=False)
    (dup,) = by_code(report, "S002")
    assert dup.split == "train" and dup.n_affected == 2 and dup.examples == (60, 61)
    (overlap,) = by_code(report, "S001")
    assert overlap.n_affected == 27 and overlap.examples == (3, 4, 5, 6, 7)
    info = [f for f in by_code(report, "S004") if "compatible" in f.message]
    assert info and "float32 vs float64" in info[0].message


def test_label_rules_apply_to_tensor_labels():
    rng = np.random.default_rng(2)
    x = images(600)
    y = np.zeros(600, dtype=np.int64)
    y[:40] = 1  # 14:1, and all of class 1 in a block at the start
    xt = images(100, seed=5)
    yt = rng.integers(0, 3, 100)  # class 2 never seen in train, and a shifted mix
    report = datavet.audit((x, y), (xt, yt), baselines=False)
    assert {"L001", "L002", "L003", "L004"} <= set(codes(report))
    (drift,) = by_code(report, "L002")
    assert drift.examples[:3] == (0, 1, 2) and drift.columns == ("label",)
    (unseen,) = by_code(report, "L003")
    assert "2" in unseen.message


def test_scale_mismatch_across_channels():
    x = images(100)
    x[:, 1] *= 1000
    (f,) = by_code(datavet.audit(x, select="F003"), "F003")
    assert f.columns == ("channel 1",)


def test_constant_positions_are_one_finding_not_one_per_pixel():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, size=(80, 28, 28)).astype(np.uint8)
    x[:, :2, :] = 0
    x[:, :, -1] = 0
    report = datavet.audit(x, select="F")
    (f,) = by_code(report, "F001")
    assert f.message.startswith("82 of 784 input positions are constant in train")
    assert "the border" in f.message and f.n_affected == 82  # rows 0-1, then column 27
    assert f.metrics["positions"] == 784 and f.columns == ()
    assert report.datasets["train"]["tensor"]["constant_positions"] == 82


def test_unnormalized_uint8_images():
    x = np.random.default_rng(3).integers(0, 256, size=(50, 3, 8, 8)).astype(np.uint8)
    (f,) = by_code(datavet.audit(x), "T001")
    assert "uint8" in f.message and "divide by 255" in f.hint and "Normalize(mean=[" in f.hint
    assert not by_code(datavet.audit(images(50)), "T001")


def test_train_and_test_sample_shapes_must_agree():
    report = datavet.audit(images(40, (3, 8, 8)), images(20, (3, 9, 9)), select="S004")
    (f,) = [f for f in report.findings if f.severity == datavet.Severity.ERROR]
    assert "'sample shape' is 3x8x8 in train but 3x9x9 in test" in f.message


def test_one_hot_and_other_label_shapes():
    x = images(60)
    classes = labels(60)
    onehot = np.eye(3)[classes]
    onehot[40] = [1, 1, 0]  # a row that is not one-hot: a missing label
    report = datavet.audit((x, onehot), batch_rows=16, baselines=False)
    assert report.target == "label" and report.task == "classification"
    counts = {c["value"]: c["count"] for c in report.datasets["train"]["label"]["classes"]}
    expected = np.bincount(np.delete(classes, 40), minlength=3)
    assert counts == {k: int(expected[k]) for k in range(3)}
    (v,) = by_code(report, "V003")
    assert v.examples == (40,)
    assert any("one-hot" in n for n in report.notes)
    # multi-label rows: most rows are not one-hot, so these are not classes
    multi = (np.random.default_rng(2).random((60, 3)) > 0.5).astype(np.int64)
    multi[:, 0] = 1
    masks = (np.random.default_rng(0).random((60, 8, 8)) > 0.5).astype(np.int64)
    for y in (multi, masks):
        report = datavet.audit((x, y), baselines=False)
        assert report.target is None
        assert any("label rules skipped" in n for n in report.notes)


def test_two_dimensional_numpy_pairs_stay_tables():
    x = np.random.default_rng(0).normal(size=(50, 4))
    x[3, 2] = np.nan
    report = datavet.audit((x, labels(50)), baselines=False)
    assert "tensor" not in report.datasets["train"]
    assert report.datasets["train"]["format"] != "numpy"
    (f,) = by_code(report, "V001")
    assert f.columns == ("x2",) and f.examples == (3,)


def test_group_and_time_are_for_tables():
    with pytest.raises(UsageError, match="apply to tables"):
        datavet.audit(images(10), group="subject")


# --- CLI, JSON and HTML ------------------------------------------------------------------------


def test_cli_keys_channel_axis_and_json_schema(tmp_path, capsys):
    x = np.random.default_rng(4).integers(0, 256, size=(60, 12, 12, 3)).astype(np.uint8)  # NHWC
    np.savez(tmp_path / "train.npz", pixels=x, digit=labels(60))
    np.savez(tmp_path / "test.npz", pixels=x[:20], digit=labels(20))
    args = [str(tmp_path / "train.npz"), "--test", str(tmp_path / "test.npz")]
    keys = ["--inputs", "pixels", "--target", "digit"]
    assert main(["audit", *args, *keys, "--format", "json", "--no-baselines"]) == 1
    payload = json.loads(capsys.readouterr().out)
    errors = list(Draft202012Validator(schema()).iter_errors(payload))
    assert not errors, [e.message for e in errors]
    tensor = payload["datasets"]["train"]["tensor"]
    assert tensor["channel_axis"] == 3 and tensor["layout"] == "image"
    assert [c["name"] for c in tensor["channels"]] == ["channel 0", "channel 1", "channel 2"]
    assert payload["target"] == "digit"
    assert {f["code"] for f in payload["findings"]} >= {"S001", "T001"}
    assert main(["audit", *args, *keys, "--channel-axis", "1", "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["datasets"]["train"]["tensor"]["channels"]) == 12
    assert main(["audit", *args, *keys, "--channel-axis", "0"]) == 2
    assert "sample axis" in capsys.readouterr().err
    assert main(["audit", *args]) == 2  # two arrays, neither named like inputs
    assert "--inputs KEY" in capsys.readouterr().err


def test_cli_channel_axis_none_for_grayscale_sequences(tmp_path, capsys):
    np.save(tmp_path / "x.npy", images(30, (10, 6)))
    assert main(["audit", str(tmp_path / "x.npy"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["datasets"]["train"]["tensor"]["layout"] == "sequence"
    assert (
        main(["audit", str(tmp_path / "x.npy"), "--channel-axis", "none", "--format", "json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["datasets"]["train"]["tensor"]["layout"] == "image"


def decode_png(uri: str) -> tuple[int, int, int]:
    data = base64.b64decode(uri.removeprefix("data:image/png;base64,"))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    idat = data.index(b"IDAT")
    (length,) = struct.unpack(">I", data[idat - 4 : idat])
    raw = zlib.decompress(data[idat + 4 : idat + 4 + length])
    channels = {0: 1, 2: 3}[colour]
    assert depth == 8 and len(raw) == height * (1 + width * channels)
    return width, height, channels


def test_html_view_has_channel_tables_and_thumbnails():
    x = images(40)
    x[17, 0, 1, 1] = np.nan
    x[23, 2] = np.inf
    report = datavet.audit((x, labels(40)), baselines=False)
    vm = html.view_model(report.to_dict())
    (t,) = vm["tensors"]
    assert t["split"] == "train" and t["shape"] == "3x8x8" and t["layout"] == "image"
    assert [c["name"] for c in t["channels"]] == ["channel 0", "channel 1", "channel 2"]
    c0, _, c2 = t["channels"]
    assert c0["nan"] == "1" and c0["nan_css"] == "error" and c2["posinf"] == "64"
    assert [th["index"] for th in t["thumbnails"]] == [0, 1, 2, 3, 4, 5, 17, 23]
    assert [th["flag"] for th in t["thumbnails"][-2:]] == ["nan", "inf"]
    for th in t["thumbnails"]:
        assert decode_png(th["src"]) == (8, 8, 3)
    page = report.to_html()
    assert page.count("data-test-thumbnail=") == 8 and 'data-test-flag="nan"' in page
    assert "data:image/png;base64," in page and "http://" not in page


def test_html_for_tables_has_no_tensor_section():
    import pandas as pd

    report = datavet.audit(pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]}))
    assert html.view_model(report.to_dict())["tensors"] is None
    assert "data-test-tensors" not in report.to_html()


def test_png_encoder_round_trip_sizes():
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    assert decode_png(html_tensors.data_uri(gray)) == (4, 3, 1)
    rgb = np.zeros((5, 2, 3), np.uint8)
    assert decode_png(html_tensors.data_uri(rgb)) == (2, 5, 3)

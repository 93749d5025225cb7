"""Inputs a hostile tester tried: a single-class target, a named target missing from the test
split (said in a note), a config that is a FIFO / directory / has a UTF-8 BOM, a UTF-16 CSV, an
empty or unknown target name. Each is a finding, a note or a one-line error (exit 2), never a
silent pass."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import pytest
from hardening.helpers import assert_one_line_error
from hardening.helpers import run_cli as _cli

import datavet
from datavet import Severity
from datavet.errors import UsageError


def _one_line_error(code, out, err, *, names: str, words: tuple[str, ...]) -> str:
    """The bad-input contract, each of ``words`` as written (punctuation included)."""
    return assert_one_line_error(code, out, err, names=names, problem=[re.escape(w) for w in words])


def _csv(path, header: str, rows) -> str:
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return str(path)


# -- B1: a single class (a constant target) in train ---------------------------------------


def test_single_class_in_train_is_an_error_finding(tmp_path, capsys):
    train = _csv(tmp_path / "c.csv", "x,label", [f"{i}.5,1" for i in range(50)])
    code, out, err = _cli(capsys, ["audit", train, "--format", "json"])
    assert code == 1, err
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "L001"]
    assert f["severity"] == "error" and f["split"] == "train" and f["columns"] == ["label"]
    assert "single class" in f["message"] and "class 1" in f["message"]
    assert f["n_affected"] == 50


def test_single_string_class_names_the_value():
    train = pd.DataFrame({"x": np.arange(30.0), "y": ["cat"] * 30})
    (f,) = datavet.audit(train, target="y", select="L001").findings
    assert f.severity == Severity.ERROR and "'cat'" in f.message
    assert f.metrics["classes"] == 1


def test_constant_regression_target_is_an_error_finding():
    train = pd.DataFrame({"x": np.arange(30.0), "y": [5.5] * 30})
    report = datavet.audit(train, target="y", task="regression", select="L001")
    (f,) = report.findings
    assert f.severity == Severity.ERROR and "constant" in f.message and "5.5" in f.message
    assert report.exit_code("error") == 1


def test_one_row_is_left_to_too_few_rows():
    train = pd.DataFrame({"x": [1.0], "y": [1]})
    report = datavet.audit(train, target="y", select="L001")
    assert report.findings == [] and report.outcomes[0].status.value == "skipped"


def test_single_class_respects_a_severity_override():
    train = pd.DataFrame({"x": np.arange(30.0), "y": [1] * 30})
    (f,) = datavet.audit(train, target="y", select="L001", severity={"L001": "info"}).findings
    assert f.severity == Severity.INFO


def test_two_classes_and_varying_regression_targets_keep_their_behaviour():
    balanced = pd.DataFrame({"x": np.arange(20.0), "y": [0, 1] * 10})
    assert datavet.audit(balanced, target="y", select="L001").findings == []
    (f,) = datavet.audit(
        pd.DataFrame({"x": np.arange(11.0), "y": [0] * 10 + [1]}), target="y", select="L001"
    ).findings
    assert f.severity == Severity.WARNING and "10:1" in f.message
    varying = pd.DataFrame({"x": np.arange(20.0), "y": np.linspace(0, 1, 20)})
    report = datavet.audit(varying, target="y", select="L001")
    assert report.findings == []
    assert "regression" in report.outcomes[0].reason


# -- B2: a named target missing from the test split ----------------------------------------


def test_named_target_missing_from_test_is_said_not_silent(tmp_path, capsys):
    # an unlabelled test split is a supported case (S004, the baselines' fallback): audited,
    # with a note in the report, never only a skip reason
    train = _csv(tmp_path / "train.csv", "a,label", ["1,0", "2,1", "3,0", "4,1"])
    test = _csv(tmp_path / "t.csv", "a", ["1", "2"])
    code, out, err = _cli(capsys, ["audit", train, "--test", test, "--target", "label"])
    assert code in (0, 1), err
    assert "t.csv has no target column 'label' (the named target)" in out


def test_found_target_missing_from_test_is_still_skipped(tmp_path, capsys):
    train = _csv(tmp_path / "train.csv", "a,label", ["1,0", "2,1", "3,0", "4,1"])
    test = _csv(tmp_path / "t.csv", "a", ["1", "2"])
    code, out, err = _cli(capsys, ["audit", train, "--test", test, "--format", "json"])
    assert code in (0, 1), err
    reasons = {o["code"]: o.get("reason") for o in json.loads(out)["outcomes"]}
    assert "no target column" in reasons["L003"]


# -- the target name: empty, or unknown without a suggestion --------------------------------


def test_empty_target_name_is_a_usage_error():
    with pytest.raises(UsageError, match="empty column name"):
        datavet.audit(pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]}), target="")


def test_unknown_target_message_is_punctuated(tmp_path, capsys):
    train = _csv(tmp_path / "train.csv", "a,label", ["1,0", "2,1"])
    code, out, err = _cli(capsys, ["audit", train, "--target", "nope"])
    line = _one_line_error(code, out, err, names="train.csv", words=("'nope' not found. ",))
    assert "Columns: 'a', 'label'" in line
    code, out, err = _cli(capsys, ["audit", train, "--target", "lable"])
    _one_line_error(code, out, err, names="train.csv", words=("did you mean 'label'? Columns",))


# -- D1 / D4: config files -------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_config_that_is_a_fifo_is_an_error_not_a_hang(tmp_path, capsys):
    train = _csv(tmp_path / "train.csv", "a,label", ["1,0", "2,1"])
    fifo = tmp_path / "d1.toml"
    os.mkfifo(fifo)
    code, out, err = _cli(capsys, ["audit", train, "--config", fifo])
    _one_line_error(code, out, err, names="d1.toml", words=("regular file",))


def test_config_that_is_a_directory_is_an_error(tmp_path, capsys):
    train = _csv(tmp_path / "train.csv", "a,label", ["1,0", "2,1"])
    folder = tmp_path / "conf.toml"
    folder.mkdir()
    code, out, err = _cli(capsys, ["audit", train, "--config", folder])
    _one_line_error(code, out, err, names="conf.toml", words=("directory",))


@pytest.mark.parametrize("name", ["datavet.toml", "pyproject.toml"])
def test_config_with_a_utf8_bom_is_read(tmp_path, capsys, monkeypatch, name):
    body = (
        'fail-on = "warning"\n'
        if name == "datavet.toml"
        else '[tool.datavet]\nfail-on = "warning"\n'
    )
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + body.encode())
    train = _csv(tmp_path / "train.csv", "a,label", [f"{i},{i % 2}" for i in range(40)])
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(capsys, ["audit", train, "--format", "concise"])
    assert code in (0, 1) and "fail-on 'warning'" in err + out, (code, err)
    code, out, err = _cli(
        capsys, ["audit", train, "--config", tmp_path / name, "--format", "concise"]
    )
    assert code in (0, 1) and "fail-on 'warning'" in err + out, (code, err)


# -- D2: UTF-16 CSV --------------------------------------------------------------------------

TEXT = "a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n"


@pytest.mark.parametrize(
    "codec, named, words",
    [
        ("utf-16", "utf-16", "byte-order mark FF FE"),
        ("utf-16-le", "utf-16-le", "every other byte"),
        ("utf-16-be", "utf-16-be", "every other byte"),
    ],
)
def test_utf16_csv_says_so_and_the_encoding_reads_it(tmp_path, capsys, codec, named, words):
    path = tmp_path / "d2.csv"
    path.write_bytes(TEXT.encode(codec))
    code, out, err = _cli(capsys, ["audit", path])
    _one_line_error(code, out, err, names="d2.csv", words=("UTF-16", words, f"--encoding {named}"))
    code, out, err = _cli(capsys, ["audit", path, "--encoding", named, "--format", "json"])
    assert code in (0, 1), err
    payload = json.loads(out)
    names = [c["name"] for c in payload["datasets"]["train"]["columns"]]
    assert names == ["a", "b"] and payload["target"] == "label"
    assert payload["datasets"]["train"]["rows"] == 4


def test_utf16_big_endian_bom_is_named(tmp_path, capsys):
    path = tmp_path / "be.csv"
    path.write_bytes(b"\xfe\xff" + TEXT.encode("utf-16-be"))
    code, out, err = _cli(capsys, ["audit", path])
    _one_line_error(code, out, err, names="be.csv", words=("FE FF", "--encoding utf-16"))


def test_utf8_csv_is_not_taken_for_utf16(tmp_path, capsys):
    path = tmp_path / "ok.csv"
    path.write_text(TEXT, encoding="utf-8")
    code, out, err = _cli(capsys, ["audit", path, "--format", "json"])
    assert code in (0, 1) and "UTF-16" not in err, err


def test_empty_target_on_the_command_line_is_refused(tmp_path, capsys):
    """``--target ''`` used to fall back to finding a target by its name; now it is refused."""
    data = tmp_path / "d.csv"
    data.write_text("x,label\n1,0\n2,1\n3,0\n4,1\n")
    code, out, err = _cli(capsys, ["audit", data, "--target", ""])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "empty column name" in err

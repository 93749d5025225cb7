"""Bad input: exit 2, one line on stderr naming the file and the problem, no traceback, nothing
on stdout (DESIGN: CLI and machine contract; REFERENCE 3.3 bad-input matrix)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
import datavet.sources.csv as csv_module
from datavet.auditors.nan_values import NanValues
from datavet.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *, names=None, problem=()):
    """Exit 2; stdout empty; stderr exactly one line 'datavet: error: ...' that names the file
    (``names``) and says what is wrong (every pattern of ``problem``, case-insensitive)."""
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("datavet: error:"), line
    if names is not None:
        assert names in line, line
    for pattern in problem:
        assert re.search(pattern, line, re.IGNORECASE), (pattern, line)
    return line


def _good_frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "label": rng.permutation(np.arange(n) % 2),
        }
    )


@pytest.fixture
def good_csv(tmp_path):
    path = tmp_path / "good.csv"
    _good_frame().to_csv(path, index=False)
    return path


@pytest.fixture
def good_parquet(tmp_path):
    path = tmp_path / "good.parquet"
    _good_frame(400, 1).to_parquet(path, index=False)
    return path


# --------------------------------------------------------------------------------------------
# each bad input, in process


def _case(tmp_path: Path, kind: str) -> tuple[Path, list[str]]:
    """Make one bad input; return its path and the patterns its error line must contain."""
    if kind == "missing":
        return tmp_path / "nope.csv", [r"no such file"]
    if kind == "empty-dir":
        d = tmp_path / "emptydir"
        d.mkdir()
        (d / "readme.txt").write_text("no parquet here")
        return d, [r"no parquet files"]
    if kind == "zero-bytes":
        p = tmp_path / "empty.csv"
        p.write_bytes(b"")
        return p, [r"empty|0 bytes"]
    if kind == "header-only":
        p = tmp_path / "header.csv"
        p.write_text("a,b,label\n")
        return p, [r"no (data )?rows|0 rows|empty"]
    if kind in ("truncated-parquet", "five-byte-parquet", "garbage-parquet"):
        p = tmp_path / f"{kind}.parquet"
        if kind == "truncated-parquet":
            _good_frame(500).to_parquet(p, index=False)
            data = p.read_bytes()
            p.write_bytes(data[: len(data) // 2])
        elif kind == "five-byte-parquet":
            p.write_bytes(b"PAR1\x00")
        else:
            p.write_bytes(bytes(np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8)))
        return p, [r"parquet", r"corrupt|not a readable|magic|footer|invalid"]
    if kind == "latin1-csv":
        p = tmp_path / "latin.csv"
        p.write_bytes("name,label\ncaf\xe9,1\nthe,0\n".encode("latin-1"))
        return p, [r"utf-?8"]
    if kind == "duplicate-columns":
        p = tmp_path / "dup.csv"
        p.write_text("a,b,a,label\n1,2,3,0\n4,5,6,1\n")
        return p, [r"duplicate", r"'a'"]
    if kind == "pickle":
        p = tmp_path / "data.pkl"
        _good_frame().to_pickle(p)
        return p, [r"pickle", r"refuse"]
    if kind == "unknown-extension":
        p = tmp_path / "data.xyz"
        p.write_text("a,label\n1,0\n")
        return p, [r"unsupported|unknown", r"\.xyz"]
    raise AssertionError(kind)


BAD_INPUTS = [
    "missing",
    "empty-dir",
    "zero-bytes",
    "header-only",
    "truncated-parquet",
    "five-byte-parquet",
    "garbage-parquet",
    "latin1-csv",
    "duplicate-columns",
    "pickle",
    "unknown-extension",
]


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_bad_train_input(kind, tmp_path, capsys):
    path, problem = _case(tmp_path, kind)
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label"])
    assert_one_line_error(code, out, err, names=path.name, problem=problem)


@pytest.mark.parametrize("kind", ["missing", "truncated-parquet", "latin1-csv", "pickle"])
def test_bad_test_input_names_the_test_file(kind, tmp_path, capsys, good_csv):
    path, problem = _case(tmp_path, kind)
    code, out, err = run_cli(capsys, ["audit", good_csv, "--test", path, "--target", "label"])
    line = assert_one_line_error(code, out, err, names=path.name, problem=problem)
    assert "good.csv" not in line


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_bad_input_exit_zero_still_exits_2(kind, tmp_path, capsys):
    path, problem = _case(tmp_path, kind)
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label", "--exit-zero"])
    assert_one_line_error(code, out, err, names=path.name, problem=problem)


def test_bad_input_json_format_prints_no_payload(tmp_path, capsys):
    path, problem = _case(tmp_path, "truncated-parquet")
    code, out, err = run_cli(capsys, ["audit", path, "--format", "json"])
    assert_one_line_error(code, out, err, names=path.name, problem=problem)


def test_non_utf8_byte_after_the_first_block(tmp_path, capsys, monkeypatch):
    """A latin-1 byte far into the file, after the block the column types were inferred from
    (a string column), must still be a one-line UTF-8 error, not an internal error."""
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 1024)
    path = tmp_path / "late_latin.csv"
    with path.open("wb") as fh:
        fh.write(b"name,label\n")
        fh.write(b"".join(f"w{i},{i % 2}\n".encode() for i in range(3000)))
        fh.write("caf\xe9,1\n".encode("latin-1"))
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label"])
    assert_one_line_error(code, out, err, names=path.name, problem=[r"utf-?8"])


def test_corrupt_file_inside_parquet_directory(tmp_path, capsys):
    d = tmp_path / "ds"
    d.mkdir()
    frame = _good_frame(200)
    frame.iloc[:100].to_parquet(d / "part-0.parquet", index=False)
    frame.iloc[100:].to_parquet(d / "part-1.parquet", index=False)
    data = (d / "part-1.parquet").read_bytes()
    (d / "part-1.parquet").write_bytes(data[: len(data) // 2])
    code, out, err = run_cli(capsys, ["audit", d, "--target", "label"])
    assert_one_line_error(code, out, err, names="part-1.parquet", problem=[r"parquet"])


def test_zero_row_parquet(tmp_path, capsys):
    path = tmp_path / "zero.parquet"
    pq.write_table(
        pa.table({"a": pa.array([], pa.float64()), "label": pa.array([], pa.int64())}), path
    )
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label"])
    assert_one_line_error(
        code, out, err, names=path.name, problem=[r"no (data )?rows|0 rows|empty"]
    )


# --------------------------------------------------------------------------------------------
# target column


@pytest.mark.parametrize("given", ["lable", "Label", "labels"])
def test_target_absent_lists_columns_and_suggests(given, good_csv, capsys):
    code, out, err = run_cli(capsys, ["audit", good_csv, "--target", given])
    line = assert_one_line_error(
        code, out, err, names="good.csv", problem=[re.escape(repr(given)), r"not found"]
    )
    assert "did you mean 'label'" in line
    for col in ("'a'", "'b'", "'label'"):
        assert col in line


def test_target_absent_without_close_match(good_csv, capsys):
    code, out, err = run_cli(capsys, ["audit", good_csv, "--target", "zzzzzz"])
    line = assert_one_line_error(
        code, out, err, names="good.csv", problem=[r"'zzzzzz'", r"not found"]
    )
    assert "did you mean" not in line
    assert "'label'" in line  # still lists the columns


# --------------------------------------------------------------------------------------------
# usage errors


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_rule_selector(flag, good_csv, capsys):
    code, out, err = run_cli(capsys, ["audit", good_csv, "--target", "label", flag, "Z999"])
    assert_one_line_error(code, out, err, problem=[r"Z999", r"unknown"])


def test_unknown_rule_in_a_comma_list(good_csv, capsys):
    code, out, err = run_cli(
        capsys, ["audit", good_csv, "--target", "label", "--select", "V001,nope-rule"]
    )
    assert_one_line_error(code, out, err, problem=[r"nope-rule"])


# --------------------------------------------------------------------------------------------
# through a real process


def _subprocess(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "datavet", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def test_subprocess_missing_file(tmp_path):
    missing = tmp_path / "absent.parquet"
    proc = _subprocess("audit", missing, "--target", "label")
    assert_one_line_error(
        proc.returncode, proc.stdout, proc.stderr, names="absent.parquet", problem=[r"no such file"]
    )


def test_subprocess_missing_file_exit_zero(tmp_path):
    missing = tmp_path / "absent.csv"
    proc = _subprocess("audit", missing, "--exit-zero", "--format", "json")
    assert_one_line_error(
        proc.returncode, proc.stdout, proc.stderr, names="absent.csv", problem=[r"no such file"]
    )


def test_subprocess_truncated_parquet(tmp_path):
    path, problem = _case(tmp_path, "truncated-parquet")
    proc = _subprocess("audit", path, "--target", "label")
    assert_one_line_error(
        proc.returncode, proc.stdout, proc.stderr, names=path.name, problem=problem
    )


def test_subprocess_target_typo(good_csv):
    proc = _subprocess("audit", good_csv, "--target", "lable")
    line = assert_one_line_error(
        proc.returncode, proc.stdout, proc.stderr, names="good.csv", problem=[r"'lable'"]
    )
    assert "did you mean 'label'" in line


# --------------------------------------------------------------------------------------------
# exit codes of audits that ran


def _warnings_only(tmp_path) -> Path:
    """A table whose only problem is a constant feature (F001, a warning)."""
    rng = np.random.default_rng(5)
    n = 200
    a = rng.normal(size=n)
    # The label follows `a` with noise: real but imperfect signal (no B001, B002 or B003).
    label = (a + rng.normal(size=n) > 0).astype(int)
    frame = pd.DataFrame({"a": a, "c": np.full(n, 3.0), "label": label})
    path = tmp_path / "warn.csv"
    frame.to_csv(path, index=False)
    report = datavet.audit(path, target="label")
    assert [f.code for f in report.findings] == ["F001"]
    assert {f.severity for f in report.findings} == {datavet.Severity.WARNING}
    return path


def test_fail_on_warning_turns_warnings_into_exit_1(tmp_path, capsys):
    path = _warnings_only(tmp_path)
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label"])
    assert code == 0
    assert "F001" in out
    code, out, _ = run_cli(capsys, ["audit", path, "--target", "label", "--fail-on", "warning"])
    assert code == 1
    assert "F001" in out
    code, _, _ = run_cli(capsys, ["audit", path, "--target", "label", "--fail-on", "info"])
    assert code == 1
    code, _, _ = run_cli(
        capsys, ["audit", path, "--target", "label", "--fail-on", "warning", "--exit-zero"]
    )
    assert code == 0


def test_exit_zero_with_findings(capsys):
    argv = [
        "audit",
        SAMPLE / "planted_train.csv",
        "--test",
        SAMPLE / "planted_test.csv",
        "--target",
        "label",
    ]
    code, out, err = run_cli(capsys, argv)
    assert code == 1
    code, out2, err2 = run_cli(capsys, [*argv, "--exit-zero"])
    assert code == 0
    # the findings are still reported; the verdict line says which exit code the process used
    assert out2.replace("(exit 0 with --exit-zero)", "(exit 1)") == out
    assert out2.rstrip().endswith("(exit 0 with --exit-zero)")
    assert "V001" in out2 and "error" not in err2.lower()


def test_clean_sample_exits_0(capsys):
    code, out, err = run_cli(
        capsys,
        [
            "audit",
            SAMPLE / "clean_train.parquet",
            "--test",
            SAMPLE / "clean_test.parquet",
            "--target",
            "label",
        ],
    )
    assert code == 0
    assert "0 findings" in out
    assert "Traceback" not in err


def test_crashed_rule_exits_2_even_with_exit_zero(good_csv, capsys, monkeypatch):
    def boom(self, ctx):
        raise RuntimeError("boom in rule")

    monkeypatch.setattr(NanValues, "check", boom)
    for extra in ([], ["--exit-zero"]):
        code, out, err = run_cli(capsys, ["audit", good_csv, "--target", "label", *extra])
        assert code == 2
        assert "V001" in out and "boom in rule" in out  # the rule is reported as crashed
        assert "Traceback" not in out + err

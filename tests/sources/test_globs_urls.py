"""Globs, directories of CSV and Arrow files, file:// URLs, and where a report may not be
written (inside a directory or glob input)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pytest

import datavet
from datavet.cli import main
from datavet.sources import open_source
from datavet.sources.fs import glob_regex


def frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"a": rng.normal(size=n).round(4), "b": rng.normal(size=n), "label": np.arange(n) % 2}
    )


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, *patterns) -> str:
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:")
    for p in patterns:
        assert re.search(p, line, re.IGNORECASE), (p, line)
    return line


def table(source) -> pd.DataFrame:
    return pa.Table.from_batches([b for _, b in source.batches(batch_rows=16)]).to_pandas()


@pytest.fixture
def parts(tmp_path):
    """data/part-0..2.parquet and the same rows as data/csv/part-0..2.csv, plus clutter."""
    df = frame(90)
    data = tmp_path / "data"
    (data / "csv" / "deeper").mkdir(parents=True)
    for i in range(3):
        df.iloc[30 * i : 30 * (i + 1)].to_parquet(data / f"part-{i}.parquet", index=False)
    for i in range(2):
        df.iloc[30 * i : 30 * (i + 1)].to_csv(data / "csv" / f"part-{i}.csv", index=False)
    df.iloc[60:].to_csv(data / "csv" / "deeper" / "part-2.csv", index=False)
    (data / "README.md").write_text("not data")
    return tmp_path, df


def test_glob_of_parquet_files(parts, monkeypatch):
    root, df = parts
    monkeypatch.chdir(root)
    source = open_source("data/*.parquet")
    pd.testing.assert_frame_equal(table(source), df)
    assert source.name == "data/*.parquet"


def test_recursive_glob_of_csv_files_in_path_order(parts, monkeypatch):
    root, df = parts
    monkeypatch.chdir(root)
    source = open_source("data/**/*.csv")
    # csv/deeper/part-2.csv sorts before csv/part-0.csv: path order, said in the notes
    got = table(source)
    want = pd.concat([df.iloc[60:], df.iloc[:60]], ignore_index=True)
    pd.testing.assert_frame_equal(got, want)
    report = datavet.audit("data/**/*.csv", target="label", select=["V001"])
    assert any("3 CSV files taken in file path order" in n for n in report.notes)


def test_directory_of_csv_files(parts):
    root, df = parts
    source = open_source(root / "data" / "csv")
    assert source.num_rows is None or source.num_rows == 90
    assert len(table(source)) == 90


def test_directory_of_feather_files(tmp_path):
    df = frame(40)
    d = tmp_path / "arrow"
    d.mkdir()
    for i in range(2):
        feather.write_feather(
            pa.Table.from_pandas(df.iloc[20 * i : 20 * (i + 1)], preserve_index=False),
            d / f"part-{i}.feather",
        )
    source = open_source(d)
    pd.testing.assert_frame_equal(table(source), df)


def test_csv_files_with_columns_in_another_order(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    df = frame(20)
    df.iloc[:10].to_csv(d / "a.csv", index=False)
    df.iloc[10:][["label", "b", "a"]].to_csv(d / "b.csv", index=False)
    pd.testing.assert_frame_equal(table(open_source(d)), df)


def test_glob_through_the_cli(parts, capsys, monkeypatch):
    root, _ = parts
    monkeypatch.chdir(root)
    code, out, err = run_cli(
        capsys, ["audit", "data/*.parquet", "--test", "data/csv/*.csv", "--format", "json"]
    )
    assert code in (0, 1), err
    assert '"S001"' in out  # the first 60 rows are in both


# --------------------------------------------------------------------------------------------
# bad patterns and directories: one line, exit 2


def test_glob_that_matches_nothing(parts, capsys, monkeypatch):
    root, _ = parts
    monkeypatch.chdir(root)
    code, out, err = run_cli(capsys, ["audit", "data/*.orc"])
    one_line_error(code, out, err, r"data/\*\.orc", r"no files match")


def test_glob_under_a_missing_directory(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["audit", tmp_path / "nowhere" / "*.csv"])
    one_line_error(code, out, err, r"nowhere", r"not a directory|no files match")


def test_glob_that_matches_a_file_of_no_known_format(parts, capsys, monkeypatch):
    root, _ = parts
    monkeypatch.chdir(root)
    code, out, err = run_cli(capsys, ["audit", "data/*"])
    one_line_error(code, out, err, r"README\.md", r"not a Parquet, CSV or Arrow")


def test_mixed_formats_are_a_one_line_error(parts, capsys, monkeypatch):
    root, _ = parts
    monkeypatch.chdir(root)
    code, out, err = run_cli(capsys, ["audit", "data/**/part-*"])
    one_line_error(code, out, err, r"mixes file formats", r"3 CSV", r"3 Parquet")


def test_directory_without_data_files(tmp_path, capsys):
    d = tmp_path / "empty"
    d.mkdir()
    (d / "notes.txt").write_text("x")
    code, out, err = run_cli(capsys, ["audit", d])
    one_line_error(code, out, err, r"empty", r"no Parquet files")


def test_pickle_matched_by_a_glob_is_refused(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    frame(5).to_pickle(d / "part-0.pkl")
    code, out, err = run_cli(capsys, ["audit", f"{d}/part-*"])
    one_line_error(code, out, err, r"part-0\.pkl", r"pickle files are refused")


# --------------------------------------------------------------------------------------------
# file:// URLs


def test_file_url_to_a_file_and_a_directory(parts):
    root, df = parts
    path = root / "data" / "part-1.parquet"
    source = open_source(path.as_uri())
    pd.testing.assert_frame_equal(table(source), df.iloc[30:60].reset_index(drop=True))
    assert len(table(open_source((root / "data" / "csv").as_uri()))) == 90


def test_file_url_with_escaped_characters(tmp_path):
    d = tmp_path / "with space"
    d.mkdir()
    frame(10).to_csv(d / "t.csv", index=False)
    uri = (d / "t.csv").as_uri()
    assert "%20" in uri
    assert len(table(open_source(uri))) == 10


def test_missing_file_url(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["audit", (tmp_path / "gone.csv").as_uri()])
    one_line_error(code, out, err, r"gone\.csv", r"no such file")


def test_unknown_url_scheme(capsys):
    code, out, err = run_cli(capsys, ["audit", "nosuchscheme://bucket/x.csv"])
    one_line_error(code, out, err, r"nosuchscheme", r"nosuchscheme")


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*.csv", ["a.csv", ".csv"], ["d/a.csv", "a.csvx"]),
        ("**/*.csv", ["a.csv", "d/a.csv", "d/e/a.csv"], ["a.tsv"]),
        (
            "site=*/part-?.parquet",
            ["site=A/part-0.parquet"],
            ["part-0.parquet", "x/part-10.parquet"],
        ),
        ("part-[0-2].csv", ["part-1.csv"], ["part-3.csv"]),
        ("part-[!0].csv", ["part-1.csv"], ["part-0.csv"]),
        ("d/**", ["d/a", "d/e/f"], ["e/a"]),
    ],
)
def test_glob_regex(pattern, yes, no):
    regex = glob_regex(pattern)
    assert all(regex.fullmatch(p) for p in yes)
    assert not any(regex.fullmatch(p) for p in no)

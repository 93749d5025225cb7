"""Directories and globs read as one table: symbolic links (cycles, links to nothing), names
that are not UTF-8, pandas' stored index in some part files, empty part files, files whose
content contradicts their name, an unreachable GCS store, and one pipe given for both splits."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.cli import main
from datavet.errors import InputError
from datavet.sources import fs as sources_fs
from datavet.sources import open_source

CSV = "a,label\n1,0\n,1\n3,0\n"


def rows(src) -> int:
    return sum(batch.num_rows for _, batch in src.batches())


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, *patterns) -> str:
    assert code == 2 and out == "" and "Traceback" not in err, (code, err)
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:")
    for p in patterns:
        assert re.search(p, line, re.IGNORECASE), (p, line)
    return line


def latin1(path) -> str:
    """A path holding the Latin-1 byte 0xE9 (not UTF-8), as ``os.listdir`` returns it."""
    return os.fsdecode(os.fsencode(str(path)).replace(b"@", b"\xe9"))


def make(path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")


# --------------------------------------------------------------------------------------------
# symbolic links


def test_a_link_cycle_is_read_once_with_a_note(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "f.csv").write_text(CSV)
    (d / "loop").symlink_to("../d")
    src = open_source(str(d))
    assert rows(src) == 3
    assert src.order_note is None  # one file, not 41
    (note,) = src.notes
    assert "loop" in note and "read once" in note


def test_two_links_to_one_folder_read_it_once(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "f.csv").write_text(CSV)
    d = tmp_path / "d"
    d.mkdir()
    (d / "a").symlink_to(shared)
    (d / "b").symlink_to(shared)
    (d / "g.csv").symlink_to(shared / "f.csv")  # a second name for the same file
    src = open_source(str(d))
    assert rows(src) == 3
    assert len(src.notes) == 2


def test_a_cycle_under_a_recursive_glob_is_read_once(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "f.csv").write_text(CSV)
    (d / "loop").symlink_to("../d")
    src = open_source(str(d / "**" / "*.csv"))
    assert rows(src) == 3


@pytest.mark.parametrize("glob", [False, True])
def test_a_broken_link_is_an_error_naming_it(tmp_path, glob):
    d = tmp_path / "d"
    d.mkdir()
    (d / "part-0.csv").write_text(CSV)
    (d / "part-1.csv").symlink_to("../.git/annex/objects/xx/part-1.csv")
    with pytest.raises(InputError, match=r"part-1\.csv: is a broken symbolic link"):
        open_source(str(d / "*.csv") if glob else str(d))


def test_a_broken_link_that_is_no_table_is_ignored(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "part-0.csv").write_text(CSV)
    (d / "README.md").symlink_to("nowhere.md")
    (d / "_part-1.csv").symlink_to("nowhere.csv")  # hidden, as _SUCCESS is
    assert rows(open_source(str(d))) == 3


def test_a_broken_link_fails_the_cli_with_one_line(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "part-0.csv").write_text(CSV)
    (d / "part-1.csv").symlink_to("missing.csv")
    one_line_error(*run_cli(capsys, ["audit", "--isolated", d]), "part-1.csv", "broken")


# --------------------------------------------------------------------------------------------
# names that are not UTF-8


def test_a_directory_holding_a_name_that_is_not_utf8(tmp_path):
    make(latin1(tmp_path / "d" / "caf@.csv"), CSV.encode())
    make(str(tmp_path / "d" / "b.csv"), CSV.encode())
    assert rows(open_source(str(tmp_path / "d"))) == 6
    assert rows(open_source(str(tmp_path / "d" / "*.csv"))) == 6


def test_a_directory_whose_own_name_is_not_utf8(tmp_path):
    d = latin1(tmp_path / "dir@")
    make(os.path.join(d, "p.csv"), CSV.encode())
    report = datavet.audit(d, target="label", select="V001")
    assert report.datasets["train"]["rows"] == 3
    assert [f.code for f in report.findings] == ["V001"]


def test_parquet_and_arrow_files_with_names_that_are_not_utf8(tmp_path):
    table = pa.table({"a": [1.0, None, 3.0], "label": [0, 1, 0]})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    make(latin1(tmp_path / "pq" / "caf@.parquet"), sink.getvalue().to_pybytes())
    make(str(tmp_path / "pq" / "b.parquet"), sink.getvalue().to_pybytes())
    make(latin1(tmp_path / "hive" / "site=caf@" / "p.parquet"), sink.getvalue().to_pybytes())
    sink = pa.BufferOutputStream()
    feather.write_feather(table, sink)
    make(latin1(tmp_path / "ar" / "caf@.arrow"), sink.getvalue().to_pybytes())
    make(str(tmp_path / "ar" / "b.arrow"), sink.getvalue().to_pybytes())
    assert rows(open_source(str(tmp_path / "pq"))) == 6
    assert rows(open_source(latin1(tmp_path / "pq" / "caf@.parquet"))) == 3
    assert rows(open_source(str(tmp_path / "ar"))) == 6
    assert rows(open_source(latin1(tmp_path / "ar" / "caf@.arrow"))) == 3
    hive = open_source(str(tmp_path / "hive"))
    assert hive.schema.names == ["a", "label", "site"]
    values = {v for _, b in hive.batches() for v in b.column("site").to_pylist()}
    assert values == {"caf\\xe9"}  # the byte shown escaped


# --------------------------------------------------------------------------------------------
# pandas' index in some part files


def test_pandas_index_in_some_part_files_is_left_out(tmp_path):
    df = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0], "label": [0, 1, 0, 1, 0, 1]})
    d = tmp_path / "d"
    d.mkdir()
    df.iloc[:3].to_parquet(d / "part-0.parquet")  # a plain range: no index column
    df.iloc[[3, 5, 4]].to_parquet(d / "part-1.parquet")  # shuffled: __index_level_0__
    assert "__index_level_0__" in pq.read_schema(d / "part-1.parquet").names
    src = open_source(str(d))
    assert src.schema.names == ["x", "label"]
    assert rows(src) == 6
    assert any("__index_level_0__" in n and "1 of 2 files" in n for n in src.notes)
    report = datavet.audit(str(d), target="label", select="V001")
    (finding,) = report.findings
    assert finding.code == "V001" and finding.examples == (2,)


def test_pandas_index_in_some_arrow_files_is_left_out(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]})
    feather.write_feather(pa.Table.from_pandas(df.iloc[:2]), d / "a.arrow")
    feather.write_feather(pa.Table.from_pandas(df.iloc[[3, 2]], preserve_index=True), d / "b.arrow")
    src = open_source(str(d))
    assert src.schema.names == ["x", "label"] and rows(src) == 4


# --------------------------------------------------------------------------------------------
# empty part files


def test_an_empty_csv_part_file_is_left_out_with_a_note(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "part-00000.csv").write_text("a,b,label\n1,2,0\n3,,1\n")
    (d / "part-00001.csv").write_bytes(b"")
    src = open_source(str(d))
    assert rows(src) == 2
    (note,) = src.notes
    assert "part-00001.csv" in note and "0 bytes" in note


def test_only_empty_csv_files_is_an_error_that_says_empty(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "part-00000.csv").write_bytes(b"")
    with pytest.raises(InputError, match=r"part-00000\.csv: file is empty \(0 bytes\)"):
        open_source(str(d))


def test_an_empty_parquet_part_file_is_an_error(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    pq.write_table(pa.table({"a": [1.0], "label": [0]}), d / "part-0.parquet")
    (d / "part-1.parquet").write_bytes(b"")
    with pytest.raises(InputError, match=r"part-1\.parquet: file is empty \(0 bytes\)"):
        open_source(str(d))


# --------------------------------------------------------------------------------------------
# files whose content contradicts their name; extensions


def test_parquet_named_csv_says_what_it_is(tmp_path, capsys):
    path = tmp_path / "train.csv"
    pq.write_table(pa.table({"a": [1.0, None], "label": [0, 1]}), path)
    one_line_error(*run_cli(capsys, ["audit", "--isolated", path]), r"is a Parquet file")


def test_feather_v1_says_what_it_is(tmp_path, capsys):
    path = tmp_path / "train.feather"
    with warnings.catch_warnings():  # v1 is deprecated, but still written
        warnings.simplefilter("ignore", DeprecationWarning)
        feather.write_feather(pa.table({"a": [1.0, None], "label": [0, 1]}), path, version=1)
    one_line_error(*run_cli(capsys, ["audit", "--isolated", path]), r"Feather v1", r"Feather v2")


def test_arrows_stream_extension_is_read(tmp_path):
    path = tmp_path / "train.arrows"
    table = pa.table({"a": [1.0, None, 3.0], "label": [0, 1, 0]})
    with pa.ipc.new_stream(path, table.schema) as writer:
        writer.write_table(table)
    assert rows(open_source(str(path))) == 3


def test_unsupported_format_lists_every_extension_read(tmp_path):
    path = tmp_path / "train.xyz"
    path.write_text(CSV)
    with pytest.raises(InputError) as info:
        open_source(str(path))
    for suffix in (".csv", ".tab", ".pq", ".arrows", ".ipc", ".npy", ".npz", ".pt", ".zst"):
        assert suffix in str(info.value)


# --------------------------------------------------------------------------------------------
# standard input twice; an unreachable GCS store


def test_stdin_for_both_splits_is_a_usage_error(capsys):
    code, out, err = run_cli(capsys, ["audit", "--isolated", "-", "--test", "-"])
    assert code == 2 and "read only once" in err and "empty" not in err


def test_gcs_client_gives_up_retrying(monkeypatch):
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")
    filesystem = sources_fs.locate("gs://bucket/train.parquet").filesystem
    options = filesystem.__reduce__()[1][0]
    assert options["retry_time_limit"] is not None
    assert options["retry_time_limit"].total_seconds() <= 30


def test_unreachable_gcs_store_is_one_line(tmp_path):
    with socket.socket() as s:  # a port on this machine where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}"}
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", "--isolated", "gs://bucket/train.parquet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,  # the default retry policy runs for 15 minutes
    )
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("datavet: error: gs://bucket/train.parquet:")
    assert "Could not connect" in line and "error_info" not in line


def test_a_directory_says_which_files_were_read_with_another_delimiter(tmp_path):
    import datavet

    (tmp_path / "p1.csv").write_text("a,b,label\n1,2,0\n3,4,1\n")
    (tmp_path / "p2.csv").write_text("a;b;label\n5;6;0\n7;8;1\n")
    report = datavet.audit(tmp_path, target="label", baselines=False)
    assert report.datasets["train"]["rows"] == 4
    (note,) = [n for n in report.notes if "delimiter" in n]
    assert "p2.csv: read with delimiter ';'" in note and "p1.csv" not in note


def test_a_link_that_sorts_first_never_hides_the_real_folder_or_file(tmp_path):
    import datavet

    root = tmp_path / "hive"
    for year in (2020, 2021):
        (root / f"year={year}").mkdir(parents=True)
        pd.DataFrame({"x": np.arange(100.0), "label": np.arange(100) % 2}).to_parquet(
            root / f"year={year}" / "part.parquet", index=False
        )
    (root / "latest").symlink_to("year=2021")  # sorts before "year=..."
    report = datavet.audit(root, target="label", baselines=False)
    assert report.datasets["train"]["rows"] == 200
    assert not [f for f in report.findings if f.code in ("V001", "F001")]  # year kept on all rows
    assert any("left out" in n and "latest" in n for n in report.notes)
    # a file under two names: the real one is read
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "z.csv").write_text("x,label\n1,0\n2,1\n")
    (flat / "a.csv").symlink_to("z.csv")
    report = datavet.audit(flat, target="label", baselines=False)
    assert report.datasets["train"]["rows"] == 2
    assert any("left out" in n and "a.csv, another name for" in n for n in report.notes)

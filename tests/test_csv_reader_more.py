"""CSV values read exactly: whole numbers beyond int64 (uint64, else text), blank cells and
padded markers in numeric columns as missing, Excel's ``sep=`` line, a given delimiter that
reads the file as one column, and an unclosed quote named by its line."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import datavet
import datavet.sources.csv as csv_module
from datavet.cli import main
from datavet.errors import InputError
from datavet.sources import SchemaRestart
from datavet.sources.csv import open_csv


def read(path: Path, **kwargs):
    """The source and its columns as Python lists, restarting as the scan does."""
    source = open_csv(path, path.name, **kwargs)
    for _ in range(10):
        try:
            values: dict[str, list] = {n: [] for n in source.schema.names}
            for _, batch in source.batches():
                assert batch.schema.types == source.schema.types
                for n in batch.schema.names:
                    values[n] += batch.column(n).to_pylist()
            return source, values
        except SchemaRestart:
            continue
    raise AssertionError("no end to restarts")


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    return code, *capsys.readouterr()


HASH = 12345678901234567000


@pytest.fixture
def small_blocks(monkeypatch):
    """4 KiB blocks: a value a few hundred rows down lies beyond the first block."""
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 4096)


def test_hashes_beyond_int64_read_as_uint64_other_numbers_unchanged(tmp_path):
    rows = [f"{HASH + i},{9123456789012345678 - i},{i * 0.5},{i * 1.5e19}" for i in range(50)]
    source, values = read(write(tmp_path / "h.csv", ["h,a,b,c", *rows]))
    assert source.schema.types == [pa.uint64(), pa.int64(), pa.float64(), pa.float64()]
    assert values["h"] == [HASH + i for i in range(50)]
    assert values["a"][0] == 9123456789012345678


def test_hashes_beyond_int64_deep_in_file(tmp_path, small_blocks):
    lines = ["h,x"] + [f"{i},{i}" for i in range(2000)] + [f"{HASH + i},1" for i in range(5)]
    source, values = read(write(tmp_path / "h.csv", lines))
    assert source.schema.field("h").type == pa.uint64()
    assert values["h"][-5:] == [HASH + i for i in range(5)]


@pytest.mark.parametrize(
    "tail", ["-5", "1.5", "123456789012345678901234"], ids=["negative", "fraction", "beyond"]
)
def test_hashes_no_64_bit_integer_holds_read_as_text(tmp_path, small_blocks, tail):
    lines = ["h,x"] + [f"{HASH + i},{i}" for i in range(2000)] + [f"{tail},1"]
    source, values = read(write(tmp_path / "h.csv", lines))
    assert source.schema.field("h").type == pa.string()
    assert len(set(values["h"])) == 2001


def test_audit_of_distinct_hashes_reports_no_overlap(tmp_path, capsys):
    def split(name, base):
        rows = [f"{base + i},{i % 5},{i % 2}" for i in range(50)]
        return write(tmp_path / name, ["user_hash,clicks,label", *rows])

    train, test = split("train.csv", HASH), split("test.csv", HASH + 100)
    argv = ["audit", "--isolated", "--no-baselines", train, "--test", test, "--target", "label"]
    code, out, _ = run_cli(capsys, argv)
    for rule in ("F001", "S001", "S002"):
        assert rule not in out, out


def test_blank_and_padded_markers_missing_in_numbers(tmp_path):
    lines = ["x,y,t"] + [f"{i * 0.25:8.3f},{i:6d}, w{i} " for i in range(60)]
    lines[11], lines[12] = "     NaN,  NA ,  ", "  NA ,     7, NA "
    lines[51] = "        ,    , 5 "
    source, values = read(write(tmp_path / "p.csv", lines))
    assert source.schema.types == [pa.float64(), pa.int64(), pa.string()]
    assert values["t"][10:12] == ["  ", " NA "] and values["t"][50] == " 5 "  # text as it is
    assert [i for i, v in enumerate(values["x"]) if v is None] == [10, 11, 50]
    assert [i for i, v in enumerate(values["y"]) if v is None] == [10, 50]
    assert values["x"][12] == 3.0


def test_blank_cell_deep_in_file(tmp_path, small_blocks):
    lines = ["x,y"] + [f"{i:8d},{i}" for i in range(2000)] + ["        ,1", "   NA ,2", "  2.5 ,3"]
    source, values = read(write(tmp_path / "p.csv", lines))
    assert source.schema.field("x").type == pa.float64()
    assert values["x"][-3:] == [None, None, 2.5]


def test_audit_counts_blank_cell_as_missing(tmp_path, capsys):
    lines = ["x,y,label"] + [f"{i * 0.01:8.3f},{i * 3.7:10.1f},{i % 2}" for i in range(200)]
    lines[11] = lines[12] = "     NaN,       1.0,0"
    lines[51] = "        ,       2.0,1"
    path = write(tmp_path / "p.csv", lines)
    code, out, _ = run_cli(capsys, ["audit", "--isolated", "--no-baselines", path])
    assert code == 1
    assert "rows 10, 11, 50" in out, out


def test_excel_sep_line(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("sep=;\na;b;label\n1;2;0\n3;;1\n4;5;0\n6;7;1\n")
    source, values = read(path)
    assert source.schema.names == ["a", "b", "label"]
    assert values["b"] == [2, None, 5, 7]
    assert "'sep=;'" in source.read_note
    code, out, _ = run_cli(capsys, ["audit", "--isolated", "--no-baselines", path])
    assert code == 1 and "V001" in out


def test_excel_sep_line_with_given_delimiter(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("sep=;\na;b\n1;2\n3;4\n")
    source, _ = read(path, delimiter=";")
    assert source.schema.names == ["a", "b"]


def test_given_delimiter_that_reads_one_column_is_refused(tmp_path, capsys):
    lines = ["a,b,label"] + [f"{i},{i * 2},{i % 2}" for i in range(20)]
    path = write(tmp_path / "comma.csv", lines)
    with pytest.raises(InputError, match=r"';'.*one column.*','"):
        open_csv(path, "comma.csv", delimiter=";")
    code, out, err = run_cli(capsys, ["audit", "--isolated", path, "--delimiter", ";"])
    assert code == 2 and out == ""
    assert "comma.csv" in err and len(err.splitlines()) == 1
    # a file that is one column reads as one column
    names = write(tmp_path / "names.csv", ["name", '"Smith, John"', '"Doe, Jane"', "Roe"])
    source, values = read(names, delimiter=";")
    assert values == {"name": ["Smith, John", "Doe, Jane", "Roe"]}


def test_unclosed_quote_names_its_line(tmp_path):
    rows = ["t,x,label"] + [('"oops' if i == 3 else "ok") + f",{i},{i % 2}" for i in range(50)]
    path = write(tmp_path / "q.csv", rows)
    with pytest.raises(InputError, match=r"quote opened on line 5 is never closed"):
        read(path)


def test_a_directory_where_only_some_files_hold_ids_beyond_int64(tmp_path):
    # one file's IDs fit int64, the other's need uint64: the column is read exactly (as text)
    small = ["h,x,label"] + [f"{i},{i * 0.5},{i % 2}" for i in range(100)]
    big = ["h,x,label"] + [
        f"{18446744073709551000 + i},{'' if i == 43 else i * 0.5},{i % 2}" for i in range(100)
    ]
    (tmp_path / "a.csv").write_text("\n".join(small) + "\n")
    (tmp_path / "b.csv").write_text("\n".join(big) + "\n")
    report = datavet.audit(tmp_path, target="label", baselines=False)
    (v001,) = [f for f in report.findings if f.code == "V001"]
    assert v001.columns == ("x",) and v001.examples == (143,)
    assert not [f for f in report.findings if f.code in ("F001", "S002")]

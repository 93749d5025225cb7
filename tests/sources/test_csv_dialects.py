"""Reading CSV text as it comes: the delimiter sniffed (``,`` ``;`` tab ``|``) or given
(``--delimiter``), encodings that are not text codecs refused, fields longer than a block,
standard input / FIFOs / ``<(...)``, and file names that are not valid UTF-8."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import datavet
import datavet.sources.csv as csv_module
from datavet.cli import main
from datavet.errors import InputError, UsageError
from datavet.sources import open_source
from datavet.sources.csv import sniff_delimiter

ROOT = Path(__file__).resolve().parents[2]


def run_cli(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *, names=None, problem=()) -> str:
    """Exit 2, nothing on stdout, one stderr line 'datavet: error: ...' naming the input."""
    assert "Traceback" not in err and code == 2 and out == "", (code, err)
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:"), line
    assert names is None or names in line, line
    for pattern in problem:
        assert re.search(pattern, line, re.IGNORECASE), (pattern, line)
    return line


def columns(report, split="train") -> list[str]:
    return [c["name"] for c in report.datasets[split]["columns"]]


def rows(n=30):
    return [(i, i * 0.5, "cat" if i % 3 else "dog", i % 2) for i in range(n)]


def write(path: Path, delimiter: str, n=30, encoding="utf-8") -> Path:
    lines = [delimiter.join(["a", "b", "c", "label"])]
    lines += [delimiter.join(str(v) for v in r) for r in rows(n)]
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


# -- sniffing -------------------------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_other_delimiters_are_sniffed_and_said(tmp_path, delimiter):
    path = write(tmp_path / "data.csv", delimiter)
    report = datavet.audit(path, target="label", select="V001")
    assert columns(report) == ["a", "b", "c"]
    assert report.datasets["train"]["rows"] == 30
    shown = "tab" if delimiter == "\t" else repr(delimiter)
    assert any(f"delimiter {shown}" in n and "sniffed" in n for n in report.notes), report.notes


def test_comma_file_has_no_delimiter_note(tmp_path):
    report = datavet.audit(write(tmp_path / "data.csv", ","), target="label", select="V001")
    assert columns(report) == ["a", "b", "c"]
    assert not any("delimiter" in n for n in report.notes)


def test_semicolon_file_with_decimal_commas(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("x;y;label\n" + "".join(f"{i};{i},5;{i % 2}\n" for i in range(20)))
    report = datavet.audit(path, target="label", select="V001")
    assert columns(report) == ["x", "y"]


def test_quoted_fields_do_not_fool_the_sniffer(tmp_path):
    """A comma file whose text holds ';' inside quotes stays a comma file."""
    path = tmp_path / "q.csv"
    path.write_text("name,note,label\n" + "".join(f'n{i},"a;b;c;d",{i % 2}\n' for i in range(20)))
    report = datavet.audit(path, target="label", select="V001")
    assert columns(report) == ["name", "note"]


def test_one_column_file_stays_one_column(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("label\n" + "".join(f"{i % 2}\n" for i in range(20)))
    report = datavet.audit(path, target="label", select="L001")
    assert report.datasets["train"]["rows"] == 20


def test_sniff_delimiter_unit():
    assert sniff_delimiter("a;b\n1,5;2\n", ",", True) == ";"
    assert sniff_delimiter("a,b\n1,2\n", ",", True) == ","
    assert sniff_delimiter("a\tb\n1\t2\n", ",", True) == "\t"
    assert sniff_delimiter("text\nhello, world\n", ",", True) is None  # header has no comma
    assert sniff_delimiter('a|b\n"x|y"|2\n3|4\n', ",", True) == "|"
    # a cut last line is left out
    assert sniff_delimiter("a;b;c\n1;2;3\n4;5", ",", False) == ";"


# -- --delimiter / delimiter= ---------------------------------------------------------------------


def test_delimiter_argument_overrides_the_sniffer(tmp_path):
    path = write(tmp_path / "data.csv", ";")
    # a ';' file read with ',' would be one column: refused, naming the delimiter that fits
    with pytest.raises(InputError, match=r"','.*one column.*';'"):
        datavet.audit(path, delimiter=",", select="V001")
    report = datavet.audit(path, delimiter=";", target="label", select="V001")
    assert columns(report) == ["a", "b", "c"]
    assert any("delimiter ';'" in n for n in report.notes)


def test_cli_delimiter_tab_name(tmp_path, capsys):
    path = write(tmp_path / "data.txt.csv", "\t")
    code, out, err = run_cli(capsys, ["audit", path, "--delimiter", "tab", "--format", "json"])
    assert code in (0, 1), err
    assert '"name": "c"' in out


def test_cli_bad_delimiter_is_a_usage_error(tmp_path, capsys):
    path = write(tmp_path / "data.csv", ",")
    code, out, err = run_cli(capsys, ["audit", path, "--delimiter", ";;"])
    assert_one_line_error(code, out, err, problem=["delimiter", "one"])


# -- encodings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["rot13", "base64", "hex", "zlib"])
def test_codecs_that_are_not_text_encodings_are_usage_errors(tmp_path, capsys, codec):
    path = write(tmp_path / "data.csv", ",")
    code, out, err = run_cli(capsys, ["audit", path, "--encoding", codec])
    assert_one_line_error(code, out, err, problem=[codec, "not a text encoding"])


def test_transcoded_file_reads_its_text(tmp_path):
    path = tmp_path / "latin.csv"
    text = "name;label\n" + "".join(f"café{i};{i % 2}\n" for i in range(20))
    path.write_bytes(text.encode("latin-1"))
    source = open_source(path, encoding="latin-1")
    (_, batch), *_ = list(source.batches())
    assert batch.column("name")[0].as_py() == "café0"
    assert source.delimiter == ";"


def test_transcoded_file_restarts_on_a_late_type_change(tmp_path, monkeypatch):
    """A column that widens after the first block restarts the scan through the transcoder."""
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 1024)
    path = tmp_path / "late.csv"
    body = "".join(f"{i},{i % 2}\n" for i in range(2000)) + "é,1\n"
    path.write_bytes(("a,label\n" + body).encode("cp1252"))
    report = datavet.audit(path, target="label", encoding="cp1252", select="V004")
    (a,) = [c for c in report.datasets["train"]["columns"] if c["name"] == "a"]
    assert a["kind"] == "string" and report.datasets["train"]["rows"] == 2001


@pytest.mark.parametrize("encoding", [None, "cp1252"])
def test_header_without_line_end_says_so(tmp_path, capsys, encoding):
    path = tmp_path / "h.csv"
    path.write_bytes(b"a,b,label")
    argv = ["audit", path] + (["--encoding", encoding] if encoding else [])
    code, out, err = run_cli(capsys, argv)
    assert_one_line_error(code, out, err, names="h.csv", problem=["no data rows", "header"])


# -- long fields ----------------------------------------------------------------------------------


def test_field_longer_than_a_block_grows_the_block(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 4096)
    path = tmp_path / "long.csv"
    big = "y" * 50_000  # 12 blocks
    path.write_text("a,b,label\n" + "1,x,0\n" * 50 + f"2,{big},1\n" + "3,z,0\n" * 50)
    report = datavet.audit(path, target="label", select="V001")
    assert report.datasets["train"]["rows"] == 101


def test_field_longer_than_the_bound_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 1024)
    monkeypatch.setattr(csv_module, "_MAX_BLOCK_BYTES", 8192)
    path = tmp_path / "long.csv"
    path.write_text("a,b,label\n" + "1,x,0\n" * 5 + f"2,{'y' * 100_000},1\n")
    code, out, err = run_cli(capsys, ["audit", path])
    line = assert_one_line_error(code, out, err, names="long.csv", problem=["longer than"])
    assert "block size?" not in line


# -- pipes ----------------------------------------------------------------------------------------


def _feed(path: str, data: bytes) -> threading.Thread:
    """Write ``data`` into the FIFO at ``path``; 20 s later, open it for writing once more, so a
    reader that (wrongly) opens it a second time gets an end of file and the test fails rather
    than hangs."""

    def run():
        with open(path, "wb") as fh:
            fh.write(data)

    def unblock():
        time.sleep(20)
        with open(path, "wb"):
            pass

    t = threading.Thread(target=run, daemon=True)
    t.start()
    threading.Thread(target=unblock, daemon=True).start()
    return t


def test_fifo_is_read(tmp_path):
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), write(tmp_path / "src.csv", ";").read_bytes())
    report = datavet.audit(fifo, target="label", select="V001")
    writer.join(5)
    assert columns(report) == ["a", "b", "c"] and report.datasets["train"]["rows"] == 30
    assert report.datasets["train"]["source"] == str(fifo)


def test_process_substitution_dev_fd_is_read(tmp_path):
    """``<(...)`` is a /dev/fd/N path onto a pipe, with no suffix: the format is sniffed."""
    data = write(tmp_path / "src.csv", ",").read_bytes()
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, data), os.close(w)), daemon=True)
    writer.start()
    try:
        report = datavet.audit(f"/dev/fd/{r}", target="label", select="V001")
    finally:
        os.close(r)
    writer.join(5)
    assert columns(report) == ["a", "b", "c"] and report.datasets["train"]["rows"] == 30


def test_stdin_dash_is_read():
    data = b"a,b,label\n" + b"".join(f"{i},{i * 2},{i % 2}\n".encode() for i in range(30))
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", "-", "--select", "V001", "--format", "json"],
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert b'"rows": 30' in proc.stdout and b"<stdin>" in proc.stdout


def test_empty_pipe_is_an_empty_input(tmp_path):
    fifo = tmp_path / "empty.csv"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), b"")
    with pytest.raises(InputError, match="empty"):
        datavet.audit(fifo)
    writer.join(5)


# -- file names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_file_name_not_valid_utf8_is_read(tmp_path, suffix):
    import gzip

    name = os.fsdecode(b"caf\xe9" + suffix.encode())
    path = tmp_path / name
    data = write(tmp_path / "src.csv", ",").read_bytes()
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    report = datavet.audit(path, target="label", select="V001")
    assert columns(report) == ["a", "b", "c"] and report.datasets["train"]["rows"] == 30


def test_unknown_encoding_is_usage_error(tmp_path):
    with pytest.raises(UsageError, match="^unknown encoding 'no-such-codec'"):
        datavet.audit(write(tmp_path / "d.csv", ","), encoding="no-such-codec")
    with pytest.raises(UsageError, match="^encoding 'rot13' is not a text encoding"):
        datavet.audit(write(tmp_path / "d.csv", ","), encoding="rot13")
    with pytest.raises(UsageError, match="^delimiter ';;': expected one ASCII character"):
        datavet.audit(write(tmp_path / "d.csv", ","), delimiter=";;")


def test_fifo_with_a_memory_budget_is_read_whole(tmp_path):
    """The --max-memory estimate must not read (and so consume) the head of a pipe."""
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), write(tmp_path / "src.csv", ",").read_bytes())
    report = datavet.audit(fifo, target="label", select="V001", max_memory="1GB")
    writer.join(5)
    assert columns(report) == ["a", "b", "c"] and report.datasets["train"]["rows"] == 30


def test_config_dataset_delimiter(tmp_path, monkeypatch, capsys):
    """``delimiter`` in a ``[tool.datavet.datasets.NAME]`` table reads that dataset's CSVs."""
    # pipes as text would sniff as '|': the config says the file is ';'-separated
    path = tmp_path / "d.csv"
    path.write_text("a|b|c;label\n" + "".join(f"{i}|x|{i};{i % 2}\n" for i in range(30)))
    (tmp_path / "pyproject.toml").write_text(
        "[tool.datavet.datasets.d]\ntrain = 'd.csv'\ntarget = 'label'\ndelimiter = ';'\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["audit", "--select", "V001", "--format", "json"])
    assert code == 0, err
    assert '"name": "a|b|c"' in out


def test_quoted_line_breaks_across_blocks_are_read(tmp_path):
    """Line breaks inside quoted values are valid CSV (pandas writes them for text with
    newlines); pyarrow's fast reader loses its place when one falls on a block boundary. The
    reader then reads again allowing them."""
    import numpy as np

    from datavet.sources.base import SchemaRestart
    from datavet.sources.csv import CsvSource

    n = 4_000
    frame = pd.DataFrame(
        {
            "text": ["line one\nline two, more", "plain"] * (n // 2),
            "x": np.arange(float(n)),
            "label": [0, 1] * (n // 2),
        }
    )
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    source = CsvSource(name="m.csv", format="csv", path=path, block_size=4096, uri="m").open()
    restarts = 0
    while True:  # as the engines do on a restart
        try:
            rows = sum(b.num_rows for _, b in source.batches(1_000))
            break
        except SchemaRestart:
            restarts += 1
            assert restarts < 3
    assert rows == n and source.newlines_in_values
    report = datavet.audit(path, target="label")  # and through the audit, one block
    assert report.datasets["train"]["rows"] == n

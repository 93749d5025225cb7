"""One test per row of the bad-input matrix (REFERENCE.md 3.3), each asserting the answer in the
matrix's last column, through the public API or the CLI.

Where the matrix names a finding code that datavet's rule table does not have, the test asserts
datavet's closest behaviour when that is a sensible reading of the row (say so in the test's
docstring); otherwise it asserts the matrix's answer and fails until datavet gives it.

Readings (matrix answer -> what is asserted):
- rows 1, 2 ``empty-dataset`` finding, exit 1 -> exit 2, one line "empty (0 bytes)" / "no data
  rows": an empty split cannot be audited, and README documents exit 2 for an empty input.
- row 8 ``duplicate-columns`` error finding -> exit 2 naming the name and both positions: a
  column cannot be addressed by a name two columns share.
- row 10 "imbalance with an explicit NaN bucket" -> the label summary keeps the missing count
  beside the class counts (they add up to the rows).
- row 15 ``unsafe-format`` -> exit 2, one line that says it is a pickle / unsafe and refused.
- row 3 ``too-few-rows``, row 7 ``--encoding``/byte offset, row 14 expected-vs-actual bytes,
  row 17 unseen category in a test feature, row 21 ``--max-memory``/``resource-limit``, row 22
  "state the row order": asserted as the matrix says.
"""

from __future__ import annotations

import json
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.output import render

from .helpers import RAW_CONTROL, assert_one_line_error, run_child, run_cli

# A hang guard for the child-process tests below, not a speed target (speed is measured in
# bench/): each finishes in well under 90 s on a loaded 2-core machine, so 900 s only ever
# catches a run that never ends.
HANG_GUARD_S = 900


def _frame(n=120, seed=0, **extra):
    rng = np.random.default_rng(seed)
    cols = {"a": rng.normal(size=n), "b": rng.normal(size=n)}
    cols.update(extra)
    cols.setdefault("label", rng.permutation(np.arange(n) % 2))
    return pd.DataFrame(cols)


def _codes(report, column=None) -> list[str]:
    return sorted(f.code for f in report.findings if column is None or column in (f.columns or ()))


def _outcome(report, code):
    return next(o for o in report.outcomes if o.code == code)


def _strict_json(text: str) -> dict:
    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name} in the payload")

    return json.loads(text, parse_constant=no_constants)


# ---------------------------------------------------------------------------------------------
# 1. 0-byte CSV


def test_row_01_zero_byte_csv(tmp_path, capsys):
    """Matrix: ``empty-dataset`` ("file is 0 bytes"), no traceback. Reading: exit 2 with one line
    saying the file is empty (0 bytes) -- as train and as test; the API raises InputError."""
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    good = tmp_path / "good.csv"
    _frame().to_csv(good, index=False)
    for argv in (
        ["audit", empty, "--target", "label"],
        ["audit", good, "--test", empty, "--target", "label"],
        ["audit", empty, "--format", "json", "--exit-zero"],
    ):
        code, out, err = run_cli(capsys, argv)
        assert_one_line_error(code, out, err, names="empty.csv", problem=[r"0 bytes"])
    with pytest.raises(datavet.InputError, match="0 bytes"):
        datavet.audit(empty)


# ---------------------------------------------------------------------------------------------
# 2. header-only CSV (0 rows)


def test_row_02_header_only_csv(tmp_path, capsys):
    """Matrix: ``empty-dataset`` (0 rows), never NaN statistics. Reading: exit 2, one line "no
    data rows", nothing on stdout (no stats at all), for CSV, Parquet and Arrow alike."""
    csv = tmp_path / "header.csv"
    csv.write_text("a,b,label\n")
    parquet = tmp_path / "zero.parquet"
    pq.write_table(_frame().iloc[:0].pipe(pa.Table.from_pandas, preserve_index=False), parquet)
    arrow = tmp_path / "zero.arrow"
    table = pa.Table.from_pandas(_frame().iloc[:0], preserve_index=False)
    with pa.OSFile(str(arrow), "wb") as sink, ipc.new_file(sink, table.schema):
        pass
    for path in (csv, parquet, arrow):
        code, out, err = run_cli(capsys, ["audit", path, "--target", "label", "--format", "json"])
        assert_one_line_error(code, out, err, names=path.name, problem=[r"no (data )?rows|0 rows"])
    with pytest.raises(datavet.InputError, match=r"no (data )?rows|0 rows"):
        datavet.audit(_frame().iloc[:0], target="label")
    with pytest.raises(datavet.InputError):
        datavet.audit(_frame(), _frame().iloc[:0], target="label")


# ---------------------------------------------------------------------------------------------
# 3. one row


def _one_row_report():
    frame = pd.DataFrame({"a": [1.5], "b": [1000.0], "c": ["x"], "label": [1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "Degrees of freedom <= 0" must not leak
        return datavet.audit(frame, target="label")


def test_row_03_one_row():
    """Matrix: suppress constant-feature / scale checks (n < 2); baselines skipped with a reason;
    no RuntimeWarning leaks; the JSON has no NaN."""
    report = _one_row_report()
    for code in ("F001", "F002", "F003", "B001", "B002", "B003"):
        outcome = _outcome(report, code)
        assert outcome.status.value == "skipped", (code, outcome)
        assert outcome.reason
    assert not report.crashed
    # no constant / scale / baseline finding; the one finding is the too-few-rows warning (S009,
    # asserted by the next test)
    assert _codes(report) == ["S009"]
    assert report.exit_code() in (0, 1)
    payload = _strict_json(report.to_json())
    (col,) = [c for c in payload["datasets"]["train"]["columns"] if c["name"] == "a"]
    assert col["std"] is None or col["std"] == 0  # never NaN for a single value


def test_row_03_one_row_warns_too_few_rows():
    """Matrix: a ``too-few-rows`` *warning*. A one-row training set must not read as a clean
    pass ("0 findings"): some warning-level finding must say train has too few rows."""
    report = _one_row_report()
    warned = [
        f
        for f in report.findings
        if f.severity >= datavet.Severity.WARNING and re.search(r"\brows?\b", f.message)
    ]
    assert warned, [f.code for f in report.findings]


# ---------------------------------------------------------------------------------------------
# 4. all-NaN column


def test_row_04_all_nan_column(tmp_path):
    """Matrix: a single all-missing finding (error for the label, warning for a feature; V001's
    own severity stands for a feature); no constant or scale finding for that column."""
    n = 200
    rng = np.random.default_rng(4)
    frame = _frame(n, big=rng.normal(size=n) * 1000, empty=np.full(n, np.nan))
    path = tmp_path / "allnan.csv"
    frame.to_csv(path, index=False)  # written as empty cells: a column of Arrow type null
    for data in (frame, path):
        report = datavet.audit(data, target="label")
        about = [f for f in report.findings if "empty" in f.columns]
        assert [f.code for f in about] == ["V001"], [(f.code, f.message) for f in about]
        assert about[0].n_affected == n
        assert re.search(r"entirely|all \d+", about[0].message)
        assert not report.crashed
    # an all-NaN label: V003 (an error), and the label rules skip instead of crashing
    report = datavet.audit(_frame(n, label=np.full(n, np.nan)), target="label")
    labels = [f for f in report.findings if "label" in f.columns]
    assert [f.code for f in labels] == ["V003"]
    assert labels[0].severity == datavet.Severity.ERROR and labels[0].n_affected == n
    assert not report.crashed
    assert report.exit_code() == 1


# ---------------------------------------------------------------------------------------------
# 5. +-inf values


def test_row_05_inf_values():
    """Matrix: inf counted apart from NaN (``inf-values``); statistics on the finite values;
    dtype dispatch before isfinite (an object column holding inf and text does not crash)."""
    n = 100
    rng = np.random.default_rng(5)
    a = rng.normal(size=n)
    a[3], a[4], a[5] = np.inf, -np.inf, np.nan
    mixed = pd.Series([float("inf"), "text", 1.0, None] * (n // 4), dtype=object)
    report = datavet.audit(_frame(n, a=a, mixed=mixed), target="label")
    assert not report.crashed
    v002 = [f for f in report.findings if f.code == "V002" and "a" in f.columns]
    v001 = [f for f in report.findings if f.code == "V001" and "a" in f.columns]
    assert len(v002) == 1 and v002[0].n_affected == 2 and list(v002[0].examples) == [3, 4]
    assert len(v001) == 1 and v001[0].n_affected == 1 and list(v001[0].examples) == [5]
    col = next(c for c in report.to_dict()["datasets"]["train"]["columns"] if c["name"] == "a")
    finite = a[np.isfinite(a)]
    assert (col["nan"], col["inf"]) == (1, 2)
    assert col["mean"] == pytest.approx(finite.mean())
    assert col["std"] in (  # population or sample std, but of the finite values
        pytest.approx(finite.std(ddof=0), rel=1e-9),
        pytest.approx(finite.std(ddof=1), rel=1e-9),
    )
    assert (col["min"], col["max"]) == (pytest.approx(finite.min()), pytest.approx(finite.max()))
    _strict_json(report.to_json())


# ---------------------------------------------------------------------------------------------
# 6. mixed-type column


def test_row_06_mixed_type_column(tmp_path):
    """Matrix: ``mixed-types`` with counts (numeric-parsable vs not) and at most 5 escaped sample
    offenders; the column is treated as categorical by the other checks."""
    n = 200_000
    rng = np.random.default_rng(6)
    # ("n/a", "NA", "null" ... are read as missing by the CSV reader, as pandas does)
    offenders = ["foo", "unknown", "?", "\x1b[31mred", "1,234", "12 kg", "-", "x"]
    values = rng.integers(0, 1000, n).astype(str).astype(object)
    where = np.sort(rng.choice(n, len(offenders), replace=False))
    values[where] = offenders
    frame = pd.DataFrame(
        {
            "m": values,
            "a": rng.normal(size=n),
            "big": rng.normal(size=n) * 1e4,
            "label": rng.integers(0, 2, n),
        }
    )
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    report = datavet.audit(path, target="label", baselines=False)
    (v004,) = [f for f in report.findings if f.code == "V004"]
    assert v004.columns == ("m",)
    assert v004.n_affected == len(offenders)
    assert v004.metrics["numeric"] == n - len(offenders)
    assert v004.metrics["text"] == len(offenders)
    assert 1 <= len(v004.examples) <= 5
    assert set(v004.examples) <= set(where.tolist())
    assert "foo" in v004.message
    assert not RAW_CONTROL.search(v004.message)  # offenders are shown escaped
    # categorical for the other checks: no numeric statistics, not part of the scale check
    col = next(c for c in report.to_dict()["datasets"]["train"]["columns"] if c["name"] == "m")
    assert col["kind"] == "string"
    assert all("m" not in f.columns for f in report.findings if f.code in ("F003", "V002"))


# ---------------------------------------------------------------------------------------------
# 7. non-UTF-8 CSV


def _latin1_csv(tmp_path) -> Path:
    path = tmp_path / "latin.csv"
    # 'é' (0xE9) is at byte offset 14: b"name,label\n" is 11 bytes, then b"caf".
    path.write_bytes("name,label\ncaf\xe9,1\ncaf\xe9,0\n".encode("latin-1"))
    return path


def test_row_07_non_utf8_csv(tmp_path, capsys):
    """Matrix: exit 2 ``input-encoding`` with the byte offset and "use --encoding latin-1";
    never a silent replacement."""
    path = _latin1_csv(tmp_path)
    code, out, err = run_cli(capsys, ["audit", path, "--target", "label"])
    line = assert_one_line_error(code, out, err, names=path.name, problem=[r"utf-?8"])
    assert "\ufffd" not in line
    assert re.search(r"(byte|offset|position)\D{0,20}\b14\b", line), line
    assert "--encoding" in line, line


def test_row_07_encoding_option_reads_latin1(tmp_path, capsys):
    """The hint must work: ``--encoding latin-1`` reads the file, values intact (no U+FFFD)."""
    path = _latin1_csv(tmp_path)
    code, out, err = run_cli(
        capsys, ["audit", path, "--target", "label", "--encoding", "latin-1", "--format", "json"]
    )
    assert code in (0, 1), err
    payload = _strict_json(out)
    assert "\ufffd" not in out
    f001 = [f for f in payload["findings"] if f["code"] == "F001"]
    assert f001 and "café" in f001[0]["message"]


# ---------------------------------------------------------------------------------------------
# 8. duplicate column names


def test_row_08_duplicate_column_names(tmp_path, capsys):
    """Matrix: detected on the raw header / Arrow schema before any renaming, listing positions.
    Reading: exit 2 naming the duplicated name and both positions; a real column named 'a.1'
    (what pandas would rename the second 'a' to) is not mistaken for anything."""
    csv = tmp_path / "dup.csv"
    csv.write_text("a,a.1,a,label\n1,2,3,0\n4,5,6,1\n")
    code, out, err = run_cli(capsys, ["audit", csv, "--target", "label"])
    line = assert_one_line_error(code, out, err, names="dup.csv", problem=[r"duplicate", r"'a'"])
    assert re.search(r"\b0\b.*\b2\b", line), line  # positions 0 and 2
    assert "'a.1'" not in line

    table = pa.Table.from_arrays(
        [pa.array([1.0, 2.0]), pa.array([3.0, 4.0]), pa.array([0, 1])], names=["x", "x", "label"]
    )
    parquet = tmp_path / "dup.parquet"
    pq.write_table(table, parquet)
    code, out, err = run_cli(capsys, ["audit", parquet, "--target", "label"])
    assert_one_line_error(code, out, err, names="dup.parquet", problem=[r"duplicate", r"'x'"])
    for data in (table, pd.DataFrame([[1, 2, 0], [3, 4, 1]], columns=["x", "x", "label"])):
        with pytest.raises(datavet.InputError, match="duplicate"):
            datavet.audit(data, target="label")


# ---------------------------------------------------------------------------------------------
# 9. label column missing


def test_row_09_missing_label_column(tmp_path, capsys):
    """Matrix: exit 2 ``label-not-found`` with the available columns and the closest match."""
    path = tmp_path / "train.csv"
    _frame().to_csv(path, index=False)
    code, out, err = run_cli(capsys, ["audit", path, "--target", "Lable"])
    line = assert_one_line_error(
        code, out, err, names="train.csv", problem=[r"'Lable'", "not found"]
    )
    assert "did you mean 'label'" in line
    for col in ("'a'", "'b'", "'label'"):
        assert col in line
    with pytest.raises(datavet.InputError, match="not found"):
        datavet.audit(_frame(), target="nope")


# ---------------------------------------------------------------------------------------------
# 10. NaN labels


def test_row_10_nan_labels(tmp_path):
    """Matrix: ``missing-labels`` error with the count and first rows; class counts keep the
    missing labels apart (an explicit bucket, adding up to the rows); baselines leave those rows
    out and say so; integer labels stay integers."""
    rng = np.random.default_rng(10)
    n = 100
    missing = [3, 7, 50]
    lines = ["a,b,label"]
    for i in range(n):
        lab = "" if i in missing else str(i % 2)
        lines.append(f"{rng.normal()},{rng.normal()},{lab}")
    path = tmp_path / "nanlabel.csv"
    path.write_text("\n".join(lines) + "\n")
    report = datavet.audit(path, target="label")
    (v003,) = [f for f in report.findings if f.code == "V003"]
    assert v003.severity == datavet.Severity.ERROR
    assert v003.n_affected == 3 and list(v003.examples) == missing
    label = report.to_dict()["datasets"]["train"]["label"]
    assert label["missing"] == 3
    assert sum(c["count"] for c in label["classes"]) + label["missing"] == n
    assert sorted(c["value"] for c in label["classes"]) == [0, 1]
    assert all(isinstance(c["value"], int) for c in label["classes"])
    notes = " ".join(report.baselines["notes"])
    assert re.search(r"\b3\b.*(without a label|missing|left out)", notes), notes


# ---------------------------------------------------------------------------------------------
# 11. huge-cardinality labels


def test_row_11_huge_cardinality_labels_integer_ids():
    """Matrix: ``high-cardinality-label`` (unique/rows) suggesting an ID or regression; only the
    top-k classes are reported."""
    n = 200_000
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"a": rng.normal(size=n), "label": rng.permutation(n)})
    report = datavet.audit(frame, target="label", baselines=False)
    (l005,) = [f for f in report.findings if f.code == "L005"]
    assert re.search(r"ID|regression", l005.message)
    assert len(report.to_dict()["datasets"]["train"]["label"]["classes"]) <= 50


@pytest.mark.slow
def test_row_11_huge_cardinality_text_labels_with_baselines(tmp_path):
    """Matrix: per-class tables and one-hot baselines must not explode. 200,000 rows with
    200,000 distinct text labels, baselines on (the default), in a child limited to 4 GiB of
    address space: the audit finishes (exit 0 or 1, never a crash or a kill), reports L005, and
    lists at most 50 classes."""
    n = 200_000
    rng = np.random.default_rng(11)
    path = tmp_path / "ids.parquet"
    pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "label": [f"id{i}" for i in rng.permutation(n)],
        }
    ).to_parquet(path, index=False)
    child = run_child(
        ["audit", path, "--target", "label", "--format", "json"],
        timeout=HANG_GUARD_S,
        memory_bytes=4 << 30,
    )
    assert not child.timed_out, f"hung: no end after {child.seconds:.0f} s"
    crashed = []
    if child.stdout.strip():
        payload = _strict_json(child.stdout)
        crashed = [
            (o["code"], (o["reason"] or "")[:200])
            for o in payload["outcomes"]
            if o["status"] == "crashed"
        ]
    assert child.returncode in (0, 1), (child.returncode, child.stderr[-500:], crashed)
    assert "L005" in {f["code"] for f in payload["findings"]}
    assert len(payload["datasets"]["train"]["label"]["classes"]) <= 50


# ---------------------------------------------------------------------------------------------
# 12. train/test with different schemas or dtypes


def test_row_12_train_test_different_schemas(tmp_path):
    """Matrix: ``schema-mismatch`` listing per-column differences; the overlap check runs on
    the common columns after canonicalisation: int and float of the same values match (2 of 3
    rows), and so do numbers stored as text in one split."""
    train = pd.DataFrame(
        {
            "a": np.array([0, 1, 2], dtype=np.int64),
            "b": [1.5, 2.5, 3.5],
            "c": ["x", "y", "z"],
            "label": [0, 1, 0],
        }
    )
    test = pd.DataFrame(
        {
            "a": np.array([0.0, 1.0, 7.0]),
            "b": [1.5, 2.5, 9.5],
            "d": [1, 2, 3],
            "label": [0, 1, 1],
        }
    )
    tr, te = tmp_path / "train.parquet", tmp_path / "test.parquet"
    train.to_parquet(tr, index=False)
    test.to_parquet(te, index=False)
    report = datavet.audit(tr, te, target="label", baselines=False)
    s004 = [f for f in report.findings if f.code == "S004"]
    errors = [f for f in s004 if f.severity == datavet.Severity.ERROR]
    assert errors and "'c'" in errors[0].message and "'d'" in errors[0].message
    assert any("a" in f.columns and "int64" in f.message and "double" in f.message for f in s004)
    (s001,) = [f for f in report.findings if f.code == "S001"]
    assert s001.n_affected == 2 and list(s001.examples) == [0, 1]

    as_text = test.drop(columns="d").assign(a=["0", "1", "7"])
    report = datavet.audit(train.drop(columns="c"), as_text, target="label", baselines=False)
    assert any(
        f.code == "S004" and f.severity == datavet.Severity.ERROR and "a" in f.columns
        for f in report.findings
    )
    (s001,) = [f for f in report.findings if f.code == "S001"]
    assert s001.n_affected == 2


# ---------------------------------------------------------------------------------------------
# 13. corrupt or truncated Parquet


def _flipped_parquet(tmp_path, good: Path | None = None, row_group: int = 0) -> Path:
    """A Parquet file (``good``, else a 5,000-row one) with a run of bytes flipped inside a
    compressed data page of ``row_group``, at the first offset where pyarrow itself fails to
    read it."""
    if good is None:
        rng = np.random.default_rng(13)
        good = tmp_path / "good.parquet"
        _frame(5000, 13, label=rng.integers(0, 2, 5000)).to_parquet(
            good, index=False, compression="snappy"
        )
    data = good.read_bytes()
    meta = pq.ParquetFile(good).metadata.row_group(row_group).column(0)
    start = meta.data_page_offset
    for off in range(start + 16, start + meta.total_compressed_size - 16, 97):
        bad = bytearray(data)
        for k in range(8):
            bad[off + k] ^= 0xFF
        path = tmp_path / "flipped.parquet"
        path.write_bytes(bytes(bad))
        try:
            pq.read_table(path)
        except (pa.ArrowException, OSError):
            return path
    pytest.fail("no byte flip in the first data page made pyarrow fail")


def test_row_13_corrupt_or_truncated_parquet(tmp_path, capsys):
    """Matrix: exit 2 ``input-corrupt`` naming the file and the reader's message; never partial
    statistics reported as complete (stdout stays empty, even with --exit-zero)."""
    whole = tmp_path / "whole.parquet"
    _frame(500).to_parquet(whole, index=False)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    tiny = tmp_path / "tiny.parquet"
    tiny.write_bytes(b"PAR1\x00")
    flipped = _flipped_parquet(tmp_path)
    for path in (truncated, tiny, flipped):
        for extra in ([], ["--exit-zero", "--format", "json"]):
            code, out, err = run_cli(capsys, ["audit", path, "--target", "label", *extra])
            assert_one_line_error(
                code,
                out,
                err,
                names=path.name,
                problem=[r"parquet|row group|corrupt", r"corrupt|not a readable|magic|footer|\("],
            )
    # a corrupt row group read together with its neighbours (small row groups are read in
    # batches of the size asked for) is named alone
    grouped = tmp_path / "grouped.parquet"
    rng = np.random.default_rng(5)
    table = pa.table({"x": rng.normal(size=5000), "label": rng.integers(0, 2, 5000)})
    pq.write_table(table, grouped, row_group_size=1000, compression="snappy")
    code, out, err = run_cli(
        capsys, ["audit", _flipped_parquet(tmp_path, grouped, row_group=3), "--target", "label"]
    )
    assert_one_line_error(code, out, err, names="flipped.parquet", problem=[r"row group 3 "])
    # a corrupt fragment of a dataset directory is named
    d = tmp_path / "ds"
    d.mkdir()
    (d / "part-0.parquet").write_bytes(whole.read_bytes())
    (d / "part-1.parquet").write_bytes(flipped.read_bytes())
    code, out, err = run_cli(capsys, ["audit", d, "--target", "label"])
    assert_one_line_error(code, out, err, names="part-1.parquet")


# ---------------------------------------------------------------------------------------------
# 14. truncated .npy


def test_row_14_truncated_npy(tmp_path, capsys):
    """Matrix: validate the header (magic, version, shape x itemsize vs size) first -> exit 2
    ``input-corrupt`` with expected vs actual bytes; a cut header is a one-line error too."""
    whole = tmp_path / "whole.npy"
    np.save(whole, np.random.default_rng(14).normal(size=(1000, 4)))
    data = whole.read_bytes()
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes(data[: len(data) // 2])
    code, out, err = run_cli(capsys, ["audit", truncated])
    line = assert_one_line_error(
        code, out, err, names="truncated.npy", problem=[r"truncat|corrupt|short"]
    )
    # expected vs actual: the size the header declares and the size the file holds, in bytes
    numbers = re.findall(r"\d[\d,]*", line.split("truncated.npy", 1)[1])
    assert len(numbers) >= 2 and "bytes" in line, line

    cut_header = tmp_path / "cut_header.npy"
    cut_header.write_bytes(data[:20])
    bad_magic = tmp_path / "bad_magic.npy"
    bad_magic.write_bytes(b"\x93NUMPZ" + data[6:])
    for path in (cut_header, bad_magic):
        code, out, err = run_cli(capsys, ["audit", path])
        assert_one_line_error(
            code, out, err, names=path.name, problem=[r"npy|header|corrupt|truncat|not a valid"]
        )
        assert not re.search(r"unsupported format", err), err


# ---------------------------------------------------------------------------------------------
# 15. pickled formats


class _Payload:
    """Unpickling this creates a marker file: proof that something unpickled it."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _pickled_inputs(tmp_path: Path, marker: Path) -> list[Path]:
    evil = _Payload(str(marker))
    out = []
    pkl = tmp_path / "frame.pkl"
    pkl.write_bytes(pickle.dumps(evil))
    out.append(pkl)
    joblib_file = tmp_path / "model.joblib"
    joblib_file.write_bytes(pickle.dumps(evil))
    out.append(joblib_file)
    npy = tmp_path / "objects.npy"
    np.save(npy, np.array([evil, 1, "x"], dtype=object), allow_pickle=True)
    out.append(npy)
    npz = tmp_path / "objects.npz"
    np.savez(npz, x=np.array([evil, 2], dtype=object), y=np.array([0, 1]))
    out.append(npz)
    try:
        import torch
    except ImportError:  # the torch extra is not installed: the .pt case is left out
        torch = None
    if torch is not None:
        pt = tmp_path / "tensors.pt"
        torch.save({"x": torch.zeros(4, 2), "y": evil}, pt)
        out.append(pt)
    return out


def test_row_15_pickled_formats_refused(tmp_path, capsys):
    """Matrix: object/pickled ``.npy``, ``.pkl``, ``.pt`` refused by default (exit 2,
    ``unsafe-format``) with an explanation; nothing is ever unpickled."""
    marker = tmp_path / "UNPICKLED"
    for path in _pickled_inputs(tmp_path, marker):
        code, out, err = run_cli(capsys, ["audit", path, "--exit-zero"])
        assert_one_line_error(
            code, out, err, names=path.name, problem=[r"pickl|unsafe", r"refus|not (allowed|load)"]
        )
        assert not marker.exists(), f"{path.name}: the payload ran"
    # pickle bytes under a data extension are never unpickled either
    for suffix in (".csv", ".parquet", ".arrow", ".npy"):
        disguised = tmp_path / f"disguised{suffix}"
        disguised.write_bytes(pickle.dumps(_Payload(str(marker))))
        code, out, err = run_cli(capsys, ["audit", disguised])
        assert code in (0, 1, 2) and "Traceback" not in err
        assert not marker.exists(), f"{disguised.name}: the payload ran"


# ---------------------------------------------------------------------------------------------
# 16. bool columns


def test_row_16_bool_columns():
    """Matrix: bool is binary numeric for NaN / constant / imbalance, and left out of the scale
    check."""
    n = 200
    rng = np.random.default_rng(16)
    frame = pd.DataFrame(
        {
            "big": rng.normal(size=n) * 1000,
            "big2": rng.normal(size=n) * 1000,
            "flag": rng.integers(0, 2, n).astype(bool),
            "always": np.ones(n, dtype=bool),
            "maybe": pd.array([True, False, None, True] * (n // 4), dtype="boolean"),
            "label": rng.permutation(np.r_[np.ones(n - 10, bool), np.zeros(10, bool)]),
        }
    )
    report = datavet.audit(frame, target="label", baselines=False)
    assert not report.crashed
    assert _codes(report, "maybe") == ["V001"]
    assert next(f for f in report.findings if f.code == "V001").n_affected == n // 4
    assert _codes(report, "always") == ["F001"]
    assert "L001" in _codes(report, "label")
    # 'flag' (scale ~0.7) would be 1,400x below 'big' if it took part in the scale check
    assert all(f.code != "F003" for f in report.findings), _codes(report)


# ---------------------------------------------------------------------------------------------
# 17. categorical


def _categorical_splits():
    n = 200
    rng = np.random.default_rng(17)
    train = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "c": pd.Categorical(["x"] * n),
            "c2": pd.Categorical(rng.choice(["p", "q", "r"], n)),
            "label": pd.Categorical(rng.permutation(np.r_[["yes"] * (n - 10), ["no"] * 10])),
        }
    )
    test = pd.DataFrame(
        {
            "a": rng.normal(size=50),
            "c": pd.Categorical(["x"] * 50),
            "c2": pd.Categorical(rng.choice(["p", "q", "NEWCAT"], 50)),
            "label": pd.Categorical(rng.choice(["yes", "no", "maybe"], 50)),
        }
    )
    return train, test


def test_row_17_categorical():
    """Matrix: a categorical path (no ``mean`` TypeError): constant, cardinality, unseen
    class in test, imbalance."""
    train, test = _categorical_splits()
    report = datavet.audit(train, test, target="label")
    assert not report.crashed, [(o.code, o.reason) for o in report.crashed]
    assert "F001" in _codes(report, "c")
    assert "L001" in _codes(report, "label")
    l003 = [f for f in report.findings if f.code == "L003"]
    assert l003 and "'maybe'" in l003[0].message
    cols = {c["name"]: c for c in report.to_dict()["datasets"]["train"]["columns"]}
    assert cols["c2"]["distinct"] == 3 and cols["c"]["distinct"] == 1


def test_row_17_categorical_unseen_category_in_test_feature():
    """Matrix: "unseen-category-in-test (train/test category diff)" for a *feature*: a category
    of 'c2' that only test has ('NEWCAT') is named by some finding."""
    train, test = _categorical_splits()
    report = datavet.audit(train, test, target="label")
    named = [f for f in report.findings if "c2" in f.columns and "NEWCAT" in f.message]
    assert named, [(f.code, f.columns) for f in report.findings]


# ---------------------------------------------------------------------------------------------
# 18. datetime with NaT and time zones


def test_row_18_datetime_nat_and_time_zones():
    """Matrix: missing counts include NaT; excluded from the scale check; canonicalised to UTC
    for hashing (the same instants in another zone are the same rows); tz-naive vs tz-aware
    does not crash."""
    n = 200
    rng = np.random.default_rng(18)
    ts = pd.date_range("2024-03-30", periods=n, freq="h", tz="Europe/Berlin")  # crosses DST
    train = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.normal(size=n), "t": ts, "label": rng.integers(0, 2, n)}
    )
    train.loc[[2, 5], "t"] = pd.NaT
    test = train.iloc[:20].copy()
    test["t"] = test["t"].dt.tz_convert("America/New_York")
    report = datavet.audit(train, test, target="label", baselines=False)
    assert not report.crashed
    v001 = {f.split: f for f in report.findings if f.code == "V001" and "t" in f.columns}
    assert v001["train"].n_affected == 2 and list(v001["train"].examples) == [2, 5]
    assert all("t" not in f.columns for f in report.findings if f.code == "F003")
    (s001,) = [f for f in report.findings if f.code == "S001"]
    assert s001.n_affected == 20

    naive = test.assign(t=test["t"].dt.tz_convert("UTC").dt.tz_localize(None))
    report = datavet.audit(train, naive, target="label", baselines=False)
    assert not report.crashed and report.exit_code() in (0, 1)
    _strict_json(report.to_json())


# ---------------------------------------------------------------------------------------------
# 19. extremely wide tables


@pytest.mark.slow
def test_row_19_ten_thousand_columns(tmp_path):
    """Matrix: 1,000 x 10,000 needs column-block kernels and capped O(p^2) work; the HTML shows
    top-N findings and folds the tables: the audit (no baselines) with JSON and HTML output
    finishes, the page stays under 5 MB and the JSON is valid. (How fast: bench/, not here; the
    timeout only catches a hang.)"""
    rng = np.random.default_rng(19)
    p = 10_000
    frame = pd.DataFrame(rng.normal(size=(1000, p)), columns=[f"f{i}" for i in range(p)])
    frame.iloc[:3, ::100] = np.nan  # 100 columns with a finding
    frame["label"] = rng.integers(0, 2, 1000)
    path = tmp_path / "wide.parquet"
    frame.to_parquet(path, index=False)
    html = tmp_path / "wide.html"
    child = run_child(
        ["audit", path, "--target", "label", "--no-baselines", "--format", "json", "--html", html],
        timeout=HANG_GUARD_S,
        memory_bytes=8 << 30,
    )
    assert not child.timed_out, f"hung: 1,000 x 10,000 audit, no end after {child.seconds:.0f} s"
    assert child.returncode == 1, child.stderr[-500:]
    payload = _strict_json(child.stdout)
    (v001,) = [f for f in payload["findings"] if f["code"] == "V001"]  # one card, 100 columns
    assert len(v001["columns"]) == 100 and v001["metrics"]["columns"] == 100
    assert html.stat().st_size < 5_000_000


# ---------------------------------------------------------------------------------------------
# 20. hostile values


HOSTILE = [
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "::error::pwned",
    "\x1b]0;owned\x07\x1b[2J",
    "\x9b31mC1",
    "=cmd|' /C calc'!A0",
]


def test_row_20_hostile_values():
    """Matrix: escaped in HTML and in text; JSON keeps them exactly but as escapes. (Every
    format, in depth: test_hostile_output.py.)"""
    n = 60
    rng = np.random.default_rng(20)
    cols = {name: rng.normal(size=n) for name in HOSTILE}
    for name in HOSTILE:
        cols[name][:2] = np.nan  # V001 names every hostile column
    cols["text"] = [HOSTILE[i % len(HOSTILE)] for i in range(n)]
    cols["label"] = rng.integers(0, 2, n)
    report = datavet.audit(pd.DataFrame(cols), target="label", baselines=False)
    named = {c for f in report.findings for c in f.columns}
    assert set(HOSTILE) <= named
    text = render(report, "text")
    assert not RAW_CONTROL.search(text)
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    payload = report.to_json()
    assert not RAW_CONTROL.search(payload)
    decoded = _strict_json(payload)
    assert set(HOSTILE) <= {c for f in decoded["findings"] for c in f["columns"]}
    page = report.to_html()
    for value in HOSTILE[:2]:
        assert value not in page
    assert len(re.findall(r"<script\b", page)) == 1  # the JSON data block only


# ---------------------------------------------------------------------------------------------
# 21. decompression bombs


def _zeros_parquet(path: Path, rows: int) -> Path:
    pq.write_table(
        pa.table({"x": pa.array(np.zeros(rows)), "label": pa.array(np.zeros(rows, np.int8))}),
        path,
        compression="zstd",
    )
    return path


def test_row_21_decompression_bomb_refused_by_budget(tmp_path, capsys):
    """Matrix: a budget from metadata (rows x schema; .npz member sizes) *before* reading;
    beyond ``--max-memory``: exit 2 ``resource-limit`` with the numbers."""
    bomb = _zeros_parquet(tmp_path / "zeros.parquet", 5_000_000)  # ~40 KB holding 45 MB
    assert bomb.stat().st_size < 200_000
    npz = tmp_path / "zeros.npz"
    np.savez_compressed(npz, x=np.zeros((50_000, 128)), y=np.zeros(50_000, np.int64))
    assert npz.stat().st_size < 200_000
    for path in (bomb, npz):
        code, out, err = run_cli(capsys, ["audit", path, "--max-memory", "16MB"])
        line = assert_one_line_error(code, out, err, names=path.name, problem=[r"memory|resource"])
        assert re.search(r"\d", line.split(path.name, 1)[1]), line  # says how much


@pytest.mark.slow
def test_row_21_parquet_bomb_streams_in_bounded_memory(tmp_path):
    """Without a budget flag the RLE bomb is streamed: 2,000,000 rows of zeros are audited with
    the memory README promises (the batch, plus 24 bytes a row for the row hashes), measured
    against the same file audited without the row-hash rules. Slack: 3x the promise."""
    rows = 2_000_000
    bomb = _zeros_parquet(tmp_path / "zeros.parquet", rows)
    args = ["audit", bomb, "--target", "label", "--no-baselines", "--workers", "1"]
    base = run_child([*args, "--select", "V001"], timeout=HANG_GUARD_S)
    full = run_child(args, timeout=HANG_GUARD_S)
    assert base.returncode in (0, 1) and full.returncode in (0, 1), full.stderr[-300:]
    extra_mb = full.peak_rss_mb - base.peak_rss_mb
    budget_mb = 3 * 24 * rows / 2**20
    assert extra_mb < budget_mb, (
        f"row checks took {extra_mb:.0f} MB over the scan ({extra_mb * 2**20 / rows:.0f} B/row; "
        f"README: 24 B/row); peak {full.peak_rss_mb:.0f} MB"
    )


# ---------------------------------------------------------------------------------------------
# 22. positional drift and row order


def _drift_frame(n=600, seed=22):
    rng = np.random.default_rng(seed)
    label = np.r_[np.ones(100, int), rng.integers(0, 2, n - 100)]
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "label": label})


def test_row_22_positional_drift_shuffled_vs_sorted():
    """Matrix: positional drift needs a stable global row order: a block at the start is found,
    the same rows shuffled are quiet."""
    frame = _drift_frame()
    assert "L002" in _codes(datavet.audit(frame, target="label", baselines=False))
    shuffled = frame.sample(frac=1, random_state=1).reset_index(drop=True)
    assert "L002" not in _codes(datavet.audit(shuffled, target="label", baselines=False))


def test_row_22_row_order_is_stated(tmp_path):
    """Matrix: "state which order is used (file order, row groups); warn if input order is
    unknown (multi-file datasets without a sort key)". A directory of three Parquet files: the
    report says in which order it read the rows (notes, the L002 finding or the dataset
    summary)."""
    frame = _drift_frame()
    d = tmp_path / "parts"
    d.mkdir()
    for i in range(3):
        frame.iloc[i * 200 : (i + 1) * 200].to_parquet(d / f"part-{i}.parquet", index=False)
    report = datavet.audit(d, target="label", baselines=False)
    payload = report.to_dict()
    said = " ".join(
        [*payload["notes"], *(f["message"] for f in payload["findings"] if f["code"] == "L002")]
        + [json.dumps(payload["datasets"]["train"].get("order", ""))]
    )
    assert re.search(
        r"(file|path|name|row[- ]group)[^.]{0,40}order|order[^.]{0,40}(file|path)", said
    ), said


def test_dates_beyond_pythons_datetime_are_data_not_a_crash(tmp_path):
    """Valid Arrow holds date32 values past year 9999, which Python's datetime cannot: the
    audit counts them (as Arrow's text for them) and finishes; huge regression targets make
    L004 skip rather than crash on float overflow."""
    path = tmp_path / "dates.parquet"
    pq.write_table(
        pa.table(
            {
                "d": pa.array([0, 2**31 - 2, 5, 7], pa.date32()),
                "x": [1.0, 2.0, 3.0, 4.0],
                "y": [0.0, 1.5, 1.4e154, 2.0],
            }
        ),
        path,
    )
    report = datavet.audit(path, path, target="y", task="regression", time="d")
    assert not [o for o in report.outcomes if o.status.value == "crashed"]
    json.loads(render(report, "json"))
    (l004,) = [o for o in report.outcomes if o.code == "L004"]
    assert l004.status.value in ("passed", "skipped")

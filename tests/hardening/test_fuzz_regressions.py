"""Breaks the long fuzz found (bench/fuzz.py), each kept as a plain test."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.errors import InputError


def _crashed(report):
    return [o for o in report.outcomes if o.status.value == "crashed"]


@pytest.mark.skipif(not hasattr(pa, "decimal32"), reason="pyarrow without decimal32")
@pytest.mark.parametrize("role", ["label", "feature"])
def test_decimal32_and_64_columns_audit(tmp_path, role):
    rng = np.random.default_rng(0)
    money = pa.array(rng.integers(0, 3, 80) * 1.25).cast(pa.decimal32(7, 2))
    wide = pa.array(rng.normal(size=80)).cast(pa.decimal64(12, 4))
    x = pa.array(rng.normal(size=80))
    table = pa.table(
        {"x": x, "w": wide, "label": money}
        if role == "label"
        else {"x": x, "w": wide, "m": money, "label": pa.array(rng.integers(0, 2, 80))}
    )
    pq.write_table(table, tmp_path / "t.parquet")
    report = datavet.audit(tmp_path / "t.parquet", target="label")
    assert not _crashed(report)


def test_an_all_missing_text_column_does_not_crash_the_baselines():
    rng = np.random.default_rng(0)
    train = pa.table(
        {
            "x": rng.normal(size=80),
            "c": pa.array([None] * 80, pa.large_string()),
            "label": rng.integers(0, 3, 80),
        }
    )
    test = train.slice(0, 40)
    report = datavet.audit(train, test, target="label")
    assert not _crashed(report)
    assert report.baselines is not None and report.baselines.get("skipped") is None


def _invalid_utf8_table(n=60):
    words = [b"ab", b"cd", b"\x9bzz"]  # the last is not UTF-8: a damaged file
    raw = [words[i % 3] for i in range(n)]
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in raw])]).astype(np.int32)
    text = pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(raw))]
    )
    return pa.table({"x": np.arange(n, dtype=float), "t": text})


def test_an_invalid_arrow_table_is_an_input_error_naming_it():
    train = pa.table({"x": np.arange(60.0), "t": pa.array(["ab", "cd", "ef"] * 20)})
    with pytest.raises(InputError, match="test Table.*not a valid Arrow table"):
        datavet.audit(train, _invalid_utf8_table(), baselines=False)


def test_text_that_is_not_utf8_reaches_the_drift_rule_as_replacement_characters():
    from datavet.auditors.split_distinguishable import _to_pandas

    frame = _to_pandas(_invalid_utf8_table(6))
    assert list(frame["t"]) == ["ab", "cd", "\ufffdzz"] * 2


@pytest.mark.parametrize("unit", ["ms", "us"])
def test_a_timestamp_label_beyond_pythons_dates_audits(tmp_path, unit):
    stamps = pa.array([2**62, 0, 2**62, 1_000] * 20, pa.int64()).cast(pa.timestamp(unit))
    table = pa.table({"x": np.arange(80.0), "label": stamps})
    pq.write_table(table, tmp_path / "t.parquet")
    report = datavet.audit(tmp_path / "t.parquet", target="label", baselines=False)
    assert not _crashed(report)


def _one_line(code, err, name):
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("datavet: error:") and name in lines[0], err


def test_a_npy_header_with_a_shape_beyond_int64_is_truncated_not_an_overflow(tmp_path, capsys):
    from datavet.cli import main

    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10**30, 2), }"
    header = header.ljust(118) + "\n"
    (tmp_path / "bad.npy").write_bytes(
        b"\x93NUMPY\x01\x00" + bytes([len(header), 0]) + header.encode()
    )
    code = main(["audit", str(tmp_path / "bad.npy"), "--no-baselines"])
    _one_line(code, capsys.readouterr().err, "bad.npy")


def test_utf16_without_a_byte_order_mark_is_not_valid_utf16(tmp_path, capsys):
    from datavet.cli import main

    (tmp_path / "bad.csv").write_bytes(b"a,b\n1,2\n")
    code = main(["audit", str(tmp_path / "bad.csv"), "--encoding", "utf-16"])
    _one_line(code, capsys.readouterr().err, "bad.csv")


@pytest.mark.parametrize("flag", [0x20, 0x01], ids=["patched-data", "encrypted"])
def test_a_zip_member_with_an_unsupported_flag_is_a_corrupt_archive(tmp_path, capsys, flag):
    import io
    import zipfile

    from datavet.cli import main

    buf = io.BytesIO()
    np.save(buf, np.arange(12.0).reshape(6, 2))
    with zipfile.ZipFile(tmp_path / "bad.npz", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", buf.getvalue())
    raw = bytearray((tmp_path / "bad.npz").read_bytes())
    raw[6] |= flag  # a general-purpose flag of the local header
    at = raw.rfind(b"PK\x01\x02")
    raw[at + 8] |= flag  # and in the central directory
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    code = main(["audit", str(tmp_path / "bad.npz"), "--no-baselines"])
    _one_line(code, capsys.readouterr().err, "bad.npz")


def test_a_header_byte_that_is_not_utf8_names_its_offset(tmp_path, capsys):
    from datavet.cli import main

    (tmp_path / "bad.csv").write_bytes(b"x,n,l\x8dbel\n0.5,1,0\n0.7,2,1\n")
    code = main(["audit", str(tmp_path / "bad.csv"), "--no-baselines"])
    err = capsys.readouterr().err
    _one_line(code, err, "bad.csv")
    assert "0x8D" in err and "line 1" in err


def test_labels_and_features_near_float_max_leak_no_warning_and_crash_nothing(recwarn):
    rng = np.random.default_rng(0)
    big = np.where(rng.random(80) < 0.5, 1.7e308, -1.7e308)
    train = pa.table({"x": big, "z": rng.normal(size=80), "label": big})
    test = pa.table({"x": big[:40], "z": rng.normal(size=40), "label": big[:40]})
    report = datavet.audit(train, test, target="label", baselines=False)
    assert not _crashed(report)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_training_log_with_a_stray_carriage_return_is_read(tmp_path, capsys):
    from datavet.cli import main

    (tmp_path / "log.csv").write_bytes(b"step,loss\n1,2.0\n2,1.\r5\n3,1.0\n")
    code = main(["curves", str(tmp_path / "log.csv"), "--format", "json"])
    assert code in (0, 1, 2)
    err = capsys.readouterr().err
    assert "internal error" not in err


@pytest.mark.parametrize("limit", [None, "64MB"])
def test_an_npz_entry_without_a_name_is_ignored(tmp_path, capsys, limit):
    import io
    import zipfile

    from datavet.cli import main

    buf = io.BytesIO()
    np.save(buf, np.arange(12.0).reshape(6, 2))
    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as z:
        z.writestr("x.npy", buf.getvalue())
        z.writestr("y.npy", buf.getvalue())
    raw = (tmp_path / "bad.npz").read_bytes()
    # drop the second entry's name from the central directory (and fix the directory's size)
    cd = raw.rfind(b"PK\x01\x02")
    name_len = int.from_bytes(raw[cd + 28 : cd + 30], "little")
    raw = (
        raw[: cd + 28]
        + (0).to_bytes(2, "little")
        + raw[cd + 30 : cd + 46]
        + raw[cd + 46 + name_len :]
    )
    end = raw.rfind(b"PK\x05\x06")
    size = int.from_bytes(raw[end + 12 : end + 16], "little") - name_len
    raw = raw[: end + 12] + size.to_bytes(4, "little") + raw[end + 16 :]
    (tmp_path / "bad.npz").write_bytes(raw)
    argv = ["audit", str(tmp_path / "bad.npz"), "--no-baselines", "--isolated"]
    code = main(argv + (["--max-memory", limit] if limit else []))
    err = capsys.readouterr().err
    assert "internal error" not in err and code in (0, 1, 2), err


def test_an_npz_entry_name_flagged_utf8_that_is_not_is_a_bad_archive(tmp_path, capsys):
    import io
    import zipfile

    from datavet.cli import main

    buf = io.BytesIO()
    np.save(buf, np.arange(12.0).reshape(6, 2))
    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as z:
        z.writestr("y.npy", buf.getvalue())
    raw = bytearray((tmp_path / "bad.npz").read_bytes())
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 8] |= 0x08  # flag bit 11 (0x800): the name is UTF-8 ...
    raw[cd + 9] |= 0x08
    raw[cd + 46] = 0xBA  # ... and it is not
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    code = main(["audit", str(tmp_path / "bad.npz"), "--no-baselines", "--isolated"])
    _one_line(code, capsys.readouterr().err, "bad.npz")

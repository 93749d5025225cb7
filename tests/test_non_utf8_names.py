"""A data file whose name is not UTF-8 (a Latin-1 ``caf\\xe9.csv``): every report format is
written, valid UTF-8, with the name's byte escaped (JSON, text) or percent-encoded (SARIF)."""

from __future__ import annotations

import json
import os

import pytest

from datavet.cli import main

FORMATS = ["json", "sarif", "junit", "github", "gitlab", "concise", "text"]


@pytest.fixture
def latin1_csv(tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9.csv"
    try:
        with open(raw, "wb") as f:
            f.write(b"a,label\n1,0\n,1\n3,0\n")
    except OSError as exc:  # a file system that only takes UTF-8 names (macOS APFS)
        pytest.skip(f"this file system refuses non-UTF-8 names: {exc}")
    return os.fsdecode(raw)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_written_as_utf8(latin1_csv, tmp_path, capsys, fmt):
    out = tmp_path / f"report.{fmt}"
    code = main(
        ["audit", "--isolated", "--no-baselines", latin1_csv, "--format", fmt, "-o", str(out)]
    )
    _, err = capsys.readouterr()
    assert code == 1, err  # V001: column 'a', row 1
    text = out.read_bytes().decode("utf-8")  # strict: raises on anything that is not UTF-8
    assert "V001" in text or "nan-values" in text
    if fmt == "json":
        assert json.loads(text)["datasets"]["train"]["source"].endswith("caf\\xe9.csv")
    if fmt == "sarif":
        assert "caf%E9.csv" in text


def test_html_and_step_summary(latin1_csv, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    html = tmp_path / "report.html"
    argv = ["audit", "--isolated", "--no-baselines", latin1_csv, "--html", str(html)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "caf\\xe9.csv" in html.read_bytes().decode("utf-8")
    assert "caf\\xe9.csv" in out  # the terminal shows the same escaped name
    code = main([*argv[:-2], "--format", "github"])  # the step summary goes with GitHub's format
    capsys.readouterr()
    assert code == 1 and "caf" in summary.read_bytes().decode("utf-8")

"""Hostile content comes out inert in every output format.

Column names, values and labels carry HTML/JS, GitHub workflow commands (``::error::``), terminal
escape sequences (ESC, C1 CSI, BEL, CR, NUL) and spreadsheet formula prefixes. Every format in
``datavet.output.FORMATS`` is rendered (new formats are covered as they are registered), from the
API and through the CLI, and checked:

- text / json / sarif / junit / github / anything else: no raw C0 (except tab and newline), DEL
  or C1 character; no line that GitHub Actions would read as a workflow command (a line whose
  stripped form starts with ``::``) except, in ``github``, datavet's own annotations, whose
  properties and message hold no ``::`` of the data;
- json and sarif parse as strict JSON, and the data comes back exactly after decoding (inert,
  not lost); junit parses as XML with nothing but JUnit elements;
- html: the payloads appear only escaped, one ``<script>`` (the JSON data block), no event
  handler attributes, no ``javascript:`` URL, no markup element that the data brought;
- a ``csv`` format, if one is added: cells starting with ``= + - @`` (or tab / CR) start with ``'``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.output import FORMATS, render

from .helpers import RAW_CONTROL, assert_one_line_error, run_cli

HTML = [
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
    "<!--",
    "]]><x/>",
]
WORKFLOW = [
    "::error::pwned",
    "x\n::warning file=a.py,line=1::injected",
    "%0A::error::percent",
    "::add-mask::s3cret",
    "  ::stop-commands::tok",
]
TERMINAL = [
    "\x1b[2J\x1b[H",
    "\x1b]0;owned\x07",
    "\x9b31mC1",
    "ok\rOVERWRITE",
    "nul\x00byte",
    "del\x7f",
]
FORMULA = ["=cmd|' /C calc'!A0", "+SUM(1,2)", "-2+3", "@SUM(A1)", "\t=1+1"]
PAYLOADS = HTML + WORKFLOW + TERMINAL + FORMULA

JUNIT_TAGS = {
    "testsuites",
    "testsuite",
    "testcase",
    "properties",
    "property",
    "failure",
    "error",
    "skipped",
    "system-out",
    "system-err",
}
ANNOTATION = re.compile(r"^::(error|warning|notice|debug|group|endgroup)( [^\n]*?)?::")


def hostile_splits(n: int = 60):
    """Train and test frames whose findings quote every payload: a NaN column named by it (V001),
    a mostly-numeric column holding it as a value (V004), a constant column of it (F001), and
    labels made of payloads, one only in test (L003)."""
    rng = np.random.default_rng(7)
    cols: dict[str, object] = {}
    for i, p in enumerate(PAYLOADS):
        x = rng.normal(size=n)
        x[:2] = np.nan
        cols[p] = x
        mixed = rng.integers(0, 100, n).astype(str).astype(object)
        mixed[5] = p
        cols[f"mixed{i}"] = mixed
        if i % 3 == 0:
            cols[f"const{i}"] = [p] * n
    cols["label"] = [PAYLOADS[i % 4] for i in range(n)]
    train = pd.DataFrame(cols)
    test = train.iloc[:20].copy()
    test["label"] = [PAYLOADS[i % 4] for i in range(19)] + [WORKFLOW[1]]  # unseen class
    return train, test


@pytest.fixture(scope="module")
def hostile_report():
    train, test = hostile_splits()
    report = datavet.audit(train, test, target="label")
    quoted = " ".join(f.message for f in report.findings) + " ".join(
        c for f in report.findings for c in f.columns
    )
    missing = [p for p in PAYLOADS if p not in quoted and repr(p)[1:-1] not in quoted]
    assert not missing, f"no finding quotes {missing!r}: the test would prove nothing"
    return report


# ---------------------------------------------------------------------------------------------
# the checks


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def assert_no_workflow_commands(fmt: str, text: str) -> None:
    for line in text.splitlines():
        stripped = line.lstrip()
        if not stripped.startswith("::"):
            continue
        assert fmt == "github", f"{fmt}: a line GitHub would run as a command: {line!r}"
        head = ANNOTATION.match(stripped)
        assert head, f"github: not one of datavet's annotations: {line!r}"
        assert "::" not in stripped[head.end() :], f"github: '::' from the data: {line!r}"
        assert "::" not in (head.group(2) or ""), f"github: '::' in a property: {line!r}"
        assert head.group(1) in ("error", "warning", "notice"), line


def assert_inert(fmt: str, text: str, *, colour: bool = False) -> None:
    assert isinstance(text, str) and text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text) if colour else text  # datavet's own colours
    bad = RAW_CONTROL.search(plain)
    where = plain[max(0, bad.start() - 60) : bad.start() + 20] if bad else ""
    assert not bad, f"{fmt}: raw control {bad.group()!r} at {bad.start()}: {where!r}"
    assert "\r" not in plain
    assert_no_workflow_commands(fmt, plain)
    if fmt in ("json", "sarif"):

        def no_constants(name):
            raise AssertionError(f"{fmt}: non-JSON constant {name}")

        json.loads(text, parse_constant=no_constants)
    if fmt == "junit":
        root = ET.fromstring(text.encode("utf-8"))
        tags = {el.tag for el in root.iter()}
        assert tags <= JUNIT_TAGS, tags - JUNIT_TAGS
    if fmt == "csv":
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell


def assert_html_inert(page: str) -> None:
    for p in HTML[:3]:
        assert p not in page, p
    assert len(re.findall(r"<script\b", page, re.I)) == 1
    parser = _Tags()
    parser.feed(page)
    scripts = [a for t, a in parser.tags if t == "script"]
    assert [s.get("type") for s in scripts] == ["application/json"]
    assert not [t for t, _ in parser.tags if t in ("img", "svg:svg", "iframe", "object", "embed")]
    for tag, attrs in parser.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src", "action", "formaction", "xlink:href"):
                assert not (value or "").strip().lower().startswith("javascript:"), (tag, value)
    # the data block holds no markup: tojson escapes <, > and &
    block = page.split('type="application/json"', 1)[1].split(">", 1)[1].split("</script>", 1)[0]
    assert "<" not in block and ">" not in block
    assert json.loads(block)["tool"] == "datavet"


# ---------------------------------------------------------------------------------------------
# every format, from the API


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_is_inert(fmt, hostile_report):
    assert_inert(fmt, render(hostile_report, fmt))


def test_coloured_text_carries_only_datavet_colours(hostile_report):
    assert_inert("text", render(hostile_report, "text", colour=True), colour=True)


def test_json_keeps_the_data_exactly(hostile_report):
    """Inert is not lost: after decoding, column names and quoted values are the originals."""
    payload = json.loads(render(hostile_report, "json"))
    train, _ = hostile_splits()
    names = {c["name"] for c in payload["datasets"]["train"]["columns"]}
    assert names == set(train.columns) - {"label"}
    for f in payload["findings"]:
        if f["code"] == "V001" and f["split"] == "train":
            assert f["columns"][0] in PAYLOADS
    v001 = {c for f in payload["findings"] if f["code"] == "V001" for c in f["columns"]}
    assert v001 == set(PAYLOADS)  # one finding per split listing them all (more than five)


def test_html_is_inert(hostile_report):
    assert_html_inert(hostile_report.to_html())


# ---------------------------------------------------------------------------------------------
# every format, through the CLI (Parquet keeps any column name)


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    train, test = hostile_splits()
    paths = []
    for name, frame in (("train", train), ("test", test)):
        path = d / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_is_inert_through_the_cli(fmt, hostile_files, tmp_path, capsys):
    train, test = hostile_files
    page = tmp_path / "report.html"
    code, out, err = run_cli(
        capsys,
        ["audit", train, "--test", test, "--target", "label", "--format", fmt, "--html", page],
    )
    assert code == 1, err
    assert "Traceback" not in err
    assert_inert(fmt, out)
    assert not RAW_CONTROL.search(err) and "\r" not in err
    assert_no_workflow_commands("stderr", err)
    assert_html_inert(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_is_inert_when_written_with_output(fmt, hostile_files, tmp_path, capsys):
    train, test = hostile_files
    dest = tmp_path / f"report.{fmt}"
    code, out, err = run_cli(
        capsys,
        ["audit", train, "--test", test, "--target", "label", "--format", fmt, "--output", dest],
    )
    assert code == 1, err
    assert out == ""
    assert_inert(fmt, dest.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# errors quote user input too


@pytest.mark.parametrize("payload", WORKFLOW + TERMINAL + HTML[:2])
def test_error_lines_are_inert(payload, tmp_path, capsys):
    """A hostile --target, file name or rule selector in the one-line error: still one line,
    no raw control, nothing that starts a workflow command."""
    good = tmp_path / "good.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]}).to_csv(good, index=False)
    safe_name = payload.replace("/", "_").replace("\x00", "_")
    cases = [
        ["audit", good, "--target", payload.replace("\x00", "_")],
        ["audit", tmp_path / f"{safe_name}.csv"],  # no such file
        ["audit", good, "--select", payload.replace("\x00", "_")],
    ]
    for argv in cases:
        code, out, err = run_cli(capsys, argv)
        assert_one_line_error(code, out, err)
        assert not RAW_CONTROL.search(err), repr(err)
        assert "\r" not in err
        assert_no_workflow_commands("stderr", err)

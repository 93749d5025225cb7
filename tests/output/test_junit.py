"""JUnit XML: golden file, the Jenkins junit-10.xsd that pytest's junitxml follows, one testcase
per rule and column evaluated, failure / skipped / error mapping, control characters."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
import xmlschema

import datavet
from datavet import Severity
from datavet.cli import main
from datavet.output import junit, render

from .ci_reports import DATA, EVIL, check_golden, clean_report, sample_report

ROOT = DATA.parents[1]
SAMPLE = ROOT / "sample_data"
UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def xsd():
    return xmlschema.XMLSchema(str(DATA / "junit-10.xsd"))


@pytest.fixture(scope="module")
def planted():
    return datavet.audit(SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv", target="label")


def cases(xml: str) -> list[ET.Element]:
    return ET.fromstring(xml.encode("utf-8")).findall(".//testcase")


def by_name(xml: str) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname"), c.get("name")): c for c in cases(xml)}


def test_golden():
    check_golden("junit_sample.xml", render(sample_report(), "junit"), UPDATE)


def test_golden_validates_against_junit_10_xsd(xsd):
    xsd.validate(render(sample_report(), "junit"))
    xsd.validate(render(clean_report(), "junit"))


def test_xsd_is_not_vacuous(xsd):
    broken = render(clean_report(), "junit").replace(' tests="', ' nottests="', 2)
    assert not xsd.is_valid(broken)  # testsuite needs "tests"
    bad_time = render(clean_report(), "junit").replace('time="0.500"', 'time="5e-1"')
    assert not xsd.is_valid(bad_time)  # SUREFIRE_TIME: plain decimals only


def test_planted_audit_validates_and_counts(xsd, planted):
    xml = render(planted, "junit")
    xsd.validate(xml)
    root = ET.fromstring(xml.encode())
    suite = root.find("testsuite")
    found = cases(xml)
    assert int(suite.get("tests")) == len(found) == int(root.get("tests"))
    failures = [c for c in found if c.find("failure") is not None]
    assert int(suite.get("failures")) == len(failures)
    # one failing testcase per (rule, column) with an error-level finding: V001 x1 in train
    # and in test, and S001 about the whole dataset
    assert sorted((c.get("classname"), c.get("name")) for c in failures) == [
        ("datavet", "S001 train-test-overlap"),
        ("datavet.test", "V001 nan-values[x1]"),
        ("datavet.train", "V001 nan-values[x1]"),
    ]


def test_one_testcase_per_rule_and_column_so_clean_columns_pass(planted):
    got = by_name(render(planted, "junit"))
    for split in ("train", "test"):
        for col in ("x0", "x1", "x2", "x3"):
            assert ("datavet." + split, f"V001 nan-values[{col}]") in got
    # F001 looks at train only
    assert ("datavet.train", "F001 constant-feature[x0]") in got
    assert ("datavet.test", "F001 constant-feature[x0]") not in got
    clean = got[("datavet.train", "V001 nan-values[x0]")]
    assert list(clean) == []  # a passing testcase: no failure, skipped, error or output


def test_warnings_pass_with_system_out_unless_fail_on_warning(planted):
    got = by_name(render(planted, "junit"))
    f003 = got[("datavet", "F003 scale-mismatch")]
    assert f003.find("failure") is None
    assert "Feature scales in train differ" in f003.find("system-out").text
    strict = replace(planted, fail_on=Severity.WARNING)
    got = by_name(render(strict, "junit"))
    failure = got[("datavet", "F003 scale-mismatch")].find("failure")
    assert failure is not None and failure.get("type") == "scale-mismatch"


def test_skipped_crashed_and_ignored():
    got = by_name(render(sample_report(), "junit"))
    skipped = got[("datavet", "L001 class-imbalance")].find("skipped")
    assert skipped.get("message") == "no target column given"
    error = got[("datavet", "L002 positional-label-drift")].find("error")
    assert error.get("type") == "crashed"
    assert "Traceback" in error.text and "ValueError: boom" in error.text
    ignored = got[("datavet.train", "F001 constant-feature[x3]")].find("skipped")
    assert ignored.get("message") == "ignored: x3 is a bias input, constant on purpose"
    suite = ET.fromstring(render(sample_report(), "junit").encode()).find("testsuite")
    assert suite.get("errors") == "1"
    assert int(suite.get("skipped")) == 2


def test_control_characters_are_sanitised_like_pytest():
    xml = render(sample_report(), "junit")
    assert "\x1b" not in xml and "\x7f" not in xml and "\x00" not in xml
    assert "#x1B" in xml and "#x7F" in xml and "#x00" in xml
    root = ET.fromstring(xml.encode())  # well-formed XML 1.0
    names = [c.get("name") for c in root.iter("testcase")]
    evil = [n for n in names if "pwned" in n]
    assert evil == ["V001 nan-values[bad#x1B[31m\n::error::pwned<b>&#x7F%,col]"]
    # markup in data is text, never elements
    assert root.find(".//b") is None


def test_xml_text_matches_pytest_bin_xml_escape():
    assert junit.xml_text("a\x01b\x1bc\ud800d\ufffee") == "a#x01b#x1Bc#xD800d#xFFFEe"
    # beyond pytest: C1 controls (U+009B is a terminal CSI) are escaped too
    assert junit.xml_text("csi\x9b31m nel\x85 nbsp\xa0") == "csi#x9B31m nel#x85 nbsp\xa0"
    assert (
        junit.xml_text("tab\tnl\ncr\r ok é 日本 \U0001f600") == "tab\tnl\ncr\r ok é 日本 \U0001f600"
    )


def test_several_datasets_are_several_testsuites(xsd):
    xml = junit.render_many([("train-set", sample_report(), None), ("clean", clean_report(), None)])
    xsd.validate(xml)
    root = ET.fromstring(xml.encode())
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["train-set", "clean"]
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert root.get("time") == "1.735"
    classnames = {c.get("classname") for c in suites[0].iter("testcase")}
    assert "datavet.train-set.train" in classnames


def test_cli_junit_output_file(tmp_path, capsys, xsd):
    out = tmp_path / "junit.xml"
    code = main(
        [
            "audit",
            str(SAMPLE / "planted_train.csv"),
            "--test",
            str(SAMPLE / "planted_test.csv"),
            "--target",
            "label",
            "--format",
            "junit",
            "--output",
            str(out),
            "--isolated",
        ]
    )
    assert code == 1
    assert capsys.readouterr().out == ""
    xsd.validate(str(out))
    assert re.search(r'failures="3"', out.read_text())


def test_clean_report_all_pass(xsd):
    xml = render(clean_report(), "junit")
    root = ET.fromstring(xml.encode())
    assert root.get("failures") == "0" and root.get("errors") == "0"
    # V001 over two columns plus S001 over the dataset
    assert root.get("tests") == "3"
    assert EVIL not in xml

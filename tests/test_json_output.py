"""The JSON contract: schema-valid, never NaN/Infinity, round trip, and the Report verdict API."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from jsonschema import Draft202012Validator

import datavet
from datavet import AuditFailed, Finding, Report, Severity
from datavet.auditors.scale_mismatch import ScaleMismatch
from datavet.cli import main
from datavet.findings import Outcome, Status
from datavet.output import render
from datavet.output.json import schema

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


@pytest.fixture(scope="module")
def validator():
    s = schema()
    Draft202012Validator.check_schema(s)
    return Draft202012Validator(s)


def _reject_constant(token):
    raise AssertionError(f"non-standard JSON constant {token!r} in payload")


def strict_loads(text: str):
    return json.loads(text, parse_constant=_reject_constant)


def assert_valid(validator, payload: dict) -> None:
    errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


# --------------------------------------------------------------------------------------------
# schema


def test_schema_rejects_a_broken_payload(validator, planted):
    """The validator is not vacuous: a payload with a bad severity or a NaN-ish string fails."""
    payload = strict_loads(render(datavet.audit(*planted, target="label"), "json"))
    payload["findings"][0]["severity"] = "fatal"
    assert list(validator.iter_errors(payload))
    payload = strict_loads(render(datavet.audit(*planted, target="label"), "json"))
    del payload["findings"][0]["examples"]
    assert list(validator.iter_errors(payload))


def test_planted_payload_validates(validator, planted):
    report = datavet.audit(*planted, target="label")
    payload = strict_loads(render(report, "json"))
    assert_valid(validator, payload)
    assert payload["schema_version"] == 1
    assert payload["tool"] == "datavet"
    assert payload["version"] == datavet.__version__
    assert payload["passed"] is False and payload["exit_code"] == 1
    assert {"train", "test"} == set(payload["datasets"])
    assert payload["datasets"]["train"]["rows"] == len(planted[0])
    assert payload["datasets"]["test"]["rows"] == len(planted[1])
    severities = [f["severity"] for f in payload["findings"]]
    assert payload["counts"] == {s: severities.count(s) for s in ("error", "warning", "info")}
    for f in payload["findings"]:
        assert set(f) == {
            "code",
            "name",
            "severity",
            "message",
            "split",
            "columns",
            "n_affected",
            "examples",
            "metrics",
            "hint",
        }


def test_clean_payload_validates(validator, clean):
    report = datavet.audit(*clean, target="label")
    payload = strict_loads(render(report, "json"))
    assert_valid(validator, payload)
    assert payload["findings"] == []
    assert payload["passed"] is True and payload["exit_code"] == 0
    assert payload["counts"] == {"error": 0, "warning": 0, "info": 0}
    # Rules that need an input this data does not have (a group or time column, an ID-like
    # column, tensors) are skipped with a reason; every other rule ran and passed.
    needs_input = {"S005", "S006", "S008", "T001", "T002", "V005"}
    for o in payload["outcomes"]:
        expected = "skipped" if o["code"] in needs_input else "passed"
        assert o["status"] == expected, o
        if expected == "skipped":
            assert o["reason"]


def test_cli_json_payload_validates(validator, capsys):
    code = main(
        [
            "audit",
            str(SAMPLE / "planted_train.parquet"),
            "--test",
            str(SAMPLE / "planted_test.parquet"),
            "--target",
            "label",
            "--format",
            "json",
        ]
    )
    out, _ = capsys.readouterr()
    payload = strict_loads(out)
    assert_valid(validator, payload)
    assert code == payload["exit_code"] == 1


def test_crashed_and_skipped_rules_validate(validator, planted, monkeypatch):
    def boom(self, ctx):
        raise ZeroDivisionError("planted crash")

    monkeypatch.setattr(ScaleMismatch, "check", boom)
    train, _ = planted
    report = datavet.audit(train, target="label")  # no test split: S001 and S004 skip
    payload = strict_loads(render(report, "json"))
    assert_valid(validator, payload)
    by_code = {o["code"]: o for o in payload["outcomes"]}
    assert by_code["F003"]["status"] == "crashed"
    assert "ZeroDivisionError" in by_code["F003"]["reason"]
    assert "planted crash" in by_code["F003"]["traceback"]
    assert by_code["S001"]["status"] == "skipped" and by_code["S001"]["reason"]
    assert by_code["S004"]["status"] == "skipped"
    assert by_code["V001"]["status"] == "failed" and by_code["V001"]["n_findings"] == 1
    assert payload["exit_code"] == 2 and payload["passed"] is False
    assert report.exit_code() == 2
    assert report.exit_code("info") == 2  # a crash is never hidden by the threshold
    assert "F003" not in {f["code"] for f in payload["findings"]}


# --------------------------------------------------------------------------------------------
# never NaN / Infinity


def _hostile_numbers(n=50):
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        {
            "pos_inf": np.full(n, np.inf),
            "neg_inf": np.full(n, -np.inf),
            "mixed_inf": np.where(np.arange(n) % 2 == 0, np.inf, -np.inf),
            "all_nan": np.full(n, np.nan),
            "big": rng.normal(1.2e154, 1e152, n),  # scale ratio to "tiny" overflows to inf
            "tiny": rng.normal(1e-160, 1e-161, n),
            "label": rng.permutation(np.arange(n) % 2),
        }
    )


@pytest.mark.parametrize("with_test", [False, True])
def test_no_nan_or_infinity_tokens(validator, with_test):
    frame = _hostile_numbers()
    report = datavet.audit(frame, frame.copy() if with_test else None, target="label")
    for text in (render(report, "json"), report.to_json(), report.to_json(indent=None)):
        payload = strict_loads(text)
        assert_valid(validator, payload)
        for token in ("NaN", "Infinity"):
            assert token not in text.replace('"', " ").split()  # not even as a bare word
    payload = strict_loads(report.to_json())
    cols = {c["name"]: c for c in payload["datasets"]["train"]["columns"]}
    assert cols["pos_inf"]["inf"] == 50 and cols["pos_inf"]["count"] == 50
    assert cols["all_nan"]["nan"] == 50
    for name in ("pos_inf", "neg_inf", "mixed_inf", "all_nan"):
        for stat in ("mean", "std", "min", "max"):
            assert cols[name][stat] is None, (name, stat)
    codes = {f["code"] for f in payload["findings"]}
    assert {"V001", "V002", "F003"} <= codes
    scale = next(f for f in payload["findings"] if f["code"] == "F003")
    assert scale["metrics"]["ratio"] is None  # 1.2e154 / 1e-160 overflows: null, not Infinity
    for f in payload["findings"]:
        for v in f["metrics"].values():
            assert v is None or math.isfinite(v)


def test_values_near_float_max_give_finite_correct_mean(validator):
    """Finite values whose plain sum overflows (DBL_MAX used as a sentinel, or 1e308-scale
    data) still have a finite mean; the summary must not turn them into NaN/inf (and so null),
    and no RuntimeWarning may leak (the project's pytest config makes one an error)."""
    n = 50
    big = np.finfo(np.float64).max
    frame = pd.DataFrame(
        {
            "alternating": np.where(np.arange(n) % 2 == 0, 1e308, -1e308),  # true mean 0
            "positive": np.linspace(0.5, 1.0, n) * 1e308,  # true mean 7.5e307
            "sentinel": np.r_[np.full(3, big), np.arange(n - 3, dtype=float)],
            "label": np.arange(n) % 2,
        }
    )
    report = datavet.audit(frame, target="label", select="V")
    payload = strict_loads(report.to_json())
    assert_valid(validator, payload)
    cols = {c["name"]: c for c in payload["datasets"]["train"]["columns"]}
    assert cols["alternating"]["mean"] == pytest.approx(0.0, abs=1e293)
    assert cols["positive"]["mean"] == pytest.approx(7.5e307, rel=1e-9)
    assert cols["sentinel"]["mean"] == pytest.approx(
        3 * (float(big) / n) + sum(range(n - 3)) / n, rel=1e-9
    )
    for name in ("alternating", "positive", "sentinel"):
        assert cols[name]["inf"] == 0 and cols[name]["count"] == n


def test_non_finite_metric_becomes_null(validator):
    finding = Finding(
        "F003",
        "scale-mismatch",
        Severity.WARNING,
        "m",
        metrics={
            "ratio": float("inf"),
            "nan": float("nan"),
            "ok": np.float64(2.5),
            "n": np.int64(3),
        },
    )
    report = Report(
        findings=[finding],
        outcomes=[],
        datasets={
            "train": {
                "source": "s",
                "format": "pandas",
                "rows": 1,
                "columns": [
                    {
                        "name": "a",
                        "dtype": "double",
                        "count": 1,
                        "nan": 0,
                        "inf": 0,
                        "mean": float("nan"),
                        "std": float("-inf"),
                        "min": None,
                        "max": None,
                    }
                ],
            }
        },
    )
    payload = strict_loads(report.to_json())
    assert_valid(validator, payload)
    assert payload["findings"][0]["metrics"] == {"ratio": None, "nan": None, "ok": 2.5, "n": 3}
    assert payload["datasets"]["train"]["columns"][0]["mean"] is None
    assert payload["datasets"]["train"]["columns"][0]["std"] is None


# --------------------------------------------------------------------------------------------
# round trip


def test_to_dict_to_json_round_trip(planted):
    report = datavet.audit(*planted, target="label")
    d = report.to_dict()
    assert strict_loads(report.to_json()) == d
    assert strict_loads(report.to_json(indent=None)) == d
    assert strict_loads(render(report, "json")) == d
    assert "\n" not in report.to_json(indent=None)
    # findings serialise every field, by name, from the Finding objects
    for f, fd in zip(report.findings, d["findings"]):
        assert fd["code"] == f.code and fd["name"] == f.name
        assert fd["severity"] == f.severity.label
        assert fd["examples"] == list(f.examples)
        assert fd["columns"] == list(f.columns)
        assert fd["n_affected"] == f.n_affected
        assert fd["metrics"] == pytest.approx(dict(f.metrics))
    # and the dict is already plain JSON types: a second dump gives the same text
    assert json.dumps(d, allow_nan=False) == json.dumps(
        strict_loads(json.dumps(d)), allow_nan=False
    )


# --------------------------------------------------------------------------------------------
# the verdict API


def _report(*severities: Severity, crashed: bool = False) -> Report:
    findings = [
        Finding(f"X00{i}", f"rule-{i}", sev, f"finding {i}") for i, sev in enumerate(severities)
    ]
    outcomes = [Outcome("X009", "crashy", Status.CRASHED, reason="boom")] if crashed else []
    return Report(
        findings=findings,
        outcomes=outcomes,
        datasets={"train": {"source": "t", "format": "pandas", "rows": 1, "columns": []}},
    )


def test_passing_report():
    report = _report(Severity.WARNING, Severity.INFO)
    assert report.passed is True
    assert report.exit_code() == 0
    assert report.raise_for_findings() is report
    assert report.to_dict()["passed"] is True


def test_failing_report_raises_audit_failed():
    report = _report(Severity.ERROR, Severity.WARNING)
    assert report.passed is False
    assert report.exit_code() == 1
    with pytest.raises(AuditFailed) as exc:
        report.raise_for_findings()
    assert exc.value.exit_code == 1
    assert exc.value.report is report
    assert isinstance(exc.value, datavet.DatavetError)
    assert "error" in str(exc.value)


def test_fail_on_override():
    report = _report(Severity.WARNING)
    assert report.exit_code() == 0
    assert report.exit_code("warning") == 1
    assert report.exit_code(Severity.WARNING) == 1
    assert report.exit_code("info") == 1
    assert report.exit_code("error") == 0
    assert report.failing("warning") == report.findings
    with pytest.raises(AuditFailed) as exc:
        report.raise_for_findings("warning")
    assert exc.value.exit_code == 1
    info_only = _report(Severity.INFO)
    assert info_only.raise_for_findings("warning") is info_only
    with pytest.raises(AuditFailed):
        info_only.raise_for_findings("info")


def test_raise_for_findings_override_does_not_change_the_report():
    """An override is a question asked of the report, not a change to it: after
    ``raise_for_findings("warning")`` the report's own verdict (fail_on error) still holds."""
    report = _report(Severity.WARNING)
    with pytest.raises(AuditFailed) as exc:
        report.raise_for_findings("warning")
    assert "warning" in str(exc.value)
    assert report.fail_on == Severity.ERROR
    assert report.exit_code() == 0
    assert report.passed is True
    assert report.to_dict()["fail_on"] == "error"


def test_fail_on_given_to_audit(planted):
    train, _ = planted
    warn_only = datavet.audit(train, target="label", select=["F001", "L002"])
    assert warn_only.findings and all(f.severity == Severity.WARNING for f in warn_only.findings)
    assert warn_only.passed and warn_only.exit_code() == 0
    strict = datavet.audit(train, target="label", select=["F001", "L002"], fail_on="warning")
    assert not strict.passed and strict.exit_code() == 1
    assert strict.to_dict()["fail_on"] == "warning"
    with pytest.raises(AuditFailed):
        strict.raise_for_findings()


def test_crashed_report_exit_code_2():
    report = _report(crashed=True)
    assert report.findings == []
    assert report.exit_code() == 2
    assert report.passed is False
    assert report.to_dict()["exit_code"] == 2


def test_findings_sorted_by_severity_then_code():
    report = _report(Severity.INFO, Severity.ERROR, Severity.WARNING, Severity.ERROR)
    sev = [f.severity for f in report.findings]
    assert sev == sorted(sev, reverse=True)
    errors = [f.code for f in report.findings if f.severity == Severity.ERROR]
    assert errors == sorted(errors)

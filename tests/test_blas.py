"""An audit fits its models with BLAS on one thread (datavet._blas): rules and baselines fit
side by side on threads of their own, and BLAS threads beside them only spin. The setting is
the process's, so it is given back when the audit ends, also when the audit fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import datavet
from datavet import linear
from datavet.errors import InputError

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN, TEST = SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv"


def _blas_threads() -> set[int]:
    found = {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    assert found, "NumPy's BLAS is not found: nothing to test"
    return found


@pytest.fixture
def two_blas_threads():
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}
        yield


def test_every_fit_of_an_audit_runs_on_one_blas_thread(monkeypatch, two_blas_threads):
    seen: list[set[int]] = []
    fit = linear.Logistic.fit

    def recording(self, *args, **kwargs):
        seen.append(_blas_threads())
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(linear.Logistic, "fit", recording)
    report = datavet.audit(str(TRAIN), str(TEST), target="label")
    codes = {o.code for o in report.outcomes if o.status.value == "passed"} | {
        f.code for f in report.findings
    }
    assert "S011" in codes and report.baselines is not None  # both fit logistic models
    assert len(seen) >= 2 and all(s == {1} for s in seen)
    assert _blas_threads() == {2}  # given back


def test_the_blas_setting_is_given_back_when_the_audit_fails(monkeypatch, two_blas_threads):
    import datavet.api as api

    inside: list[set[int]] = []

    def failing_scan(*args, **kwargs):
        inside.append(_blas_threads())
        raise InputError("train.csv", "row 7 is cut short")

    monkeypatch.setattr(api, "gather", failing_scan)
    with pytest.raises(InputError, match="row 7"):
        datavet.audit(str(TRAIN), str(TEST), target="label")
    assert inside == [{1}]
    assert _blas_threads() == {2}

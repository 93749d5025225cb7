"""The Python API's ``severity=`` and ``thresholds=``: one rule under two keys (code and name)
is a UsageError, as in a config file; which one won depended on the dict's order."""

from __future__ import annotations

import pandas as pd
import pytest

import datavet

FRAME = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"severity": {"S001": "error", "train-test-overlap": "info"}},
        {"severity": {"s001": "error", "S001": "info"}},
        {"thresholds": {"L001": {"max_ratio": 5}, "class-imbalance": {"max_ratio": 3}}},
    ],
)
def test_audit_refuses_one_rule_under_two_keys(kwargs):
    with pytest.raises(datavet.UsageError, match="both name (S001|L001)"):
        datavet.audit(FRAME, target="label", **kwargs)


def test_one_key_each_still_works():
    frame = FRAME.assign(k=7.0)  # a constant column: F001, a warning by default
    report = datavet.audit(frame, target="label", severity={"constant-feature": "error"})
    assert [(f.code, f.severity) for f in report.findings if f.code == "F001"] == [
        ("F001", datavet.Severity.ERROR)
    ]


def test_probe_refuses_one_probe_under_two_keys():
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2)
    batch = (torch.randn(8, 3), torch.randint(0, 2, (8,)))
    with pytest.raises(datavet.UsageError, match="both name M001"):
        datavet.probe(
            model,
            batch,
            loss_fn=torch.nn.functional.cross_entropy,
            severity={"M001": "error", "initial-loss-mismatch": "info"},
        )

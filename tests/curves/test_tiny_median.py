"""A gradient-norm median of a subnormal number: the spike ratio is inf, not a crash."""

from __future__ import annotations

import warnings

from datavet import diagnose_curves


def test_spike_over_a_subnormal_median_does_not_crash():
    # the example hypothesis found: a median of 5e-324 and a norm of 1.0 after it
    grad = [0.0] * 5 + [1.0] * 5 + [5e-324, 1.0]
    rows = [
        {"step": i, "train_loss": 0.0, "grad_norm": g, "val_loss": 0.0} for i, g in enumerate(grad)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = diagnose_curves(rows, classes=4)
    assert not report.crashed, [o.reason for o in report.crashed]

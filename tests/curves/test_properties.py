"""Any log of numbers is diagnosed without a crash: NaN, inf, zeros, negative values, constant or
very short series. Every rule finishes (passed, failed or skipped), the JSON is strict, and the
steps a finding names are steps of the log."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datavet
from datavet.curves import signals
from datavet.findings import Status

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.floats(min_value=0.0, max_value=10.0),
    st.sampled_from([0.0, 1.386, 2.0, math.nan, math.inf]),
)


def _reject(token):
    raise ValueError(token)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    loss=st.lists(values, min_size=1, max_size=120),
    grad=st.lists(values, min_size=0, max_size=120),
    val_every=st.integers(min_value=1, max_value=15),
)
def test_any_numbers_are_diagnosed_without_a_crash(loss, grad, val_every):
    rows = []
    for i, x in enumerate(loss):
        row = {"step": i, "train_loss": x}
        if i < len(grad):
            row["grad_norm"] = grad[i]
        if i % val_every == 0:
            row["val_loss"] = x * 1.1 if math.isfinite(x) else x
        rows.append(row)
    report = datavet.diagnose_curves(rows, classes=4)
    assert not report.crashed, [o.reason for o in report.crashed]
    assert all(o.status is not Status.CRASHED for o in report.outcomes)
    payload = json.loads(report.to_json(), parse_constant=_reject)  # no NaN/Infinity tokens
    assert payload["exit_code"] in (0, 1)
    for f in report.findings:
        assert all(0 <= s < len(loss) for s in f.examples), (f.code, f.examples)
        onset = f.metrics.get("onset_step")
        if onset is not None:
            assert 0 <= onset < len(loss)


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=0, max_size=80))
def test_the_divergence_detectors_return_positions_inside_the_series(series):
    v = np.asarray(series, float)
    for d in (signals.divergence(v), signals.blowup(v)):
        if d is None:
            continue
        assert 0 <= d.onset <= d.detect < len(v)
        assert d.onset <= d.peak < len(v)
        assert d.nonfinite is None or d.onset < d.nonfinite < len(v)

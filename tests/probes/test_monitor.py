"""GradientMonitor with M011 gradient-spike and M012 nonfinite-training-step."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from jsonschema import Draft202012Validator
from torch import nn

import datavet
from datavet import GradientMonitor, UsageError
from datavet.output.json import schema

SPIKES = (57, 140, 141, 333, 512)  # 140 and 141 in a row: a flagged step stays out of the median


def set_grads(model: nn.Module, norm: float) -> None:
    """Give the model gradients whose global L2 norm is ``norm``."""
    params = list(model.parameters())
    size = sum(p.numel() for p in params)
    for p in params:
        p.grad = torch.full_like(p, norm / math.sqrt(size))


def synthetic_norms(n: int = 600, spikes=SPIKES, factor: float = 40.0) -> np.ndarray:
    """A decaying, noisy gradient-norm curve (lognormal noise, sigma 0.25) with spikes."""
    rng = np.random.default_rng(0)
    steps = np.arange(n)
    norms = 2.0 / np.sqrt(1 + steps / 20) * np.exp(rng.normal(0, 0.25, n))
    norms[list(spikes)] *= factor
    return norms


def record(norms, **options) -> GradientMonitor:
    model = nn.Linear(4, 2)
    monitor = GradientMonitor(**options)
    for v in norms:
        set_grads(model, float(v))
        monitor.step(model)
    return monitor


def test_exactly_the_injected_spikes_are_flagged():
    monitor = record(synthetic_norms(), window=50, factor=10)
    assert monitor.spikes == list(SPIKES)
    assert monitor.first_nonfinite is None
    assert monitor.steps == 600
    assert monitor.norms[57] == pytest.approx(synthetic_norms()[57], rel=1e-5)


def test_a_smaller_factor_or_no_spike_changes_the_flags_as_expected():
    assert record(synthetic_norms(spikes=()), window=50, factor=10).spikes == []
    # factor 3 is within reach of lognormal noise (exp(3 * 0.25) = 2.1 times the median, and
    # the curve decays): some normal steps may be flagged too, but never fewer than the spikes
    assert set(SPIKES) <= set(record(synthetic_norms(), window=50, factor=3).spikes)


def test_spikes_before_min_history_are_not_judged():
    norms = synthetic_norms(n=100, spikes=(3, 60))
    assert record(norms, window=50, factor=10, min_history=10).spikes == [60]


def test_sync_every_gives_the_same_result():
    norms = synthetic_norms()
    norms[450] = np.nan
    one = record(norms, sync_every=1)
    many = record(norms, sync_every=7)
    assert one.spikes == many.spikes == list(SPIKES)
    assert one.first_nonfinite["step"] == many.first_nonfinite["step"] == 450


def test_training_loop_with_injected_gradient_spikes():
    """A real loop: at the planted steps the loss is scaled by 500 and the update is skipped
    (as a loss scaler skips a bad step); exactly those steps are flagged."""
    planted = {120, 121, 260, 390}
    torch.manual_seed(0)
    x = torch.randn(128, 8)
    y = x @ torch.randn(8, 1) + 0.1 * torch.randn(128, 1)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    monitor = GradientMonitor(window=50, factor=10, layer_every=100)
    for step in range(450):
        rows = torch.randint(0, 128, (32,))
        loss = nn.functional.mse_loss(model(x[rows]), y[rows])
        if step in planted:
            loss = loss * 500
        opt.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss)
        if step not in planted:
            opt.step()
    assert monitor.spikes == sorted(planted)
    report = monitor.report()
    f = next(f for f in report.findings if f.code == "M011")
    assert f.examples == tuple(sorted(planted)) and f.n_affected == 4
    assert "at 4 of 450 steps: step 120" in f.message
    assert f.metrics["max_factor"] > 10
    layers = report.probes["monitor"]["layers"]
    assert layers["steps"] == [0, 100, 200, 300, 400]
    assert [r["name"] for r in layers["rows"]] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_the_first_non_finite_step_is_found_before_any_comparison():
    norms = synthetic_norms()
    norms[300] = np.inf
    norms[301:] = np.nan  # nan > 10 * median is False: a naive rule calls this healthy
    monitor = record(norms)
    first = monitor.first_nonfinite
    assert first["step"] == 300 and first["gradient_finite"] is False
    assert first["parameters"] == ["weight", "bias"]
    assert monitor.spikes == [s for s in SPIKES if s < 300]
    report = monitor.report()
    f = next(f for f in report.findings if f.code == "M012")
    assert f.severity.label == "error" and f.examples == (300,)
    assert f.n_affected == 300  # steps 300..599
    assert "Step 300 is the first non-finite training step" in f.message
    assert report.exit_code() == 1


def test_an_all_nan_run_is_never_healthy():
    monitor = record([float("nan")] * 50)
    assert monitor.spikes == []
    assert monitor.first_nonfinite["step"] == 0
    assert monitor.report().exit_code() == 1


def test_a_non_finite_loss_is_caught_even_with_finite_gradients():
    model = nn.Linear(4, 2)
    monitor = GradientMonitor()
    for step in range(20):
        set_grads(model, 1.0)
        monitor.step(model, loss=torch.tensor(float("nan") if step == 12 else 1.0))
    first = monitor.first_nonfinite
    assert first["step"] == 12 and first["loss_finite"] is False and first["gradient_finite"]
    msg = next(f for f in monitor.report().findings if f.code == "M012").message
    assert "loss nan" in msg


def test_explicit_step_labels_are_reported():
    model = nn.Linear(4, 2)
    monitor = GradientMonitor(window=20, min_history=5)
    for i, v in enumerate(synthetic_norms(n=40, spikes=(30,))):
        set_grads(model, float(v))
        monitor.step(model, step=1000 + 10 * i)
    assert monitor.spikes == [1300]


def test_report_is_schema_valid_json_and_follows_the_exit_code_contract():
    monitor = record(synthetic_norms())
    report = monitor.report()
    assert [(o.code, o.status.value) for o in report.outcomes] == [
        ("M011", "failed"),
        ("M012", "passed"),
        ("M018", "passed"),
        ("M020", "passed"),
        ("M021", "skipped"),
    ]
    payload = json.loads(report.to_json())
    errors = list(Draft202012Validator(schema()).iter_errors(payload))
    assert errors == []
    assert payload["probes"]["kind"] == "monitor"
    assert [s["step"] for s in payload["probes"]["monitor"]["spikes"]] == list(SPIKES)
    assert report.exit_code() == 0  # spikes are warnings: below the default fail-on "error"
    assert report.exit_code("warning") == 1
    assert monitor.report(severity={"M011": "error"}).exit_code() == 1


def test_curve_is_capped_but_keeps_every_spike():
    payload = record(synthetic_norms(n=2000, spikes=(1501,))).to_dict()
    steps = [s for s, _ in payload["curve"]]
    assert len(steps) <= 401 and 1501 in steps and steps[0] == 0 and steps[-1] == 1999


def test_an_empty_monitor_reports_skipped_rules():
    report = GradientMonitor().report()
    assert {o.status.value for o in report.outcomes} == {"skipped"}


@pytest.mark.parametrize(
    "options",
    [
        {"window": 0},
        {"factor": 1.0},
        {"factor": float("nan")},
        {"layer_every": -1},
        {"window": 5, "min_history": 10},
        {"sync_every": 1.5},
    ],
)
def test_bad_options_are_usage_errors(options):
    with pytest.raises(UsageError):
        GradientMonitor(**options)


def test_step_before_backward_is_a_usage_error():
    with pytest.raises(UsageError, match="after loss.backward"):
        GradientMonitor().step(nn.Linear(2, 1))


def test_public_api():
    assert datavet.GradientMonitor is GradientMonitor
    assert "GradientMonitor" in datavet.__all__

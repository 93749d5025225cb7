"""C001 nonfinite-loss: the first NaN/inf, and what came before it."""

from __future__ import annotations

import numpy as np

from datavet import Severity, diagnose_curves

from .conftest import codes, finding, healthy_loss


def test_quiet_on_a_finite_run(records):
    r = diagnose_curves(records(step=range(200), loss=healthy_loss(200)), select="C001")
    assert codes(r) == []


def test_first_nan_with_a_spike_before_it(records):
    loss = healthy_loss(200)
    loss[150:] = np.nan
    g = np.exp(0.2 * np.random.default_rng(1).standard_normal(200))
    g[140] = 80.0  # a spike 10 steps before the NaN
    g[150:] = np.nan
    r = diagnose_curves(records(step=range(200), loss=loss, grad_norm=g), select="C001")
    f = finding(r, "C001")
    assert f.severity is Severity.ERROR
    assert f.metrics["step"] == 150 and f.metrics["spike_step"] == 140
    assert "spiked" in f.message and "step 140" in f.message
    assert f.examples[0] == 150 and f.n_affected == 50
    assert r.exit_code() == 1


def test_first_nan_out_of_a_calm_run_says_so(records):
    loss = healthy_loss(200)
    loss[120] = np.inf
    loss[121:] = np.nan
    g = np.exp(0.2 * np.random.default_rng(2).standard_normal(200))
    r = diagnose_curves(records(step=range(200), loss=loss, grad_norm=g), select="C001")
    f = finding(r, "C001")
    assert f.metrics["step"] == 120 and "inf" in f.message
    assert "no gradient-norm spike and no climb" in f.message
    assert "spike_step" not in f.metrics


def test_the_gradient_norm_first_then_the_loss(records):
    loss, g = healthy_loss(100), np.ones(100)
    g[60:] = np.nan
    loss[61:] = np.nan
    f = finding(diagnose_curves(records(step=range(100), loss=loss, grad_norm=g)), "C001")
    assert f.metrics["step"] == 60 and f.message.startswith("The gradient norm")
    assert "training loss from step 61" in f.message


def test_a_learning_rate_jump_before_the_nan_is_named(records):
    loss = healthy_loss(200)
    loss[180:] = np.nan
    lr = np.r_[np.full(170, 0.01), np.full(30, 1.0)]
    f = finding(diagnose_curves(records(step=range(200), loss=loss, lr=lr)), "C001")
    assert "100x the highest before it" in f.message


def test_warm_up_is_not_a_learning_rate_jump(records):
    loss = healthy_loss(200)
    loss[180:] = np.nan
    lr = np.minimum(np.arange(200) / 100, 1.0) * 0.1
    f = finding(diagnose_curves(records(step=range(200), loss=loss, lr=lr)), "C001")
    assert "learning rate" not in f.message


def test_loss_scaling_skips_are_a_warning_not_an_error(records):
    g = np.ones(100)
    g[[30, 31, 70]] = np.inf  # skipped steps; the run goes on
    r = diagnose_curves(records(step=range(100), loss=healthy_loss(100), grad_norm=g))
    f = finding(r, "C001")
    assert f.severity is Severity.WARNING and f.n_affected == 3
    assert list(f.examples) == [30, 31, 70] and "loss scaling" in f.message

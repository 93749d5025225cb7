"""C002 loss-divergence and C003 loss-oscillation: a learning rate too high."""

from __future__ import annotations

import numpy as np

from datavet import Severity, diagnose_curves

from .conftest import codes, finding, healthy_loss


def test_divergence_with_its_onset_and_the_lr_change(records):
    loss = np.r_[healthy_loss(300), 0.25 * 1.5 ** np.arange(1, 30)]
    lr = np.r_[np.full(300, 0.01), np.full(29, 1.0)]
    r = diagnose_curves(records(step=range(len(loss)), loss=loss, lr=lr), select="C002")
    f = finding(r, "C002")
    assert f.severity is Severity.ERROR and f.metrics["onset_step"] == 300
    assert "began climbing at step 300" in f.message
    assert "learning rate went from 0.01 to 1 at step 300" in f.message
    assert f.examples == (300,)
    assert {"code": "C002", "series": "train_loss", "step": 300.0}.items() <= r.curves["marks"][
        0
    ].items()


def test_divergence_is_quiet_on_a_healthy_run_and_a_single_bad_batch(records):
    loss = healthy_loss(400)
    loss[250] *= 40
    r = diagnose_curves(records(step=range(400), loss=loss), select="C002")
    assert codes(r) == []


def test_the_rules_after_a_divergence_read_only_the_steps_before_it(records):
    # after the climb the loss sits flat and high: that is not "barely moves" (C005)
    loss = np.r_[healthy_loss(200), np.full(200, 9.0)]
    r = diagnose_curves(records(step=range(400), loss=loss))
    assert codes(r) == ["C002"]
    assert r.curves["end_step"] == 200


def _cycle(n=300, level=2.0, amp=0.5, drift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return level * (1 - drift * t / n) + amp * (-1.0) ** t + 0.01 * rng.standard_normal(n)


def test_oscillation_fires_on_a_two_step_cycle(records):
    r = diagnose_curves(records(step=range(300), loss=_cycle()), select="C003")
    f = finding(r, "C003")
    assert f.metrics["period"] == 2 and f.metrics["periodicity"] > 0.9
    assert f.metrics["from_step"] == 150
    assert "2-step cycle" in f.message


def test_oscillation_is_quiet_on_minibatch_noise_and_on_a_cycle_that_makes_progress(records):
    noisy = healthy_loss(400, noise=0.4)
    assert codes(diagnose_curves(records(step=range(400), loss=noisy), select="C003")) == []
    falling = _cycle(drift=0.9, amp=0.1)  # the level drops a lot in the second half
    assert codes(diagnose_curves(records(step=range(300), loss=falling), select="C003")) == []


def test_oscillation_is_quiet_on_a_smooth_descent(records):
    smooth = 0.2 + 1.2 * np.exp(-np.arange(300) / 80)
    assert codes(diagnose_curves(records(step=range(300), loss=smooth), select="C003")) == []

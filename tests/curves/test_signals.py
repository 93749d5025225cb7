"""The numeric building blocks: the spike rule (the same as GradientMonitor's), the divergence
detector, the periodicity measure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import datavet
from datavet.curves import signals


def test_spike_rule_flags_the_same_steps_as_gradient_monitor():
    rng = np.random.default_rng(3)
    norms = np.exp(0.4 * rng.standard_normal(300))
    norms[[40, 41, 120, 250]] *= [30, 25, 40, 60]  # a burst of two, then single ones
    norms[5] *= 50  # before min_history: never a spike
    norms[200] = np.nan  # non-finite: neither spike nor history
    model = torch.nn.Linear(1, 1, bias=False)
    monitor = datavet.GradientMonitor()
    for v in norms:
        model.weight.grad = torch.tensor([[float(v)]])
        monitor.step(model)
    ours = [s.index for s in signals.spikes(norms)]
    assert ours == monitor.spikes
    assert {40, 41, 120, 250} <= set(ours) and 5 not in ours
    assert signals.SPIKE_FACTOR == datavet.GradientMonitor().factor


def test_spikes_stay_out_of_the_history():
    v = np.r_[np.ones(20), np.full(5, 20.0), np.ones(5)]
    # five in a row at 20x: each one is compared with the normal values only
    assert [s.index for s in signals.spikes(v, factor=10)] == [20, 21, 22, 23, 24]
    assert [s.index for s in signals.spikes(v, factor=25)] == []


def test_divergence_onset_is_the_first_step_of_the_climb():
    v = np.r_[np.linspace(2.0, 0.3, 100), 0.3 * 1.6 ** np.arange(1, 15)]
    d = signals.divergence(v)
    assert d is not None and d.onset == 100 and d.nonfinite is None
    assert d.peak == len(v) - 1


def test_one_bad_batch_is_not_a_divergence():
    v = np.linspace(2.0, 0.3, 200)
    v[150] = 30.0
    assert signals.divergence(v) is None


def test_a_blow_up_that_recovers_is_not_a_divergence():
    v = np.r_[1.4, 15.6, 39.7, 24.8, 7.0, 2.2, np.linspace(1.2, 0.4, 100)]
    assert signals.divergence(v) is None


def test_a_near_zero_loss_that_doubles_is_not_a_divergence():
    v = np.r_[np.linspace(1.4, 0.001, 100), np.full(50, 0.003)]
    assert signals.divergence(v) is None


def test_a_jump_from_normal_straight_to_nan_is_not_a_climb():
    v = np.r_[np.linspace(1.4, 0.3, 100), np.full(20, np.nan)]
    assert signals.divergence(v) is None


def test_a_climb_that_ends_in_nan_is_a_divergence():
    v = np.r_[np.linspace(1.4, 0.3, 100), [1.0, 5.0, 40.0], np.full(10, np.nan)]
    d = signals.divergence(v)
    assert d is not None and d.onset == 100 and d.nonfinite == 103


def test_periodicity_tells_a_cycle_from_noise():
    rng = np.random.default_rng(0)
    cycle = 2.0 + 0.4 * (-1.0) ** np.arange(200) + 0.01 * rng.standard_normal(200)
    noise = 2.0 * np.exp(0.3 * rng.standard_normal(200))
    r, lag = signals.periodicity(cycle)
    assert r > 0.9 and lag == 2
    assert signals.periodicity(noise)[0] < 0.3
    smooth = np.linspace(2.0, 1.0, 200)
    assert np.median(np.abs(signals.wiggle(smooth))) < 1e-9


def test_a_blow_up_from_the_first_updates_that_kills_the_network_is_a_divergence():
    # too hot from step 0: the loss climbs over its start, then the dead network sits at ln 4
    v = np.r_[1.39, 1.2, 1.3, 1.35, 3.5, 5.0, 2.0, 9.0, 1.6, np.full(200, 1.386)]
    assert signals.divergence(v) is None  # the recent level is the climb itself
    d = signals.blowup(v)
    assert d is not None and d.kind == "no_recovery"
    assert d.onset == 4 and d.peak == 7 and d.reference == pytest.approx(1.3)
    assert d.end_level == pytest.approx(1.386)


def test_a_blow_up_the_run_recovers_from_is_not_a_no_recovery_divergence():
    v = np.r_[1.4, 15.6, 39.7, 24.8, 7.0, 2.2, np.linspace(1.2, 0.4, 100)]
    assert signals.blowup(v) is None


def test_one_bad_batch_and_a_flat_noisy_run_are_not_blow_ups():
    rng = np.random.default_rng(0)
    flat = 1.386 * np.exp(0.1 * rng.standard_normal(400))  # nothing to learn, sane lr
    assert signals.blowup(flat) is None
    flat[100] = 20.0  # one corrupt batch
    assert signals.blowup(flat) is None


def test_a_blow_up_after_learning_starts_after_the_loss_was_last_low():
    # learned to 0.3, then too hot: the onset is in the climb (the first value 25% over the
    # start), not the noisy early batch at 1.8
    v = np.r_[1.4, 1.3, 1.8, np.linspace(1.2, 0.3, 97), [0.6, 3.0, 4.0], np.full(100, 1.4)]
    d = signals.blowup(v)
    assert d is not None and d.onset == 101
    # measured against the recent level the climb starts one step earlier: C002 takes that one
    assert signals.divergence(v).onset == 100
    r = datavet.diagnose_curves([{"step": i, "loss": x} for i, x in enumerate(v)])
    assert [(f.code, f.metrics["onset_step"]) for f in r.findings] == [("C002", 100.0)]


def test_a_blow_up_that_ends_in_nan_is_a_divergence():
    v = np.r_[1.4, 1.3, 1.35, 4.0, 9.0, np.full(5, np.nan)]
    d = signals.blowup(v)
    assert d is not None and d.onset == 3 and d.nonfinite == 5

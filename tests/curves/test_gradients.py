"""C009 gradient-spikes: the GradientMonitor rule on a logged gradient norm."""

from __future__ import annotations

import numpy as np

from datavet import diagnose_curves

from .conftest import codes, finding, healthy_loss


def _norms(n=400, seed=0):
    return np.exp(0.3 * np.random.default_rng(seed).standard_normal(n))


def test_isolated_spikes_are_flagged_with_their_steps(records):
    g = _norms()
    g[[120, 230, 330]] *= 40
    r = diagnose_curves(records(step=range(400), loss=healthy_loss(400), grad_norm=g))
    assert codes(r) == ["C009"]
    f = finding(r, "C009")
    assert list(f.examples) == [120, 230, 330] and f.n_affected == 3
    marks = [m["step"] for m in r.curves["marks"] if m["code"] == "C009"]
    assert marks == [120, 230, 330]


def test_quiet_on_ordinary_variation(records):
    r = diagnose_curves(records(step=range(400), loss=healthy_loss(400), grad_norm=_norms()))
    assert codes(r) == []


def test_thresholds_can_be_tuned(records):
    g = _norms()
    g[200] *= 6
    r = diagnose_curves(
        records(step=range(400), grad_norm=g, loss=healthy_loss(400)),
        thresholds={"C009": {"factor": 4}},
    )
    assert 200 in finding(r, "C009").examples


def test_a_spike_right_before_the_nan_belongs_to_c001(records):
    g, loss = _norms(), healthy_loss(400)
    g[295] *= 50
    g[300:] = np.nan
    loss[301:] = np.nan
    r = diagnose_curves(records(step=range(400), loss=loss, grad_norm=g))
    assert codes(r) == ["C001"]
    assert finding(r, "C001").metrics["spike_step"] == 295


def test_skipped_without_a_gradient_norm(records):
    r = diagnose_curves(records(step=range(50), loss=healthy_loss(50)), select="C009")
    assert r.outcomes[0].status.value == "skipped"

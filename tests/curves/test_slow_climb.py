"""C002 on a slow climb: a training loss that falls, then climbs back over hundreds of steps
(no step doubles the level just before it) and does not come back."""

from __future__ import annotations

import numpy as np
import pytest

from datavet import Severity, diagnose_curves

from .conftest import codes, finding


def _noisy(clean, seed=0, noise=0.02):
    rng = np.random.default_rng(seed)
    return clean * np.exp(noise * rng.standard_normal(len(clean)))


@pytest.mark.parametrize("top", [8.0, 3.0])
def test_a_slow_climb_back_up_is_a_divergence_from_where_it_turned(records, top):
    loss = _noisy(np.r_[np.linspace(3, 1, 300), np.linspace(1, top, 300)])
    r = diagnose_curves(records(step=range(600), loss=loss), select="C002")
    f = finding(r, "C002")
    assert f.severity is Severity.ERROR
    assert abs(f.metrics["onset_step"] - 300) <= 15  # the turn, not where it passed its start
    assert "against its lowest level of 1" in f.message and "slow climb" in f.message


def test_a_small_or_recovered_rise_is_not_a_divergence(records):
    cases = {
        "rises by a quarter of what it learned": np.r_[
            np.linspace(3, 1, 300), np.linspace(1, 1.5, 300)
        ],
        "a 10% rise of a smooth loss": np.r_[np.linspace(0.7, 0.6, 300), np.full(300, 0.66)],
        # a slow bump to 2.2x that the run learns its way back down from
        "a bump it came back from": np.r_[
            np.linspace(3, 1, 300), np.linspace(1, 2.2, 150), np.linspace(2.2, 0.8, 150)
        ],
    }
    for name, clean in cases.items():
        r = diagnose_curves(records(step=range(len(clean)), loss=_noisy(clean)), select="C002")
        assert codes(r) == [], name


def test_a_validation_loss_that_climbs_slowly_is_not_called_a_divergence(records):
    # with no training loss the rules read the validation loss: its slow rise is overfitting's
    val = _noisy(np.r_[np.linspace(3, 1, 300), np.linspace(1, 3, 300)])
    r = diagnose_curves(records(step=range(600), val_loss=val), select="C002")
    assert codes(r) == []

"""C004 no-learning-plateau and C005 loss-barely-moves: a network that does not learn."""

from __future__ import annotations

import math

import numpy as np
import pytest

from datavet import UsageError, diagnose_curves

from .conftest import codes, finding, healthy_loss


def _flat(level, n=300, noise=0.03, seed=0, start=None):
    rng = np.random.default_rng(seed)
    v = level * np.exp(noise * rng.standard_normal(n))
    if start is not None:  # a fast drop from start to the level in the first 20 steps
        v[:20] = np.linspace(start, level, 20)
    return v


def test_plateau_at_the_prior_entropy(records):
    prior = [0.7, 0.1, 0.1, 0.1]
    h = -sum(p * math.log(p) for p in prior)
    loss = _flat(h, start=math.log(4))
    r = diagnose_curves(records(step=range(300), loss=loss), prior="700,100,100,100")
    assert codes(r) == ["C004"]  # it moved (ln 4 -> H), so not C005
    f = finding(r, "C004")
    assert abs(f.metrics["no_learning_level"] - h) < 1e-12
    assert f.metrics["since_step"] <= 25
    assert "prior entropy" in f.message


def test_plateau_at_ln_c_from_the_start_is_also_a_loss_that_barely_moves(records):
    r = diagnose_curves(records(step=range(300), loss=_flat(math.log(4))), classes=4)
    assert codes(r) == ["C004", "C005"]


def test_no_plateau_when_the_loss_goes_below_the_prior(records):
    r = diagnose_curves(records(step=range(400), loss=healthy_loss(400)), classes=4)
    assert "C004" not in codes(r)


def test_plateau_is_skipped_without_classes_or_prior(records):
    r = diagnose_curves(records(step=range(300), loss=_flat(1.386)), select="C004")
    (outcome,) = r.outcomes
    assert outcome.status.value == "skipped" and "--classes" in outcome.reason


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"classes": 1}, "classes must be"),
        ({"prior": "a,b"}, "not a list of numbers"),
        ({"prior": [1.0]}, "two or more"),
        ({"classes": 3, "prior": [0.5, 0.5]}, "prior has 2 classes"),
    ],
)
def test_bad_task_options(records, kwargs, message):
    with pytest.raises(UsageError, match=message):
        diagnose_curves(records(loss=[1.0, 0.9]), **kwargs)


def test_barely_moves_reports_lr_and_gradient_norm(records):
    loss = 1.386 - 0.0001 * np.arange(300) + 0.005 * np.random.default_rng(0).standard_normal(300)
    r = diagnose_curves(
        records(step=range(300), loss=loss, lr=np.full(300, 1e-5), grad_norm=np.full(300, 0.4))
    )
    f = finding(r, "C005")
    assert f.metrics["decrease"] < 0.1 and f.metrics["lr"] == 1e-5
    assert "learning rate is 1e-05" in f.message and "gradient norm's median is 0.4" in f.message


def test_barely_moves_is_quiet_when_the_loss_falls(records):
    assert codes(diagnose_curves(records(step=range(400), loss=healthy_loss(400)))) == []


def test_a_dead_network_after_a_jump_points_at_a_high_learning_rate(records):
    loss = _flat(1.386)
    loss[10] = 60.0
    f = finding(diagnose_curves(records(step=range(300), loss=loss), select="C005"), "C005")
    assert "jumped to 60 at step 10" in f.message

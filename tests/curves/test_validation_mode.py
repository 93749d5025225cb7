"""C011 validation-in-train-mode: a validation loss whose jitter ignores the learning rate.

The logs copy what a small dropout-0.5 MLP trained with Adam (lr 3e-3, two 10x step decays)
logged per epoch: in eval mode the validation jitter fell to ~1% of its peak-lr value after the
decays, in train mode it stayed at ~90%."""

from __future__ import annotations

import numpy as np
import pytest

from datavet import diagnose_curves

from .conftest import codes, finding, healthy_loss


def _lr(n=300):
    return np.array([3e-3 * 0.1 ** (sum(e >= m for m in (100, 200))) for e in range(n)])


def _log(train_mode: bool, *, n=300, seed=0, decay=True, dropout=None):
    rng = np.random.default_rng(seed)
    lr = _lr(n) if decay else np.full(n, 3e-3)
    train = healthy_loss(n, seed=seed)
    trend = 0.2 + 1.2 * np.exp(-np.arange(n) / 40)
    moved = np.cumsum(rng.standard_normal(n) * lr / 3e-3 * 0.001)  # weights drift with the lr
    val = trend + moved
    if train_mode:
        val = val + 0.03 * rng.standard_normal(n)  # fresh dropout masks at every pass
    rows = []
    for e in range(n):
        row = {"epoch": e, "train_loss": float(train[e]), "val_loss": float(val[e])}
        row["lr"] = float(lr[e])
        if dropout is not None:
            row["dropout"] = dropout
        rows.append(row)
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_validation_in_train_mode_fires(seed):
    f = finding(diagnose_curves(_log(True, seed=seed), select="C011"), "C011")
    assert f.metrics["ratio"] > 0.5 and f.metrics["lr_ratio"] == pytest.approx(0.01)
    assert "model.eval()" in f.hint


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eval_mode_validation_is_quiet(seed):
    r = diagnose_curves(_log(False, seed=seed), select="C011")
    assert codes(r) == []
    assert [o.status.value for o in r.outcomes if o.code == "C011"] == ["passed"]


def test_the_log_s_dropout_is_named():
    f = finding(diagnose_curves(_log(True, dropout=0.5), select="C011"), "C011")
    assert "dropout = 0.5" in f.message


def test_without_a_decayed_learning_rate_it_is_skipped():
    r = diagnose_curves(_log(True, decay=False), select="C011")
    assert codes(r) == []
    (o,) = [o for o in r.outcomes if o.code == "C011"]
    assert o.status.value == "skipped" and "decayed learning rate" in o.reason


def test_without_validation_or_lr_it_is_skipped():
    rows = [{k: v for k, v in row.items() if k != "lr"} for row in _log(True)]
    (o,) = [o for o in diagnose_curves(rows, select="C011").outcomes if o.code == "C011"]
    assert o.status.value == "skipped"

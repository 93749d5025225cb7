"""C004 on imbalanced labels without --prior: a validation accuracy that never moves gives the
majority share, and a loss parked at that prior's entropy is the no-learning plateau."""

from __future__ import annotations

import math

import numpy as np

from datavet import diagnose_curves

from .conftest import codes, finding


def _log(loss_level, acc, n=300, every=10, seed=0):
    rng = np.random.default_rng(seed)
    loss = loss_level * np.exp(0.03 * rng.standard_normal(n))
    loss[:20] = np.linspace(math.log(2) * 1.2, loss_level, 20)
    rows = []
    for i in range(n):
        row = {"step": i, "train_loss": float(loss[i])}
        if i % every == every - 1:
            row["val_acc"] = float(acc(i // every))
        rows.append(row)
    return rows


def h2(a):
    return -(a * math.log(a) + (1 - a) * math.log(1 - a))


def test_binary_majority_plateau_fires_without_a_prior():
    r = diagnose_curves(_log(h2(0.9), lambda k: 0.9), select="C004")
    f = finding(r, "C004")
    assert abs(f.metrics["no_learning_level"] - h2(0.9)) < 1e-9
    assert "binary entropy of the majority share 0.9" in f.message


def test_classes_two_alone_would_miss_it_ln2_is_not_the_level():
    # --classes 2 says ln 2 = 0.693; the loss sits at H(0.9) = 0.325, the prior's entropy
    r = diagnose_curves(_log(h2(0.9), lambda k: 0.9), classes=2, select="C004")
    assert codes(r) == ["C004"]


def test_four_classes_majority_plateau_fires():
    h = -(0.7 * math.log(0.7) + 3 * 0.1 * math.log(0.1))
    r = diagnose_curves(_log(h, lambda k: 70.0), classes=4, select="C004")  # a percentage
    f = finding(r, "C004")
    assert "majority share is 0.7" in f.message


def test_healthy_model_with_a_moving_accuracy_is_quiet():
    rng = np.random.default_rng(3)
    accs = 0.91 + 0.004 * rng.standard_normal(40)
    r = diagnose_curves(_log(h2(0.9), lambda k: round(float(accs[k]), 4)), select="C004")
    assert codes(r) == []


def test_constant_accuracy_with_a_loss_well_below_the_prior_is_quiet():
    r = diagnose_curves(_log(0.12, lambda k: 0.9), select="C004")
    assert codes(r) == []


def test_without_accuracy_classes_or_prior_it_is_still_skipped():
    rows = [{k: v for k, v in row.items() if k != "val_acc"} for row in _log(0.3, lambda k: 0.9)]
    (o,) = [o for o in diagnose_curves(rows, select="C004").outcomes if o.code == "C004"]
    assert o.status.value == "skipped"

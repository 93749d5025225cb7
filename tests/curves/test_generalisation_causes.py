"""C006 tells random labels (validation never improves) from ordinary overfitting; C007 says
dropout is the benign cause when the log shows it. Each with its twin."""

from __future__ import annotations

import numpy as np

from datavet import diagnose_curves

from .conftest import finding


def _log(val, train, n=400, every=10, dropout=None):
    rec = []
    for i in range(n):
        r = {"step": i, "train_loss": float(train[i])}
        if dropout is not None:
            r["dropout"] = dropout
        if i % every == 0:
            r["val_loss"] = float(val(i))
        rec.append(r)
    return rec


TRAIN = 0.02 + 1.59 * np.exp(-np.arange(400) / 50)  # from ln 5 toward 0: memorising


def test_random_labels_are_not_ordinary_overfitting():
    # the validation loss sits at ln 5 = 1.609, dips 1%, then rises: nothing generalises
    val = lambda i: 1.609 - 0.015 * np.exp(-((i - 40) ** 2) / 400) + 0.004 * max(0, i - 60)  # noqa: E731
    f = finding(diagnose_curves(_log(val, TRAIN), select="C006"), "C006")
    assert f.severity.label == "error"
    assert "never fell below its start" in f.message and "keep the checkpoint" not in f.hint
    assert "B001" in f.hint


def test_ordinary_overfitting_keeps_the_checkpoint_advice():
    val = lambda i: 0.6 + 1.0 * np.exp(-i / 30) + 0.002 * max(0, i - 100)  # noqa: E731
    f = finding(diagnose_curves(_log(val, TRAIN), select="C006"), "C006")
    assert f.severity.label == "warning" and "keep the checkpoint" in f.hint


def _val_below(i):
    return 0.8 * (0.3 + 1.3 * np.exp(-i / 60))


TRAIN_C007 = 0.3 + 1.3 * np.exp(-np.arange(400) / 60)


def test_val_below_train_with_dropout_in_the_log_is_info():
    r = diagnose_curves(_log(_val_below, TRAIN_C007, dropout=0.5), select="C007")
    f = finding(r, "C007")
    assert f.severity.label == "info" and "dropout = 0.5" in f.message and "benign" in f.message


def test_val_below_train_without_dropout_stays_a_warning():
    f = finding(diagnose_curves(_log(_val_below, TRAIN_C007), select="C007"), "C007")
    assert f.severity.label == "warning"


def test_dropout_zero_is_not_dropout():
    f = finding(diagnose_curves(_log(_val_below, TRAIN_C007, dropout=0.0), select="C007"), "C007")
    assert f.severity.label == "warning"

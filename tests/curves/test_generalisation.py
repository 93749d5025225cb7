"""C006 overfitting, C007 val-better-than-train, C008 suspiciously-good-validation."""

from __future__ import annotations

import numpy as np

from datavet import diagnose_curves

from .conftest import codes, finding, healthy_loss


def _run(n=400, every=10, val=None, metric=None, train=None):
    train = healthy_loss(n) if train is None else train
    rec = []
    for i in range(n):
        r = {"step": i, "train_loss": float(train[i])}
        if i % every == 0:
            r["val_loss"] = float(val(i))
            if metric is not None:
                r["val_acc"] = float(metric(i))
        rec.append(r)
    return rec


def test_overfitting_with_the_step_the_gap_opened():
    train = 0.02 + 1.3 * np.exp(-np.arange(400) / 50)
    val = lambda i: 0.6 + 0.8 * np.exp(-i / 30) + 0.002 * max(0, i - 100)  # noqa: E731
    r = diagnose_curves(_run(val=val, train=train), select="C006")
    f = finding(r, "C006")
    assert 80 <= f.metrics["gap_step"] <= 130
    assert f.metrics["rise"] > 0.2 and f.metrics["train_end"] < f.metrics["train_at_gap"]
    assert "best checkpoint" in f.message


def test_no_overfitting_when_validation_follows_training():
    train = healthy_loss(400, noise=0.0)
    r = diagnose_curves(_run(val=lambda i: 1.05 * train[i], train=train), select="C006")
    assert codes(r) == []


def test_no_overfitting_when_both_rise():  # that is instability, not overfitting
    train = np.r_[healthy_loss(200, noise=0.0), np.linspace(0.3, 0.5, 200)]
    r = diagnose_curves(_run(val=lambda i: 1.1 * train[i], train=train), select="C006")
    assert codes(r) == []


def test_validation_better_than_training_throughout():
    train = healthy_loss(400, noise=0.1)
    clean = healthy_loss(400, noise=0.0)
    r = diagnose_curves(_run(val=lambda i: 0.75 * clean[i] if i else clean[0], train=train))
    f = finding(r, "C007")
    assert f.metrics["share"] >= 0.9 and abs(f.metrics["median_ratio"] - 0.75) < 0.05


def test_validation_better_only_early_is_quiet():
    clean = healthy_loss(400, noise=0.0)
    val = lambda i: (0.75 if i < 200 else 1.1) * clean[i]  # noqa: E731
    r = diagnose_curves(_run(val=val, train=clean), select="C007")
    assert codes(r) == []


def test_per_epoch_logs_compare_validation_with_the_training_level_at_the_epoch_end():
    # Keras style: the training loss is the epoch's average, validation comes at its end; a
    # steadily falling loss makes validation look 10-20% better than the average, not better
    # than the model.
    loss = 1.4 * 0.8 ** np.arange(20)
    epoch_mean = loss / 0.8**0.5  # the average lags half an epoch
    rec = [{"epoch": e, "loss": epoch_mean[e], "val_loss": loss[e]} for e in range(20)]
    assert codes(diagnose_curves(rec, select="C007")) == []


def test_suspiciously_good_validation_score_in_percent():
    r = diagnose_curves(_run(val=lambda i: 0.5, metric=lambda i: min(99.6, 50 + i)), select="C008")
    f = finding(r, "C008")
    assert f.metrics["best"] == 0.996 and f.metrics["first_step"] == 50


def test_ordinary_validation_score_is_quiet_and_errors_are_skipped():
    assert codes(diagnose_curves(_run(val=lambda i: 0.5, metric=lambda i: 0.9))) == []
    rec = [{"step": i, "loss": 1.0, "val_error": 0.001} for i in range(10)]
    r = diagnose_curves(rec, columns={"val_metric": "val_error"}, select="C008")
    assert r.outcomes[0].status.value == "skipped" and "lower-is-better" in r.outcomes[0].reason

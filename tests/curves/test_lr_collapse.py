"""C010 learning-rate-collapse: a per-epoch schedule stepped every batch; its healthy twins."""

from __future__ import annotations

import math

import numpy as np

from datavet import diagnose_curves

from .conftest import codes, finding, healthy_loss


def _log(lr):
    loss = healthy_loss(len(lr))
    return [{"step": i, "train_loss": float(loss[i]), "lr": float(lr[i])} for i in range(len(lr))]


def step_lr(n, every_batch: bool, per_epoch=50):
    # StepLR(step_size=30, gamma=0.1) from 0.1, stepped per batch or once per 50-step epoch
    return [0.1 * 0.1 ** ((i if every_batch else i // per_epoch) // 30) for i in range(n)]


def test_schedule_stepped_every_batch_fires():
    r = diagnose_curves(_log(step_lr(400, every_batch=True)), select="C010")
    f = finding(r, "C010")
    assert f.metrics["collapse_step"] == 150 and f.metrics["final_lr"] < 1e-13
    assert "per epoch" in f.hint and "scheduler.step()" in f.hint


def test_schedule_stepped_per_epoch_is_quiet():
    assert codes(diagnose_curves(_log(step_lr(400, every_batch=False)), select="C010")) == []


def test_cosine_to_zero_at_the_end_is_quiet():
    lr = [0.05 * (1 + math.cos(math.pi * i / 399)) for i in range(400)]
    assert codes(diagnose_curves(_log(lr), select="C010")) == []


def test_warmup_from_zero_is_quiet():
    lr = np.minimum(np.arange(400) / 100, 1.0) * 1e-3
    assert codes(diagnose_curves(_log(lr), select="C010")) == []

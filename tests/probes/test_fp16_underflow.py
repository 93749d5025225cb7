"""M016: float16 gradients that underflow to 0 without loss scaling; the twins are quiet."""

from __future__ import annotations

import torch
from torch import nn

from .models import CE, finding, run, seed_batch, seed_mlp, status


def small_loss(out, y):
    return CE(out, y) * 1e-6  # e.g. a loss averaged over a huge count: tiny gradients


def test_tiny_gradients_underflow_in_fp16():
    x, y, _ = seed_batch()
    r = run(seed_mlp().half(), (x.half(), y), loss_fn=small_loss, select="M016")
    f = finding(r, "M016")
    assert f.metrics["underflow_share"] > 0.5 and "GradScaler" in f.hint


def test_normal_fp16_gradients_are_quiet():
    x, y, _ = seed_batch()
    r = run(seed_mlp().half(), (x.half(), y), select="M016")
    assert status(r, "M016") == "passed"
    assert r.probes["checks"]["M016"]["underflow_share"] < 0.01


def test_fp32_model_is_skipped():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), loss_fn=small_loss, select="M016")
    assert status(r, "M016") == "skipped"


def test_user_model_stays_fp16():
    x, y, _ = seed_batch()
    model = seed_mlp().half()
    run(model, (x.half(), y), loss_fn=small_loss, select="M016")
    assert all(p.dtype == torch.float16 and p.grad is None for p in model.parameters())
    assert isinstance(model, nn.Sequential)

"""M010 on two train-step bugs: zero_grad between backward and step; gradient accumulation over
k micro-batches without dividing by k. Each with its healthy twin."""

from __future__ import annotations

import torch
from torch import nn

from .models import CE, finding, run, seed_batch, seed_mlp


def zero_grad_after_backward(model, opt, batch):
    x, y = batch
    loss = CE(model(x), y)
    loss.backward()
    opt.zero_grad()  # the bug: the step below sees no gradient
    opt.step()


def healthy_step(model, opt, batch):
    x, y = batch
    opt.zero_grad()
    CE(model(x), y).backward()
    opt.step()


def accumulate(divide: bool, k: int = 4):
    def step(model, opt, batch):
        x, y = batch
        opt.zero_grad()
        for xs, ys in zip(x.chunk(k), y.chunk(k)):
            loss = CE(model(xs), ys)
            (loss / k if divide else loss).backward()
        opt.step()

    return step


def test_zero_grad_after_backward_fires():
    x, y, _ = seed_batch()
    f = finding(run(seed_mlp(), (x, y), train_step=zero_grad_after_backward, select="M010"), "M010")
    assert "all-zero (or no) gradients" in f.message
    assert "between backward() and step()" in f.message


def test_healthy_step_is_quiet():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=healthy_step, select="M010")
    assert r.findings == []
    assert abs(r.probes["checks"]["M010"]["full_batch_ratio"] - 1) < 1e-4


def test_accumulation_without_dividing_fires_with_k():
    x, y, _ = seed_batch()
    f = finding(run(seed_mlp(), (x, y), train_step=accumulate(False), select="M010"), "M010")
    assert f.metrics["micro_batches"] == 4 and "loss / 4" in f.hint


def test_accumulation_divided_by_k_is_quiet():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=accumulate(True), select="M010")
    assert r.findings == []


def test_dropout_model_accumulating_is_still_found():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 5))
    x, y, _ = seed_batch()
    f = finding(run(model, (x, y), train_step=accumulate(False, 2), select="M010"), "M010")
    assert f.metrics["micro_batches"] == 2

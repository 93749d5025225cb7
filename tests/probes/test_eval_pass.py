"""M017: an evaluation step that runs in train mode updates BatchNorm statistics."""

from __future__ import annotations

import torch
from torch import nn

from .models import CE, finding, run, seed_batch, status


def bn_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 5))


def eval_without_eval_mode(model, batch):
    with torch.no_grad():  # no_grad alone: BatchNorm still updates its running statistics
        CE(model(batch[0]), batch[1])


def eval_properly(model, batch):
    model.eval()
    with torch.no_grad():
        CE(model(batch[0]), batch[1])
    model.train()


def test_eval_in_train_mode_changes_batchnorm_statistics():
    x, y, _ = seed_batch()
    f = finding(run(bn_model(), (x, y), eval_step=eval_without_eval_mode, select="M017"), "M017")
    assert "1.running_mean" in f.columns and "1.running_var" in f.columns
    assert "model.eval()" in f.hint and f.metrics["parameters_changed"] == 0


def test_eval_in_eval_mode_is_quiet():
    x, y, _ = seed_batch()
    r = run(bn_model(), (x, y), eval_step=eval_properly, select="M017")
    assert status(r, "M017") == "passed"


def test_without_eval_step_it_is_skipped():
    x, y, _ = seed_batch()
    assert status(run(bn_model(), (x, y), select="M017"), "M017") == "skipped"

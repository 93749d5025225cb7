"""Fix texts that fit the cause: M003 never recommends nll_loss(log(p)); M007 calls a pinned
sigmoid saturated; M004's fix for an fp16 overflow speaks of fp16; the curve causes name the
mask probes."""

from __future__ import annotations

import torch
from torch import nn

from .models import finding, log_feature_case, run, seed_batch, seed_mlp


def test_m003_fix_is_the_stable_form():
    x, y, _ = seed_batch()
    f = finding(run(seed_mlp(nn.Softmax(dim=1)), (x, y), select="M003"), "M003")
    assert "nll_loss(log(p))" not in f.hint and "log_softmax" in f.hint
    from datavet.probes.double_softmax import DoubleSoftmax

    assert "log(p + eps)" not in DoubleSoftmax.__doc__


def sigmoid_stack(bias: float) -> nn.Module:
    torch.manual_seed(0)
    mid = nn.Linear(64, 64)
    with torch.no_grad():
        mid.bias.fill_(bias)
    return nn.Sequential(nn.Linear(10, 64), nn.Tanh(), mid, nn.Sigmoid(), nn.Linear(64, 5))


def test_m007_sigmoid_pinned_at_one_is_saturated_not_vanishing():
    x, y, _ = seed_batch()
    r = run(sigmoid_stack(30.0), (x, y), select="M007")
    f = finding(r, "M007")
    assert "saturated" in f.message and "shrink toward 0" not in f.message
    assert f.metrics["mean"] > 0.99
    assert "vanish" not in f.message


def test_m007_healthy_sigmoid_is_quiet():
    x, y, _ = seed_batch()
    r = run(sigmoid_stack(0.0), (x, y), select="M007")
    assert r.findings == []


def test_m004_fp16_overflow_fix_names_fp16():
    torch.manual_seed(0)
    big = nn.Linear(10, 64)
    with torch.no_grad():
        big.weight.fill_(4000.0)  # 10 inputs of ~1 x 4000 overflow float16's 65,504
    model = nn.Sequential(big, nn.ReLU(), nn.Linear(64, 5)).half()
    x, y, _ = seed_batch()
    f = finding(run(model, (x.abs().half() + 1, y), select="M004"), "M004")
    assert "65,504" in f.hint and "autocast" in f.hint


def test_m004_fp32_log_zero_keeps_the_domain_fix():
    model, batch = log_feature_case()
    f = finding(run(model, batch, loss_fn=nn.functional.mse_loss, select="M004"), "M004")
    assert "log(x + eps)" in f.hint and "65,504" not in f.hint


def test_curve_causes_name_the_mask_probes():
    from datavet.curves.causes import CAUSES

    check = CAUSES["mask"].check
    assert "no mask probe" not in check and "M013" in check and "M014" in check

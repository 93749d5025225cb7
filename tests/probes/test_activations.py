"""M006 saturated-activations and M007 vanishing-activations: the seed's tanh depth-10 table."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from .models import MSE, finding, run, status, tanh_stacks

SELECT = ["M006", "M007"]


@pytest.fixture(scope="module")
def stacks():
    x0, models = tanh_stacks()
    y = torch.zeros(512, 256, dtype=torch.float64)
    return {name: run(m, (x0, y), loss_fn=MSE, select=SELECT) for name, m in models.items()}


def by_depth(report) -> dict[int, dict]:
    return {r["depth"]: r for r in report.probes["layers"] if r["depth"] is not None}


def table(report) -> list[str]:
    rows = by_depth(report)
    return [
        f"layer {d:2d}: std {rows[d]['std']:.3g}, saturated {rows[d]['saturated']:.0%}"
        for d in (1, 5, 10)
    ]


def test_seed_table_is_reproduced(stacks):
    # seeds/004: the printed table, layer by layer
    assert table(stacks["std 1"]) == [
        "layer  1: std 0.975, saturated 87%",
        "layer  5: std 0.974, saturated 87%",
        "layer 10: std 0.974, saturated 86%",
    ]
    assert table(stacks["std 1/sqrt(D)"]) == [
        "layer  1: std 0.629, saturated 1%",
        "layer  5: std 0.323, saturated 0%",
        "layer 10: std 0.226, saturated 0%",
    ]
    assert table(stacks["std 0.01"]) == [
        "layer  1: std 0.157, saturated 0%",
        "layer  5: std 0.000104, saturated 0%",
        "layer 10: std 1.1e-08, saturated 0%",
    ]


def test_std_1_fires_saturation_at_layer_1(stacks):
    r = stacks["std 1"]
    f = finding(r, "M006")
    assert f.metrics["layer"] == 1
    assert f"{f.metrics['saturated_fraction']:.0%}" == "87%"
    assert f.metrics["layers_flagged"] == 10
    assert f.message.startswith("87% of the activations of layer 1 ('1', Tanh) are saturated")
    assert status(r, "M007") == "passed"


def test_std_001_fires_vanishing_activations(stacks):
    r = stacks["std 0.01"]
    f = finding(r, "M007")
    assert f"{f.metrics['last_std']:.2g}" == "1.1e-08"
    assert f"{f.metrics['first_std']:.3g}" == "0.157"
    assert "1.1e-08 at layer 10" in f.message
    assert status(r, "M006") == "passed"


def test_std_one_over_sqrt_d_passes_both(stacks):
    r = stacks["std 1/sqrt(D)"]
    assert [o.status.value for o in r.outcomes] == ["passed", "passed"]


def test_layer_table_covers_every_leaf_module_with_flags(stacks):
    rows = stacks["std 1"].probes["layers"]
    assert len(rows) == 20  # 10 Linear + 10 Tanh, in call order
    assert [r["type"] for r in rows[:2]] == ["Linear", "Tanh"]
    assert all(r["flags"] == ["saturated"] for r in rows if r["type"] == "Tanh")
    assert all(r["flags"] == [] and r["depth"] is None for r in rows if r["type"] == "Linear")
    vanishing = [r for r in stacks["std 0.01"].probes["layers"] if "vanishing" in r["flags"]]
    assert vanishing and all(r["depth"] >= 2 for r in vanishing)


def test_dead_relu_layers_fire():
    torch.manual_seed(0)
    body = nn.Linear(8, 32)
    with torch.no_grad():
        body.bias.fill_(-10.0)  # every pre-activation negative: ReLU outputs 0 everywhere
    model = nn.Sequential(body, nn.ReLU(), nn.Linear(32, 1))
    r = run(model, (torch.randn(16, 8), torch.randn(16, 1)), loss_fn=MSE, select=SELECT)
    f = finding(r, "M007")
    assert "output exactly 0" in f.message and f.metrics["max_dead_fraction"] == 1.0
    assert status(r, "M006") == "skipped"  # no tanh or sigmoid


def test_saturated_sigmoid_fires():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Sigmoid(), nn.Linear(32, 1))
    x = torch.randn(16, 8) * 100  # unstandardised inputs push the sigmoid to 0 and 1
    r = run(model, (x, torch.randn(16, 1)), loss_fn=MSE, select="M006")
    assert "|2a - 1| > 0.99" in finding(r, "M006").message


def test_thresholds_are_configurable(stacks):
    x0, models = tanh_stacks()
    y = torch.zeros(512, 256, dtype=torch.float64)
    r = run(
        models["std 1/sqrt(D)"],
        (x0, y),
        loss_fn=MSE,
        select="M007",
        thresholds={"M007": {"min_std_ratio": 0.5}},
    )
    assert status(r, "M007") == "failed"  # 0.226 / 0.629 = 0.36 < 0.5


def test_no_activation_module_is_skipped():
    r = run(nn.Linear(3, 1), (torch.randn(4, 3), torch.randn(4, 1)), loss_fn=MSE, select=SELECT)
    assert [o.status.value for o in r.outcomes] == ["skipped", "skipped"]
    assert r.findings == []

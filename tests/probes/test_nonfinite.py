"""M004 nonfinite-forward and M005 nonfinite-backward: the seed's two localisation examples."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from .models import MSE, finding, log_feature_case, norm_case, run, status

SELECT = ["M004", "M005"]


@pytest.fixture(scope="module")
def log_feature():
    model, batch = log_feature_case()
    return run(model, batch, loss_fn=MSE, select=SELECT)


def test_seed_log_feature_is_localised_to_the_module_and_sample(log_feature):
    f = finding(log_feature, "M004")
    assert f.severity.label == "error"
    assert "Module '0' (LogFeature) is the first" in f.message
    assert "sample row [4]" in f.message
    assert f.examples == (4,) and f.n_affected == 1
    assert f.columns[0] == "0"
    d = log_feature.probes["checks"]["M004"]
    assert d["first"]["type"] == "LogFeature" and d["first"]["rows"] == [4]
    assert d["first"]["inf"] == 1 and d["first"]["nan"] == 0  # log(0) = -inf


def test_seed_log_feature_loss_is_finite_and_gradients_nan(log_feature):
    d = log_feature.probes["checks"]["M004"]
    assert f"{d['loss']:.4f}" == "0.1516"
    assert d["nonfinite_gradients"] == ["1.weight"]
    f = finding(log_feature, "M004")
    assert "the loss stayed finite (0.1516)" in f.message
    assert "gradients are non-finite in 1.weight" in f.message


def test_m005_leaves_a_non_finite_forward_to_m004(log_feature):
    assert status(log_feature, "M005") == "skipped"


def test_non_finite_inputs_are_reported_before_any_module():
    model, (x, y) = log_feature_case()
    x[2, 1] = float("nan")
    r = run(model, (x, y), loss_fn=MSE, select="M004")
    f = finding(r, "M004")
    assert f.message.startswith("The batch's inputs already hold 1 NaN value in sample row [2]")
    assert f.examples == (2,)


def test_a_loss_function_that_returns_nan_is_named():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)

    def log_loss(out, y):
        return torch.log(out - out).mean()  # log(0) in the loss itself

    r = run(model, (torch.randn(4, 3), torch.zeros(4, 1)), loss_fn=log_loss, select="M004")
    assert (
        "Every module's output is finite but the loss function returns"
        in finding(r, "M004").message
    )


def test_inline_operations_are_attributed_to_the_enclosing_module():
    class Inline(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(torch.log(x))

    x = torch.rand(5, 3)
    x[1, 2] = -1.0
    r = run(Inline(), (x, torch.zeros(5, 3)), loss_fn=MSE, select="M004")
    f = finding(r, "M004")
    # lin is the first module to return, but its input was already NaN: the caller made it
    assert "Module 'lin' (Linear) is the first" in f.message and f.examples == (1,)
    assert "its input already held them" in f.message
    assert "the forward of the model (Inline)" in f.message


@pytest.fixture(scope="module")
def norm():
    model, batch = norm_case()
    return run(model, batch, loss_fn=MSE, select=SELECT)


def test_seed_sqrt_of_norm_names_pow_backward(norm):
    assert status(norm, "M004") == "passed"
    f = finding(norm, "M005")
    assert "'PowBackward0'" in f.message
    assert f.columns == ("w",)
    d = norm.probes["checks"]["M005"]
    assert d["function"] == "PowBackward0" and d["output_index"] == 0
    assert d["error"] == "Function 'PowBackward0' returned nan values in its 0th output."


def test_anomaly_mode_points_at_the_forward_line(norm):
    src = norm.probes["checks"]["M005"]["source"]
    assert src["file"].endswith("models.py") and src["function"] == "forward"
    assert "torch.sqrt((self.w**2).sum())" in src["code"]
    assert f"models.py:{src['line']} in forward" in finding(norm, "M005").message


def test_anomaly_mode_is_off_after_the_probe(norm):
    assert torch.is_anomaly_enabled() is False
    model, batch = norm_case()
    run(model, batch, loss_fn=MSE, select="M005")
    assert torch.is_anomaly_enabled() is False


def test_a_healthy_model_passes_both():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    r = run(model, (torch.randn(6, 3), torch.randn(6, 1)), loss_fn=MSE, select=SELECT)
    assert [o.status.value for o in r.outcomes] == ["passed", "passed"]
    assert r.findings == []

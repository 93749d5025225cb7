"""datavet.probe: the user's model is never changed, RNG state is restored, the Report contract
holds, misuse is a UsageError, torch is optional, and the probes run on the model's device."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest
import torch
from jsonschema import Draft202012Validator
from torch import nn

import datavet
from datavet import UsageError
from datavet.output.json import schema
from datavet.rules import PROBES

from .models import CE, MSE, codes, run, seed_batch, seed_mlp, status

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
MODEL_PROBES = [p.code for p in PROBES if "model" in p.needs]


def snapshot(model):
    return {
        "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "grads": [None if p.grad is None else p.grad.clone() for p in model.parameters()],
        "training": [m.training for m in model.modules()],
        "requires_grad": [p.requires_grad for p in model.parameters()],
    }


def same(a, b) -> bool:
    return (
        a["state"].keys() == b["state"].keys()
        and all(torch.equal(a["state"][k], b["state"][k]) for k in a["state"])
        and a["training"] == b["training"]
        and a["requires_grad"] == b["requires_grad"]
        and [g is None for g in a["grads"]] == [g is None for g in b["grads"]]
        and all(g is None or torch.equal(g, h) for g, h in zip(a["grads"], b["grads"]))
    )


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    CE(model(batch[0]), batch[1]).backward()
    optimizer.step()


def test_the_model_and_every_rng_are_left_as_they_were():
    x, y, _ = seed_batch()
    torch.manual_seed(1)
    model = nn.Sequential(
        nn.Linear(10, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 5)
    )
    CE(model(x), y).backward()  # gradients the probes must not touch
    model.eval()  # a mode the probes must not change
    before = snapshot(model)
    assert all(g is not None for g in before["grads"])
    torch.manual_seed(123)
    random.seed(5)
    np.random.seed(7)
    states = (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    report = run(model, (x, y), train_step=train_step, thresholds={"M002": {"steps": 30}})
    assert [o.code for o in report.outcomes] == MODEL_PROBES
    assert same(before, snapshot(model))
    assert torch.equal(torch.get_rng_state(), states[0])
    assert random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])


def test_results_are_reproducible_under_the_seed():
    x, y, _ = seed_batch()
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 5))
    one = run(model, (x, y), select=["M001", "M002"], thresholds={"M002": {"steps": 20}})
    two = run(model, (x, y), select=["M001", "M002"], thresholds={"M002": {"steps": 20}})
    assert one.probes["checks"] == two.probes["checks"]


def test_report_contract_json_schema_and_exit_codes():
    x, y, _ = seed_batch()
    report = run(seed_mlp(nn.Softmax(dim=1)), (x, y))
    assert codes(report) == ["M002", "M003"]
    assert report.exit_code() == 1 and not report.passed
    payload = json.loads(report.to_json())
    assert list(Draft202012Validator(schema()).iter_errors(payload)) == []
    assert payload["datasets"] == {} and payload["target"] == "batch[1]"
    assert payload["task"] == "classification"
    assert payload["probes"]["kind"] == "model"
    assert payload["probes"]["model"]["parameters"] == 10 * 64 + 64 + 64 * 5 + 5
    assert set(payload["probes"]["checks"]) == set(MODEL_PROBES)
    assert all(f["split"] is None for f in payload["findings"])
    healthy = run(seed_mlp(), (x, y))
    assert healthy.exit_code() == 0 and healthy.findings == []


def test_an_audit_payload_has_no_probes_key():
    import pandas as pd

    report = datavet.audit(pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]}))
    assert report.probes is None and "probes" not in report.to_dict()


def test_a_crashing_probe_is_recorded_and_exits_2():
    def broken_step(model, optimizer, batch):
        raise RuntimeError("boom in the user's step")

    x, y, _ = seed_batch()
    report = run(seed_mlp(), (x, y), train_step=broken_step, select=["M001", "M010"])
    assert status(report, "M001") == "passed"  # the others still ran
    crashed = report.crashed
    assert [o.code for o in crashed] == ["M010"] and "boom" in crashed[0].reason
    assert report.exit_code() == 2


def test_select_ignore_severity_and_thresholds():
    x, y, _ = seed_batch()
    report = run(
        seed_mlp(nn.Softmax(dim=1)),
        (x, y),
        select="M00",
        ignore=["M002", "M004"],
        severity={"double-softmax": "warning"},
    )
    assert [o.code for o in report.outcomes] == [
        "M001",
        "M003",
        "M005",
        "M006",
        "M007",
        "M008",
        "M009",
    ]
    assert [f.severity.label for f in report.findings] == ["warning"]
    assert report.exit_code() == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"select": "M011"}, "GradientMonitor"),
        ({"select": "gradient-spike"}, "GradientMonitor"),
        ({"select": "Z"}, "unknown probe selector"),
        ({"thresholds": {"M002": {"epochs": 3}}}, "M002 has no threshold epochs"),
        ({"task": "ranking"}, "task must be one of"),
        ({"fail_on": "fatal"}, "unknown severity"),
        ({"severity": {"M999": "error"}}, "unknown probe"),
        ({"train_step": 3}, "train_step must be callable"),
    ],
)
def test_misuse_is_a_usage_error(kwargs, match):
    x, y, _ = seed_batch()
    with pytest.raises(UsageError, match=match):
        run(seed_mlp(), (x, y), **kwargs)


@pytest.mark.parametrize(
    "model, batch, loss_fn, match",
    [
        ("not a model", None, CE, "torch.nn.Module"),
        (nn.Linear(10, 5), "xy", CE, "batch must be"),
        (nn.Linear(10, 5), (torch.randn(4, 10), [0, 1, 2, 3]), CE, "target must be a tensor"),
        (nn.Linear(10, 5), (torch.randn(4, 10), torch.zeros(3).long()), CE, "batch size 4"),
        (nn.Linear(3, 5), (torch.randn(4, 10), torch.zeros(4).long()), CE, "failed on the batch"),
        (
            nn.Linear(10, 1),
            (torch.randn(4, 10), torch.zeros(4, 1)),
            lambda o, t: (o - t).pow(2),
            "scalar tensor",
        ),
        (nn.Linear(10, 5), (torch.randn(4, 10), torch.zeros(4).long()), None, "callable"),
    ],
)
def test_bad_inputs_are_usage_errors(model, batch, loss_fn, match):
    with pytest.raises(UsageError, match=match):
        datavet.probe(model, batch, loss_fn=loss_fn)


def test_task_detection_says_why():
    x, y, _ = seed_batch()
    assert run(seed_mlp(), (x, y), select="M001").task_reason == (
        "integer targets and 5 output columns"
    )
    r = run(nn.Linear(10, 1), (x, torch.randn(16, 1)), loss_fn=MSE, select="M001")
    assert (r.task, r.task_reason) == ("regression", "floating-point targets")
    soft = torch.softmax(torch.randn(16, 5), 1)
    r = run(seed_mlp(), (x, soft), select="M001")
    assert (r.task, r.task_reason) == ("classification", "targets are class distributions")
    r = run(
        seed_mlp(),
        (x, y.float()[:, None].expand(16, 5).contiguous()),
        loss_fn=MSE,
        task="regression",
        select="M001",
    )
    assert r.task == "regression"


def test_dict_batches_and_keyword_inputs():
    class Kw(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(10, 5)

        def forward(self, features):
            return self.lin(features)

    x, y, _ = seed_batch()
    r = run(Kw(), {"inputs": {"features": x}, "target": y}, select=["M001", "M009"])
    assert [o.status.value for o in r.outcomes] == ["passed", "passed"]


def test_import_datavet_does_not_need_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises ImportError
        "import datavet\n"
        "assert datavet.probe and datavet.GradientMonitor and len(datavet.PROBES) == 21\n"
        "from datavet.cli import main\n"
        "assert main(['rule', 'M002']) == 0\n"
        "try:\n"
        "    datavet.probe(object(), (1, 2), loss_fn=len)\n"
        "except datavet.UsageError as e:\n"
        "    assert 'pip install' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('no UsageError')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "cannot-overfit-batch" in done.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_probes_run_on_the_models_device(device):
    """CPU always; CUDA as well when this machine has a GPU (the code is device-agnostic)."""
    x, y, _ = seed_batch()
    model = seed_mlp(nn.Softmax(dim=1)).to(device)
    r = run(model, (x, y), train_step=train_step)  # the batch is moved to the model
    assert r.probes["model"]["device"].startswith(device)
    assert codes(r) == ["M002", "M003"]
    assert r.crashed == []
    assert f"{r.probes['checks']['M002']['final_loss']:.2f}" == "0.97"
    assert next(model.parameters()).device.type == device


def cpu_mentions(source: str) -> set[str]:
    """Code lines (not comments) that name the CPU or leave torch for NumPy."""
    import re

    pattern = re.compile(r"""\bcpu\b|\.numpy\(\)""")
    return {
        line.strip()
        for line in source.splitlines()
        if pattern.search(line) and not line.lstrip().startswith("#")
    }


def test_no_probe_hard_codes_the_cpu():
    """The probes create tensors on the model's device: the only CPU mentions allowed are the
    fallback device of a parameterless model, the RNG state save/restore, and the monitor's
    read-back of finished norms to the host. (On a GPU machine the test above runs them all.)"""
    from pathlib import Path

    import datavet.probes

    allowed = {
        'return torch.device("cpu")',
        "cpu_state = torch.get_rng_state()",
        "torch.set_rng_state(cpu_state)",
        "totals = torch.stack([p[1].float().cpu() for p in pending]).tolist()",
        "values = per.float().cpu().tolist()",
        "self._layers.append((label, dict(zip(names, per.float().cpu().tolist()))))",
        # the monitor's snapshot figures, read back when the report is built
        "for n, v in zip(names, absmax.cpu().tolist()):",
        "for n, v in zip(names, ratio.float().cpu().tolist()):",
        # the saved non-finite step: a file that loads on any machine
        "state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}",
        "return obj.detach().cpu()",
        'return torch.load(path, map_location="cpu", weights_only=True)',
    }
    found = set()
    for path in Path(datavet.probes.__file__).parent.glob("*.py"):
        found |= cpu_mentions(path.read_text())
    assert found <= allowed
    assert cpu_mentions('x = torch.zeros(3, device="cpu")\ny = t.cpu().numpy()') == {
        'x = torch.zeros(3, device="cpu")',
        "y = t.cpu().numpy()",
    }

"""datavet.preflight sends a probe's settings to the probes whether the probe is named by code
or by name (a name used to go to the data audit, which refuses probe rules)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")  # the preflight is PyTorch's: the [torch] extra
from torch import nn  # noqa: E402

import datavet  # noqa: E402


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    return pd.DataFrame(x, columns=["a", "b", "c", "d"]).assign(label=y)


@pytest.mark.parametrize("key", ["M001", "initial-loss-mismatch", "INITIAL-LOSS-MISMATCH"])
def test_probe_severity_by_code_or_name(key):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    with torch.no_grad():
        model[2].bias.copy_(torch.tensor([8.0, -8.0]))  # a confident start: M001 fires
    r = datavet.preflight(
        model,
        _table(),
        target="label",
        loss_fn=nn.functional.cross_entropy,
        severity={key: "error"},
    )
    (m001,) = [f for f in r.findings if f.code == "M001"]
    assert m001.severity == datavet.Severity.ERROR

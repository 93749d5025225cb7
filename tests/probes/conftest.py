"""The probe tests run torch on one intra-op thread: their tensors are tiny, and two OpenMP
threads on a busy 2-core machine make each small op ten times slower, not faster."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="package", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

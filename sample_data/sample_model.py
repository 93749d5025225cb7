"""A tiny model for `datavet preflight`: four numeric features in, two classes out.

    datavet preflight sample_data/sample_model.py:factory --train sample_data/clean_train.parquet \
        --test sample_data/clean_test.parquet --target label
"""

import torch
from torch import nn


def factory():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    return model, nn.functional.cross_entropy

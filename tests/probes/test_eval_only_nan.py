"""M004 on output that is non-finite only in eval mode: an inverted key-padding mask (a 1 = keep
attention_mask passed as src_key_padding_mask, True = ignore). Its twin passes the mask right."""

from __future__ import annotations

import warnings

import torch
from torch import nn

from .models import finding, run, status


class Encoder(nn.Module):
    def __init__(self, invert: bool):
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(32, 5)
        self.invert = invert

    def forward(self, ids, attention_mask):
        mask = attention_mask.bool() if self.invert else attention_mask == 0
        return self.head(self.enc(self.emb(ids), src_key_padding_mask=mask))


def case(invert: bool):
    torch.manual_seed(0)
    ids = torch.randint(1, 50, (8, 12))
    am = torch.ones(8, 12, dtype=torch.long)
    am[:4, 8:] = 0
    ids[:4, 8:] = 0
    y = torch.randint(0, 5, (8, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Encoder(invert)
    return model, ((ids, am), y)


def ce(out, y):
    return nn.functional.cross_entropy(out.reshape(-1, 5), y.reshape(-1))


def test_inverted_padding_mask_is_found_in_eval_mode():
    model, batch = case(invert=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run(model, batch, loss_fn=ce, select="M004")
    f = finding(r, "M004")
    assert "finite in train mode" in f.message and "attention_mask == 0" in f.hint
    assert f.examples == (4, 5, 6, 7)  # the rows without padding: every key masked


def test_correct_padding_mask_is_quiet():
    model, batch = case(invert=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run(model, batch, loss_fn=ce, select="M004")
    assert status(r, "M004") == "passed"

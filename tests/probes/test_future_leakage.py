"""M013 future-leakage: a causal transformer / RNN passes, the same model without its mask (or
bidirectional) fires, with the first leaking position, how far ahead it reads and the module."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from torch import nn

from .models import MSE, finding, run, status

VOCAB, T = 20, 12


class TinyLM(nn.Module):
    """A 2-layer transformer language model over token ids; ``mask`` picks the attention mask:
    "causal" (the right one), None (forgotten), or "one-ahead" (``triu`` with diagonal 2)."""

    def __init__(self, mask: str | None, *, layers: int = 2, d: int = 16) -> None:
        super().__init__()
        self.mask = mask
        self.emb = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(T, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, VOCAB)

    def forward(self, tokens, padding=None):
        n = tokens.shape[1]
        if padding is not None:  # a float mask like the attention mask (True = padding)
            padding = torch.zeros(padding.shape).masked_fill(padding, float("-inf"))
        h = self.emb(tokens) + self.pos[:n]
        if self.mask == "causal":
            mask = nn.Transformer.generate_square_subsequent_mask(n, device=tokens.device)
            h = self.encoder(h, mask=mask, is_causal=True, src_key_padding_mask=padding)
        elif self.mask == "one-ahead":  # an off-by-one triu: position t also sees t + 1
            mask = torch.triu(torch.full((n, n), float("-inf"), device=tokens.device), 2)
            h = self.encoder(h, mask=mask, src_key_padding_mask=padding)
        else:
            h = self.encoder(h, src_key_padding_mask=padding)
        return self.head(h)


class Tagger(nn.Module):
    """A GRU over (N, T, F) features with a per-position regression head."""

    def __init__(self, bidirectional: bool) -> None:
        super().__init__()
        self.rnn = nn.GRU(3, 8, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(16 if bidirectional else 8, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class ConvSeq(nn.Module):
    """A Conv1d over (N, F, T): left padding is causal, symmetric padding reads 1 step ahead."""

    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        self.conv = nn.Conv1d(3, 4, kernel_size=3, padding=0 if causal else 1)

    def forward(self, x):
        if self.causal:
            x = nn.functional.pad(x, (2, 0))
        return self.conv(x)


def lm_loss(out, y):
    return nn.functional.cross_entropy(out.flatten(0, 1), y.flatten())


def lm_batch():
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB, (4, T))
    return tokens, tokens.roll(-1, 1)


def lm(mask, **kwargs):
    torch.manual_seed(0)
    return TinyLM(mask, **kwargs)


def tagger_batch():
    torch.manual_seed(0)
    return torch.randn(4, 10, 3), torch.randn(4, 10, 1)


def tagger(bidirectional):
    torch.manual_seed(0)
    return Tagger(bidirectional)


def probe_lm(model, batch=None, **kwargs):
    return run(model, batch or lm_batch(), loss_fn=lm_loss, select="M013", **kwargs)


def details(report):
    return report.probes["checks"]["M013"]


@pytest.fixture(scope="module")
def transformers():
    return {mask: probe_lm(lm(mask)) for mask in ("causal", None, "one-ahead")}


def test_causal_transformer_passes(transformers):
    r = transformers["causal"]
    assert status(r, "M013") == "passed" and r.findings == []
    d = details(r)
    assert d["sequence_length"] == T and len(d["cuts"]) == T - 1
    assert not any(c["leaks"] for c in d["cuts"])
    assert all(c["max_change"] <= d["tolerance"] for c in d["cuts"])


def test_transformer_without_its_mask_fires(transformers):
    r = transformers[None]
    f = finding(r, "M013")
    assert f.severity.label == "warning"
    assert f.metrics["first_position"] == 0 and f.metrics["lookahead"] == T - 1
    assert f.metrics["cuts_leaking"] == f.metrics["cuts_tested"] == T - 1
    assert f.message.startswith(
        "The model's output at earlier positions changes when only later inputs change: "
        f"position 0 already reads the input at position {T - 1} ({T - 1} steps ahead)"
    )
    assert f.n_affected == T - 1
    # the leak is localised to the first attention, whose own output already moves
    assert f.columns == ("encoder.layers.0.self_attn",)
    assert "'encoder.layers.0.self_attn' (MultiheadAttention)" in f.message
    assert details(r)["headline"] == f"position 0 reads position {T - 1} (MultiheadAttention)"


def test_an_off_by_one_mask_reads_one_step_ahead_per_layer(transformers):
    f = finding(transformers["one-ahead"], "M013")
    assert f.metrics["first_position"] == 0
    assert f.metrics["lookahead"] == 2  # one step per layer, two layers
    one_layer = probe_lm(lm("one-ahead", layers=1))
    assert finding(one_layer, "M013").metrics["lookahead"] == 1
    assert "(1 step ahead)" in finding(one_layer, "M013").message


def test_unidirectional_rnn_passes_and_bidirectional_leaks():
    x, y = tagger_batch()
    forward_only = run(tagger(False), (x, y), loss_fn=MSE, select="M013")
    assert status(forward_only, "M013") == "passed"
    both = run(tagger(True), (x, y), loss_fn=MSE, select="M013")
    f = finding(both, "M013")
    assert f.columns == ("rnn",) and "'rnn' (GRU)" in f.message
    assert (f.metrics["first_position"], f.metrics["lookahead"]) == (0, 9)


def test_time_dim_reads_channels_first_layouts():
    torch.manual_seed(0)
    x, y = torch.randn(4, 3, 16), torch.randn(4, 4, 16)  # (N, F, T): time on dimension 2
    opts = {"thresholds": {"M013": {"time_dim": 2}}, "loss_fn": MSE, "select": "M013"}
    torch.manual_seed(0)
    assert status(run(ConvSeq(causal=True), (x, y), **opts), "M013") == "passed"
    torch.manual_seed(0)
    f = finding(run(ConvSeq(causal=False), (x, y), **opts), "M013")
    assert f.metrics["lookahead"] == 1 and f.columns == ("conv",)
    assert f.metrics["cuts_leaking"] == 15  # every cut: position t reads t + 1


def test_a_padding_mask_input_is_passed_through_unchanged():
    tokens, target = lm_batch()
    padding = torch.zeros(4, T, dtype=torch.bool)
    padding[:, -3:] = True  # the last three positions are padding
    r = probe_lm(lm("causal"), ((tokens, padding), target))
    assert status(r, "M013") == "passed"
    assert details(r)["input_shape"] == [4, T]
    r = probe_lm(lm(None), ((tokens, padding), target))
    # padded keys are hidden: what leaks is the future up to the last real position
    assert finding(r, "M013").metrics["lookahead"] == T - 4


def test_max_cuts_spreads_the_cut_points():
    r = probe_lm(lm(None), thresholds={"M013": {"max_cuts": 4}})
    cuts = [c["cut"] for c in details(r)["cuts"]]
    assert cuts == [0, 3, 7, 10]
    assert finding(r, "M013").metrics["cuts_tested"] == 4


@pytest.mark.parametrize(
    "model, batch, reason",
    [
        (nn.Linear(10, 10), (torch.randn(8, 10), torch.randn(8, 10)), "is not a sequence batch"),
        (
            nn.Conv2d(3, 3, 3, padding=1),
            (torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)),
            "is not a sequence batch",
        ),
        (
            nn.Sequential(nn.Flatten(), nn.Linear(30, 2)),
            (torch.randn(4, 10, 3), torch.randn(4, 2)),
            "a whole-sequence output",
        ),
        (nn.Linear(3, 1), (torch.randn(4, 1, 3), torch.randn(4, 1, 1)), "1 position"),
    ],
    ids=["mlp", "image", "sequence-classifier", "one-step"],
)
def test_non_sequence_models_are_skipped(model, batch, reason):
    r = run(model, batch, loss_fn=MSE, select="M013")
    assert status(r, "M013") == "skipped"
    assert reason in r.outcomes[0].reason


def test_random_eval_outputs_are_not_called_leaks():
    class Noisy(nn.Module):
        def forward(self, x):
            return x + torch.randn_like(x)  # random even in eval mode (M008's case)

    class Drifting(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1  # a different output at every call, whatever the seed
            return x * self.calls

    x, _ = tagger_batch()
    # every pass runs under the same seed, so the noise is the same and only the future differs
    assert status(run(Noisy(), (x, x), loss_fn=MSE, select="M013"), "M013") == "passed"
    r = run(Drifting(), (x, x), loss_fn=MSE, select="M013")
    assert status(r, "M013") == "skipped" and "(see M008)" in r.outcomes[0].reason


def test_the_model_and_rng_are_left_as_they_were():
    model, batch = lm(None), lm_batch()
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(42)
    random.seed(3)
    np.random.seed(4)
    states = (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    assert status(probe_lm(model, batch), "M013") == "failed"
    assert model.training and all(m.training for m in model.modules())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert torch.equal(torch.get_rng_state(), states[0])
    assert random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])
    assert not model.encoder.layers[0].self_attn._forward_hooks  # the hooks were on a copy


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def test_the_probe_runs_on_the_models_device(device):
    tokens, target = lm_batch()  # on the CPU: datavet moves the batch to the model
    leaky = probe_lm(lm(None).to(device), (tokens, target))
    assert leaky.probes["model"]["device"].startswith(device)
    assert finding(leaky, "M013").metrics["first_position"] == 0
    assert status(probe_lm(lm("causal").to(device), (tokens, target)), "M013") == "passed"

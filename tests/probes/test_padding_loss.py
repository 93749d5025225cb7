"""M014 padding-in-loss: CrossEntropyLoss(ignore_index=PAD) over padded targets passes, a plain
CrossEntropyLoss fires; an encoder without src_key_padding_mask leaks padding into real outputs,
with it passes; no padding is skipped; the model and the RNG are left as they were."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from jsonschema import Draft202012Validator
from torch import nn

import datavet
from datavet.output.json import schema

from .models import MSE, finding, run, status

VOCAB, T, PAD = 20, 10, 0
LENGTHS = (10, 7, 5, 8)  # real tokens per row; the rest of each row is padding


class Tagger(nn.Module):
    """Per-position logits from the token alone: padding cannot reach real positions."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8)
        self.head = nn.Linear(8, VOCAB)

    def forward(self, tokens, padding=None):
        return self.head(torch.tanh(self.emb(tokens)))


class Encoder(nn.Module):
    """A transformer encoder over token ids; ``use_mask`` passes ``padding`` as
    ``src_key_padding_mask`` (the right way) or drops it (real tokens attend to pads)."""

    def __init__(self, use_mask: bool, *, derive: bool = False) -> None:
        super().__init__()
        self.use_mask, self.derive = use_mask, derive
        self.emb = nn.Embedding(VOCAB, 16)
        self.pos = nn.Parameter(torch.randn(T, 16) * 0.1)
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, tokens, padding=None):
        if self.derive:  # the model finds its padding from the pad token itself
            padding = tokens == PAD
        h = self.emb(tokens) + self.pos[: tokens.shape[1]]
        h = self.encoder(h, src_key_padding_mask=padding if self.use_mask else None)
        return self.head(h)


def padded_batch(*, ignore: int | None = PAD, left: bool = False):
    """(tokens, padding), targets: tokens 1..VOCAB-1, PAD after each row's length (or before
    it, ``left``); targets are the next token, ``ignore`` at padded positions (PAD: the pad
    token is the target there, as a plain collate leaves it)."""
    torch.manual_seed(0)
    tokens = torch.randint(1, VOCAB, (len(LENGTHS), T))
    padding = torch.arange(T)[None, :] >= torch.tensor(LENGTHS)[:, None]
    if left:
        padding = padding.flip(1)
    tokens[padding] = PAD
    target = tokens.roll(-1, 1)
    target[padding] = PAD if ignore is None else ignore
    return (tokens, padding), target


def lm_loss(**kwargs):
    ce = nn.CrossEntropyLoss(**kwargs)
    return lambda out, y: ce(out.flatten(0, 1), y.flatten())


def tagger():
    torch.manual_seed(0)
    return Tagger()


def encoder(use_mask: bool, **kwargs):
    torch.manual_seed(0)
    return Encoder(use_mask, **kwargs)


def probe(model, batch, loss_fn, **kwargs):
    return run(model, batch, loss_fn=loss_fn, select="M014", **kwargs)


def details(report):
    return report.probes["checks"]["M014"]


SHARE = 1 - sum(LENGTHS) / (len(LENGTHS) * T)  # 10 of 40 positions are padding


def test_ignore_index_over_padded_targets_passes():
    batch = padded_batch()
    r = probe(tagger(), batch, lm_loss(ignore_index=PAD), padding_mask=batch[0][1])
    assert status(r, "M014") == "passed" and r.findings == []
    d = details(r)
    assert d["padded_positions"] == 10 and d["padded_share"] == pytest.approx(SHARE)
    assert d["gradient_share_on_padding"] == 0.0
    assert d["loss_real_positions"] == pytest.approx(d["loss"], rel=1e-6)
    assert d["attention"]["method"] == "truncate" and not d["attention"]["leaks"]
    assert d["headline"].startswith("padding ignored: loss ")


def test_a_plain_cross_entropy_averages_over_the_padding_and_fires():
    batch = padded_batch(ignore=None)  # the pad token is the target at padded positions
    r = probe(tagger(), batch, lm_loss(), padding_mask=batch[0][1])
    f = finding(r, "M014")
    assert f.severity.label == "error"
    assert f.n_affected == 3 and f.examples == (1, 2, 3)  # the rows that hold padding
    assert f.metrics["padded_positions"] == 10
    m = f.metrics
    assert m["padded_share"] == pytest.approx(SHARE)
    assert 0 < m["gradient_share_on_padding"] < 1
    # the batch loss is the mean over all 40 positions, the recomputed one over the 30 real ones
    model, ((tokens, _), target) = tagger().eval(), batch
    with torch.no_grad():
        per_position = nn.functional.cross_entropy(
            model(tokens).flatten(0, 1), target.flatten(), reduction="none"
        ).view(len(LENGTHS), T)
    real = ~batch[0][1]
    assert m["loss"] == pytest.approx(float(per_position.mean()), rel=1e-5)
    assert m["loss_real_positions"] == pytest.approx(float(per_position[real].mean()), rel=1e-5)
    assert m["loss"] != pytest.approx(m["loss_real_positions"], rel=1e-3)
    assert f.message.startswith("Padding leaks: the loss reads the outputs at padded positions")
    assert "10 of 40 positions (25.0%) are padding (padding_mask given)" in f.message
    assert m["max_output_change"] == 0.0  # the tagger itself is fine


def test_pad_id_derives_the_mask_from_the_token_ids():
    (tokens, _), target = padded_batch(ignore=None)
    r = probe(tagger(), (tokens, target), lm_loss(ignore_index=PAD), pad_id=PAD)
    assert status(r, "M014") == "passed"
    assert details(r)["padding_source"] == "inputs equal to pad_id 0"
    assert details(r)["padded_positions"] == 10
    f = finding(probe(tagger(), (tokens, target), lm_loss(), pad_id=PAD), "M014")
    assert "(inputs equal to pad_id 0)" in f.message


def test_a_masked_sum_divided_by_every_position_fires():
    def diluted(out, y):  # masks the padded targets, then divides by N * T
        per = nn.functional.cross_entropy(out.flatten(0, 1), y.flatten(), reduction="none")
        return (per * (y.flatten() != PAD)).sum() / y.numel()

    def per_token(out, y):
        per = nn.functional.cross_entropy(out.flatten(0, 1), y.flatten(), reduction="none")
        keep = y.flatten() != PAD
        return (per * keep).sum() / keep.sum()

    batch = padded_batch()
    assert status(probe(tagger(), batch, per_token, padding_mask=batch[0][1]), "M014") == "passed"
    r = probe(tagger(), batch, diluted, padding_mask=batch[0][1])
    f = finding(r, "M014")
    assert details(r)["diluted"] and not details(r)["padding_in_loss"]
    assert f.metrics["loss"] == pytest.approx(f.metrics["loss_real_positions"] * (1 - SHARE))
    assert "divided by every position" in f.message


def test_regression_over_padded_features():
    torch.manual_seed(0)
    x, y = torch.randn(4, T, 3), torch.randn(4, T, 1)
    padding = torch.arange(T)[None, :] >= torch.tensor(LENGTHS)[:, None]
    model = nn.Linear(3, 1)

    def masked_mse(out, target):
        keep = (target != 0).float()  # padded targets are zero
        return ((out - target) ** 2 * keep).sum() / keep.sum()

    y[padding] = 0.0
    f = finding(run(model, (x, y), loss_fn=MSE, select="M014", padding_mask=padding), "M014")
    assert f.metrics["gradient_share_on_padding"] > 0
    r = run(model, (x, y), loss_fn=masked_mse, select="M014", padding_mask=padding)
    assert status(r, "M014") == "passed"


@pytest.fixture(scope="module")
def encoders():
    batch = padded_batch()
    loss = lm_loss(ignore_index=PAD)
    return {
        use: probe(encoder(use), batch, loss, padding_mask=batch[0][1]) for use in (True, False)
    }


def test_an_encoder_with_its_key_padding_mask_passes(encoders):
    r = encoders[True]
    assert status(r, "M014") == "passed"
    a = details(r)["attention"]
    assert a["method"] == "truncate" and a["max_change"] <= a["tolerance"]


def test_an_encoder_without_its_key_padding_mask_leaks_through_attention(encoders):
    r = encoders[False]
    f = finding(r, "M014")
    d = details(r)
    assert not d["padding_in_loss"] and d["gradient_share_on_padding"] == 0.0
    assert (
        d["attention"]["leaks"]
        and f.metrics["max_output_change"] > 100 * d["attention"]["tolerance"]
    )
    assert "when each row is cut to its real length" in f.message
    assert "(no key padding mask)" in f.message
    assert d["headline"].startswith("padding changes real outputs: loss ")


@pytest.mark.parametrize("use_mask, leaks", [(True, False), (False, True)])
def test_left_padding_is_checked_by_changing_the_padded_inputs(use_mask, leaks):
    batch = padded_batch(left=True)
    r = probe(encoder(use_mask), batch, lm_loss(ignore_index=PAD), padding_mask=batch[0][1])
    a = details(r)["attention"]
    assert a["method"] == "perturb" and a["leaks"] is leaks
    assert status(r, "M014") == ("failed" if leaks else "passed")


def test_a_model_that_finds_its_padding_from_the_pad_id_passes():
    (tokens, _), target = padded_batch()
    model = encoder(True, derive=True)  # right padding: cut off, the pad ids never change
    r = probe(model, (tokens, target), lm_loss(ignore_index=PAD), pad_id=PAD)
    assert status(r, "M014") == "passed"


def test_check_inputs_zero_leaves_the_attention_out():
    batch = padded_batch()
    opts = {"thresholds": {"M014": {"check_inputs": 0}}, "padding_mask": batch[0][1]}
    r = probe(encoder(False), batch, lm_loss(ignore_index=PAD), **opts)
    assert status(r, "M014") == "passed" and details(r)["attention"] is None


def test_nchw_style_logits_with_class_on_dimension_1():
    class Channels(Tagger):
        def forward(self, tokens, padding=None):
            return super().forward(tokens).transpose(1, 2)  # (N, C, T)

    batch = padded_batch(ignore=None)
    torch.manual_seed(0)
    f = finding(probe(Channels(), batch, nn.CrossEntropyLoss(), padding_mask=batch[0][1]), "M014")
    torch.manual_seed(0)
    plain = finding(probe(tagger(), batch, lm_loss(), padding_mask=batch[0][1]), "M014")
    assert f.metrics["loss_real_positions"] == pytest.approx(plain.metrics["loss_real_positions"])
    torch.manual_seed(0)
    fine = probe(Channels(), batch, nn.CrossEntropyLoss(ignore_index=PAD), padding_mask=batch[0][1])
    assert status(fine, "M014") == "passed"


def test_without_padding_it_is_skipped_with_a_reason():
    batch = padded_batch()
    r = probe(tagger(), batch, lm_loss())
    assert status(r, "M014") == "skipped" and "pass padding_mask=" in r.outcomes[0].reason
    none = torch.zeros(len(LENGTHS), T, dtype=torch.bool)
    r = probe(tagger(), batch, lm_loss(), padding_mask=none)
    assert status(r, "M014") == "skipped" and "no padded position" in r.outcomes[0].reason
    r = run(nn.Linear(3, 2), (torch.randn(4, 3), torch.randn(4, 2)), loss_fn=MSE, select="M014")
    assert status(r, "M014") == "skipped"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"padding_mask": torch.zeros(4, T)}, "must be a bool tensor with True = padding"),
        ({"padding_mask": torch.zeros(3, T, dtype=torch.bool)}, "N = 4"),
        ({"padding_mask": [[True]]}, "not list"),
        ({"pad_id": "0"}, "pad_id must be an int"),
        ({"pad_id": 0, "padding_mask": torch.zeros(4, T, dtype=torch.bool)}, "not both"),
    ],
)
def test_bad_padding_arguments_are_usage_errors(kwargs, message):
    with pytest.raises(datavet.UsageError, match=message):
        probe(tagger(), padded_batch(), lm_loss(), **kwargs)


def test_pad_id_needs_token_ids():
    x, y = torch.randn(4, T, 3), torch.randn(4, T, 1)
    with pytest.raises(datavet.UsageError, match="needs \\(N, T\\) integer token ids"):
        run(nn.Linear(3, 1), (x, y), loss_fn=MSE, select="M014", pad_id=0)


def test_the_model_and_rng_are_left_as_they_were():
    model, batch = encoder(False), padded_batch(ignore=None)
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(42)
    random.seed(3)
    np.random.seed(4)
    states = (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    r = probe(model, batch, lm_loss(), padding_mask=batch[0][1])
    assert status(r, "M014") == "failed"
    assert model.training and all(m.training for m in model.modules())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert torch.equal(torch.get_rng_state(), states[0])
    assert random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])


FACTORY = """
import torch
from torch import nn

PAD = 0


def _batch():
    torch.manual_seed(0)
    tokens = torch.randint(1, 20, (4, 10))
    padding = torch.arange(10)[None, :] >= torch.tensor([10, 7, 5, 8])[:, None]
    tokens[padding] = PAD
    return tokens, padding, tokens.roll(-1, 1).masked_fill(padding, PAD)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, 20))


def _loss(**kw):
    ce = nn.CrossEntropyLoss(**kw)
    return lambda out, y: ce(out.flatten(0, 1), y.flatten())


def plain():
    tokens, padding, target = _batch()
    return {"model": _model(), "batch": (tokens, target), "loss_fn": _loss(),
            "padding_mask": padding}


def ignored():
    tokens, _, target = _batch()
    return {"model": _model(), "batch": (tokens, target), "loss_fn": _loss(ignore_index=PAD),
            "pad_id": PAD}
"""


def test_the_cli_takes_the_padding_from_the_factory(tmp_path, capsys):
    from datavet.cli import main

    path = tmp_path / "seq.py"
    path.write_text(FACTORY)
    page = tmp_path / "probe.html"
    code = main(["probe", f"{path}:plain", "--select", "M014", "--html", str(page)])
    out = capsys.readouterr().out
    assert code == 1 and "M014 padding-in-loss" in out
    html = page.read_text()
    assert "data-test-probe-padding" in html
    assert 'data-test-padding-row="loss over real positions only"' in html
    code = main(["probe", f"{path}:ignored", "--select", "M014", "--format", "json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert list(Draft202012Validator(schema()).iter_errors(payload)) == []
    check = payload["probes"]["checks"]["M014"]
    assert check["padding_source"] == "inputs equal to pad_id 0"
    assert check["padded_positions"] == 10 and check["gradient_share_on_padding"] == 0.0


def test_the_html_view_lists_the_figures():
    from datavet.output import html_probes

    batch = padded_batch(ignore=None)
    report = probe(encoder(False), batch, lm_loss(), padding_mask=batch[0][1])
    rows = {r["label"]: r for r in html_probes.view(report.to_dict())["padding"]["rows"]}
    d = details(report)
    assert rows["padded positions"]["value"] == "10 of 40 (25%), in 3 rows"
    assert rows["loss on the batch"]["value"] == html_probes._num(d["loss"])
    assert rows["loss gradient on padded outputs"]["css"] == "error"
    assert rows["largest change of real outputs"]["css"] == "error"
    assert "each row is cut to its real length" in rows["largest change of real outputs"]["value"]
    skipped = probe(tagger(), padded_batch(), lm_loss())
    assert html_probes.view(skipped.to_dict())["padding"] is None
    assert "data-test-probe-padding" not in skipped.to_html()

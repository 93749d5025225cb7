"""What `datavet.probe` costs, in seconds and in training steps of the model probed.

    python bench/bench_probes.py [--model transformer|cnn|both] [--budget 500] [--no-budget]
                                 [--seq 128] [--batch 64]

The two models: a 670k-parameter causal transformer language model (vocab 1,000, d_model 128,
3 layers, 4 heads, sequence 128, batch 64) and a 420k-parameter CNN on 3x32x32 images
(batch 64, 10 classes). For each: the time of one training step (forward, backward, Adam
update), then every model probe, with the cost per probe in steps. Run it once with
``--no-budget`` (the probes before the budget existed did all their work whatever it cost) and
once with the default budget to compare.

Measured on the shared 2-core development machine (one torch thread, other jobs running, so
wall times are noisy):

- transformer (670,824 parameters, batch 64, seq 128), budget 500: one Adam step 0.92 s; all
  probes 492 s = 536 Adam steps by this script's clock, 238 steps by datavet's own unit (timed
  under heavier load; in this run the timing steps also trained the model first, since fixed);
  M002 226, M013 10, every other probe 1 or less. Before the budget the issue measured 157 s =
  about 1,300 steps for the same model.
- the same transformer at seq 32, batch 16: without a budget 1,095 steps (M002 1,087: its
  default recipe did not fit, and the learning-rate sweep and longer runs had no cap); with the
  default budget 386 steps (M002 374: the sweep trimmed to 28 steps a run; Adam at lr 0.003
  fits the batch, reported as info).
- CNN (425,542 parameters, batch 64), budget 500: one Adam step 0.15 s; all probes 51.5 s =
  336 Adam steps (datavet: 395; M002 388, M006 3, the rest 2 or less). Before the budget the
  issue measured 12 s = about 500 steps for its CNN.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch
from torch import nn

import datavet


class TinyLM(nn.Module):
    def __init__(self, vocab=1000, d=128, layers=3, heads=4, ff=256, seq=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)
        self.seq = seq

    def forward(self, ids):
        t = ids.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        h = self.embed(ids) + self.pos[:t]
        return self.head(self.body(h, mask=mask, is_causal=True))


def transformer(args):
    torch.manual_seed(0)
    model = TinyLM(seq=args.seq)
    ids = torch.randint(0, 1000, (args.batch, args.seq + 1))
    x, y = ids[:, :-1], ids[:, 1:]

    def loss_fn(out, target):
        return nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))

    return model, (x, y), loss_fn


def cnn(args):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(128, 300, 3, padding=1), nn.BatchNorm2d(300), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(300, 10),
    )  # fmt: skip
    x = torch.randn(args.batch, 3, 32, 32)
    y = torch.randint(0, 10, (args.batch,))
    return model, (x, y), nn.functional.cross_entropy


def step_time(model, batch, loss_fn, n=5) -> float:
    """The median of n timed Adam steps after one warm-up, on a copy (the probed model stays
    untrained)."""
    model = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    for _ in range(n + 1):
        t0 = time.perf_counter()
        loss = loss_fn(model(batch[0]), batch[1])
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return sorted(times[1:])[len(times[1:]) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("transformer", "cnn", "both"), default="both")
    ap.add_argument("--budget", type=float, default=500)
    ap.add_argument("--no-budget", action="store_true")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    names = ("transformer", "cnn") if args.model == "both" else (args.model,)
    for name in names:
        model, batch, loss_fn = {"transformer": transformer, "cnn": cnn}[name](args)
        n_params = sum(p.numel() for p in model.parameters())
        step = step_time(model, batch, loss_fn)
        t0 = time.perf_counter()
        report = datavet.probe(
            model, batch, loss_fn=loss_fn, budget=None if args.no_budget else args.budget
        )
        wall = time.perf_counter() - t0
        cost = report.probes["cost"]
        print(
            f"{name}: {n_params:,} parameters, batch {args.batch}"
            + (f", seq {args.seq}" if name == "transformer" else "")
            + f"; one Adam step {step * 1000:.1f} ms; budget "
            + ("none" if args.no_budget else f"{args.budget:g} steps")
        )
        print(
            f"  probe wall time {wall:.1f} s = {wall / step:,.0f} Adam steps; datavet's own "
            f"estimate {cost['steps']:,.0f} steps (unit {cost['step_seconds'] * 1000:.1f} ms)"
        )
        per = sorted(cost["per_probe_steps"].items(), key=lambda kv: -(kv[1] or 0))
        print("  per probe (steps): " + ", ".join(f"{k} {v:,.0f}" for k, v in per))
        print("  findings: " + (", ".join(sorted({f.code for f in report.findings})) or "none"))
        for f in report.findings:
            print(f"    {f.code} {f.severity.label}: {f.message[:400]}")


if __name__ == "__main__":
    main()

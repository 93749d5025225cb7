"""Overhead of datavet.GradientMonitor in a training loop: the same loop with and without
``monitor.step(model, loss=loss)`` after ``backward()``.

    python bench/bench_monitor.py [--device cpu|cuda] [--steps 200] [--repeat 7]
                                  [--hidden 512] [--layers 4] [--batch 256] [--sync-every 1]

Each repeat times ``--steps`` training steps (forward, backward, monitor, Adam step) of an MLP;
the two variants alternate so that machine load hits both alike. Printed: the median time per
step of each variant over the repeats, and their ratio; and the time spent inside
``monitor.step`` itself (plus the forward passes of the activation hooks with
``--activations``), timed around the call, as a share of a plain step: on a busy machine the
difference of two loop timings is mostly noise, the time inside the call is not.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

import datavet


def make(args):
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Linear(args.features, args.hidden), nn.ReLU()]
    for _ in range(args.layers - 2):
        layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    layers.append(nn.Linear(args.hidden, args.classes))
    model = nn.Sequential(*layers).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.features, device=args.device)
    y = torch.randint(0, args.classes, (args.batch,), device=args.device)
    return model, opt, x, y


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def loop(args, monitor: datavet.GradientMonitor | None, inside: list | None = None) -> float:
    """Seconds per training step, over ``args.steps`` steps (``inside``: gets the seconds of
    each ``monitor.step`` call)."""
    model, opt, x, y = make(args)
    for _ in range(5):  # warm-up: allocator, kernels, Adam state
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync(args.device)
    calls: list[float] = []
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if monitor is not None:
            sync(args.device)
            t0 = time.perf_counter()
            monitor.step(model, loss=loss)
            sync(args.device)
            calls.append(time.perf_counter() - t0)
        opt.step()
    if monitor is not None:
        monitor.spikes  # noqa: B018  (reads back anything still pending)
    sync(args.device)
    if inside is not None:
        inside.append(calls)
    return (time.perf_counter() - start) / args.steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--sync-every", type=int, default=1)
    ap.add_argument("--layer-every", type=int, default=100)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    ap.add_argument("--activations", action="store_true", help="GradientMonitor(activations=True)")
    ap.add_argument("--no-update-ratio", action="store_true", help="update_ratio=False")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    plain, monitored, inside = [], [], []
    options = {}
    try:  # the same script measures a version without the snapshot options
        datavet.GradientMonitor(update_ratio=True)
        options = {"update_ratio": not args.no_update_ratio, "activations": args.activations}
    except TypeError:
        pass
    for _ in range(args.repeat):
        plain.append(loop(args, None))
        monitor = datavet.GradientMonitor(
            sync_every=args.sync_every, layer_every=args.layer_every, **options
        )
        monitored.append(loop(args, monitor, inside))
    n_params = sum(p.numel() for p in make(args)[0].parameters())
    without, with_ = statistics.median(plain), statistics.median(monitored)
    print(
        f"MLP {args.layers} layers x {args.hidden} ({n_params:,} parameters, "
        f"{2 * args.layers} tensors), batch {args.batch}, {args.device}, "
        f"{torch.get_num_threads()} threads, {args.steps} steps x {args.repeat} repeats, "
        f"sync_every={args.sync_every}"
    )
    print(f"without monitor: {without * 1e3:8.3f} ms/step (median)")
    print(f"with monitor:    {with_ * 1e3:8.3f} ms/step (median)")
    print(
        f"ratio:           {with_ / without:8.3f}  (overhead {(with_ - without) * 1e6:.0f} us/step)"
    )
    # Per call, robust to a loaded machine: the median ordinary call, plus the median snapshot
    # call (every layer_every-th) spread over layer_every steps. The steps' own median is the
    # fastest of the plain repeats (the least disturbed).
    ordinary = [c for run in inside for i, c in enumerate(run) if i % args.layer_every]
    snaps = [c for run in inside for i, c in enumerate(run) if i % args.layer_every == 0]
    step = min(plain)
    amortised = statistics.median(ordinary) + statistics.median(snaps) / args.layer_every
    print(
        f"inside monitor.step: {statistics.median(ordinary) * 1e6:.0f} us per ordinary call, "
        f"{statistics.median(snaps) * 1e6:.0f} us per snapshot call (every {args.layer_every}); "
        f"amortised {amortised * 1e6:.0f} us = {amortised / step:.2%} of the fastest plain step "
        f"({step * 1e3:.2f} ms) ({options or 'no snapshot options'})"
    )


if __name__ == "__main__":
    main()

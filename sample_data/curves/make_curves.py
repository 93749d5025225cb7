"""Write the sample training logs in this folder: small real PyTorch runs on CPU, each with one
failure planted, seeded. Run from anywhere: ``python make_curves.py [OUT_DIR]`` (under a minute).

Every run trains on the same synthetic task unless it says otherwise: 4 classes from a noisy
linear teacher over 10 standard-normal features, 4,000 training and 500 validation rows, an MLP
10-64-64-4 (ReLU), SGD with momentum 0.9 and lr 0.02, batches of 64, 400 steps. The loop logs the
training loss and accuracy of each batch, the global gradient norm before the update and the
learning rate at every step, and the validation loss and accuracy (eval mode, same weights) every
10 steps. ``EXPECTED`` lists the findings ``datavet curves`` must report for each file (with the
options in ``OPTIONS``); README.md says the same in words.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).resolve().parent
C, D = 4, 10
STEPS, BATCH, EVAL_EVERY = 400, 64, 10
LR = 0.02
SWITCH = 200  # lr_too_high: the learning rate becomes 100x at this step
SEED = 0  # added to every seed below; the committed files use 0 (tests try others)

EXPECTED: dict[str, list[str]] = {
    "healthy.csv": [],
    "lr_too_high.csv": ["C002"],
    "lr_100x_from_start.csv": ["C002"],
    "oscillation.csv": ["C003"],
    "nonfinite.csv": ["C001"],
    "prior_plateau.csv": ["C004"],
    "lr_too_small.csv": ["C005"],
    "vanishing.jsonl": ["C005"],
    "overfitting.jsonl": ["C006"],
    "val_better.csv": ["C007"],
    "leakage.csv": ["C008"],
    "grad_spikes.csv": ["C009"],
    "monitor_nonfinite.json": ["C001"],
}
# options each file is diagnosed with (datavet curves FILE --classes 4 ...)
OPTIONS: dict[str, dict] = {
    "healthy.csv": {"classes": 4},
    "prior_plateau.csv": {"prior": "0.7,0.1,0.1,0.1"},
    "lr_100x_from_start.csv": {"classes": 4},
}


def task(seed=0, n_train=4000, n_val=500, noise=0.5, prior=None, random_labels=False):
    g = torch.Generator().manual_seed(SEED + seed)
    n = n_train + n_val
    x = torch.randn(n, D, generator=g)
    w = torch.randn(D, C, generator=g)
    y = (x @ w + noise * torch.randn(n, C, generator=g)).argmax(1)
    if random_labels:  # labels shuffled apart from the inputs: nothing to learn but the prior
        p = torch.tensor(prior if prior is not None else [1 / C] * C)
        y = torch.multinomial(p, n, replacement=True, generator=g)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def mlp(hidden=64, depth=2, act=nn.ReLU, dropout=0.0, seed=1, d_in=D, init_std=None):
    torch.manual_seed(SEED + seed)
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), act()]
        if dropout:
            layers.append(nn.Dropout(dropout))
        d = hidden
    layers.append(nn.Linear(d, C))
    model = nn.Sequential(*layers)
    if init_std is not None:
        for m in model:
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, init_std)
                nn.init.zeros_(m.bias)
    return model


def train(
    model,
    data,
    opt,
    *,
    steps=STEPS,
    batch=BATCH,
    lr_at=None,
    eval_every=EVAL_EVERY,
    clip=None,
    batch_hook=None,
    augment=0.0,
    seed=2,
    monitor=None,
):
    """The training loop every sample uses; one dict per step (validation keys every
    ``eval_every`` steps)."""
    xt, yt, xv, yv = data
    g = torch.Generator().manual_seed(SEED + seed)
    rows, order, pos, epoch = [], torch.randperm(len(xt), generator=g), 0, 0
    params = list(model.parameters())
    for step in range(steps):
        if pos + batch > len(xt):
            order, pos, epoch = torch.randperm(len(xt), generator=g), 0, epoch + 1
        idx = order[pos : pos + batch]
        pos += batch
        xb, yb = xt[idx].clone(), yt[idx].clone()
        if batch_hook is not None:
            xb, yb = batch_hook(step, xb, yb)
        if augment:
            xb = xb + augment * torch.randn(xb.shape, generator=g)
        if lr_at is not None:
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
        row = {"step": step, "epoch": epoch, "lr": opt.param_groups[0]["lr"]}
        if step % eval_every == 0:
            model.eval()
            with torch.no_grad():
                out = model(xv)
                row["val_loss"] = F.cross_entropy(out, yv).item()
                row["val_acc"] = (out.argmax(1) == yv).float().mean().item()
            model.train()
        out = model(xb)
        loss = F.cross_entropy(out, yb)
        row["train_loss"] = loss.item()
        row["train_acc"] = (out.argmax(1) == yb).float().mean().item()
        opt.zero_grad()
        loss.backward()
        norms = [torch.linalg.vector_norm(p.grad) for p in params if p.grad is not None]
        row["grad_norm"] = torch.linalg.vector_norm(torch.stack(norms)).item()
        if monitor is not None:
            monitor.step(model, loss=loss, step=step)
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        rows.append(row)
    return rows


def sgd(model, lr=LR):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


# -- the runs -------------------------------------------------------------------------------


def healthy():
    model = mlp()
    return train(model, task(), sgd(model))


def lr_too_high():
    """The same run; at step 200 the learning rate becomes 100x (a resumed run that restored
    the base lr times 100). The first loss computed after a 100x update is step 201's."""
    model = mlp()
    return train(model, task(), sgd(model), lr_at=lambda s: LR if s < SWITCH else 100 * LR)


def lr_100x_from_start():
    """The healthy run with the learning rate 100x (2 instead of 0.02) from the first step: the
    loss climbs over its start within a few updates, then the dead network sits at ln 4."""
    model = mlp()
    return train(model, task(), sgd(model, lr=100 * LR))


def oscillation():
    """Softmax regression on unscaled inputs (feature 1 is 30x the others), full-batch gradient
    descent, lr 0.03: the steep direction of the large feature overshoots on every step."""
    xt, yt, xv, yv = task()
    xt, xv = xt.clone(), xv.clone()
    xt[:, 1] *= 30.0
    xv[:, 1] *= 30.0
    torch.manual_seed(SEED + 1)
    model = nn.Sequential(nn.Linear(D, C))
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    return train(model, (xt, yt, xv, yv), opt, steps=300, batch=len(xt))


class LogFeature(nn.Module):
    """The log of a positive feature such as a concentration (-inf at 0), as in the source."""

    def forward(self, x):
        return torch.cat([torch.log(x[:, :1]), x[:, 1:]], dim=1)


def nonfinite(monitor=None):
    """Feature 0 is a concentration (positive) that the model takes the log of; one training
    row holds a concentration of 0, and the batch that carries it (step 150) makes the
    gradient NaN: the next update turns the weights NaN."""
    xt, yt, xv, yv = task()
    xt, xv = xt.clone(), xv.clone()
    xt[:, 0] = xt[:, 0].abs() + 0.1
    xv[:, 0] = xv[:, 0].abs() + 0.1
    torch.manual_seed(SEED + 1)
    model = nn.Sequential(
        LogFeature(), nn.Linear(D, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, C)
    )

    def plant(step, xb, yb):
        if step == 150:
            xb[5, 0] = 0.0
        return xb, yb

    return train(model, (xt, yt, xv, yv), sgd(model), batch_hook=plant, monitor=monitor)


def prior_plateau():
    """Labels drawn apart from the inputs (one side shuffled), classes 70/10/10/10: the network
    learns the prior and nothing else. 20,000 rows, so it cannot memorise them in 400 steps."""
    data = task(n_train=20000, prior=[0.7, 0.1, 0.1, 0.1], random_labels=True)
    model = mlp()
    return train(model, data, sgd(model))


def lr_too_small():
    """The healthy run with lr 2e-5 (1,000x too small)."""
    model = mlp()
    return train(model, task(), sgd(model, lr=LR / 1000))


def vanishing():
    """Ten tanh layers initialised with std 0.01 (the source's activation table): activations
    and gradients vanish with depth and the loss does not move at a sane learning rate."""
    model = mlp(depth=10, act=nn.Tanh, init_std=0.01)
    return train(model, task(), sgd(model))


def overfitting():
    """200 noisy training rows, a wide MLP (10-256-256-4) and Adam: it memorises them."""
    data = task(n_train=200, noise=1.5)
    model = mlp(hidden=256)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return train(model, data, opt, steps=600, batch=50, eval_every=20)


def val_better():
    """Dropout 0.5 after each hidden layer and input-noise augmentation, both in training only;
    validation runs in eval mode without them."""
    model = mlp(hidden=128, dropout=0.5)
    return train(model, task(), sgd(model), augment=1.0)


def leakage():
    """Feature 0 is the label plus a little noise (made from the answer)."""
    xt, yt, xv, yv = task()
    g = torch.Generator().manual_seed(SEED + 5)
    xt, xv = xt.clone(), xv.clone()
    xt[:, 0] = yt.float() + 0.05 * torch.randn(len(yt), generator=g)
    xv[:, 0] = yv.float() + 0.05 * torch.randn(len(yv), generator=g)
    model = mlp()
    return train(model, (xt, yt, xv, yv), sgd(model))


def grad_spikes():
    """Three corrupt rows (features in the wrong unit, x100, and a wrong label) reach the
    batches of steps 120, 230 and 330; the gradient norm is clipped at 1, so training goes on."""

    def plant(step, xb, yb):
        if step in (120, 230, 330):
            xb[0] = xb[0] * 100.0
            yb[0] = (yb[0] + 1) % C
        return xb, yb

    model = mlp()
    return train(model, task(), sgd(model), batch_hook=plant, clip=1.0)


# -- writing --------------------------------------------------------------------------------

CSV_COLUMNS = ["step", "epoch", "lr", "train_loss", "train_acc", "grad_norm", "val_loss", "val_acc"]


def _num(v) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


def write_csv(path: Path, rows: list[dict], columns=CSV_COLUMNS, rename=None) -> None:
    rename = rename or {}
    lines = [",".join(rename.get(c, c) for c in columns)]
    for r in rows:
        lines.append(",".join(_num(r[c]) if c in r else "" for c in columns))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows: list[dict], nested=False) -> None:
    """One line per step for the training values, one more per evaluation (a logger that writes
    validation separately, at the same step)."""
    out = []
    for r in rows:
        train = {k: r[k] for k in ("train_loss", "train_acc", "grad_norm", "lr")}
        if nested:
            out.append(
                {
                    "step": r["step"],
                    "epoch": r["epoch"],
                    "train": {"loss": train["train_loss"], "acc": train["train_acc"]},
                    "grad_norm": train["grad_norm"],
                    "lr": train["lr"],
                }
            )
        else:
            out.append({"step": r["step"], "epoch": r["epoch"], **train})
        if "val_loss" in r:
            out.append({"step": r["step"], "val_loss": r["val_loss"], "val_acc": r["val_acc"]})
    path.write_text("".join(json.dumps(o) + "\n" for o in out), encoding="utf-8")


def per_epoch(rows: list[dict], every: int = 20) -> list[dict]:
    """Keras CSVLogger style: one row per 'epoch' of ``every`` steps, the training values
    averaged over it, validation at its end."""
    out = []
    for e, start in enumerate(range(0, len(rows), every)):
        chunk = rows[start : start + every]
        val = next((r for r in reversed(chunk) if "val_loss" in r), None)
        out.append(
            {
                "epoch": e,
                "loss": sum(r["train_loss"] for r in chunk) / len(chunk),
                "accuracy": sum(r["train_acc"] for r in chunk) / len(chunk),
                "val_loss": val["val_loss"] if val else float("nan"),
                "val_accuracy": val["val_acc"] if val else float("nan"),
            }
        )
    return out


def write(out: Path = HERE) -> list[Path]:
    torch.set_num_threads(1)  # the same floats on every machine with this torch
    out.mkdir(parents=True, exist_ok=True)
    files = []

    def csv(name, rows, **kw):
        write_csv(out / name, rows, **kw)
        files.append(out / name)

    csv("healthy.csv", healthy())
    csv("lr_too_high.csv", lr_too_high())
    csv("lr_100x_from_start.csv", lr_100x_from_start())
    csv(
        "oscillation.csv",
        oscillation(),
        columns=["step", "train_loss", "val_loss", "lr"],
        rename={"step": "iteration", "train_loss": "loss"},
    )
    csv("nonfinite.csv", nonfinite())
    csv("prior_plateau.csv", prior_plateau())
    csv("lr_too_small.csv", lr_too_small())
    write_jsonl(out / "vanishing.jsonl", vanishing())
    files.append(out / "vanishing.jsonl")
    write_jsonl(out / "overfitting.jsonl", overfitting(), nested=True)
    files.append(out / "overfitting.jsonl")
    csv("val_better.csv", val_better())
    csv(
        "leakage.csv",
        per_epoch(leakage()),
        columns=["epoch", "loss", "accuracy", "val_loss", "val_accuracy"],
    )
    csv("grad_spikes.csv", grad_spikes())

    sys.path.insert(0, str(HERE.parents[1] / "src"))
    from datavet import GradientMonitor

    monitor = GradientMonitor()
    nonfinite(monitor=monitor)
    # the monitor's own record, as json.dump writes it (NaN as the token NaN)
    text = json.dumps(monitor.to_dict())
    (out / "monitor_nonfinite.json").write_text(text + "\n", encoding="utf-8")
    files.append(out / "monitor_nonfinite.json")
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for f in write(target):
        print(f)

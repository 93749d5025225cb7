"""Write the sample tables in this folder. Run from anywhere: ``python make_sample_data.py``.

planted_*: the planted-problem table of the source chapter (seeds/004), built exactly as it
builds it with ``default_rng(2)``: 500 rows, x0 ~ 300 +- 10 (kelvin), x1 ~ 1 +- 0.1 with 3 NaN,
x2 ~ 0.5 +- 0.2, x3 = 7 (constant); label = x0 > 300 except the first 40 rows, set to 1;
train = rows 0-399; test = rows 400-489 then rows 0-9 (10 train rows copied into test).

clean_*: the same shape of problem with nothing wrong: standardised features, balanced labels
from a linear rule with noise, shuffled, no shared rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
COLUMNS = ["x0", "x1", "x2", "x3"]


def seed_arrays() -> tuple[np.ndarray, np.ndarray]:
    """The seed's X (500, 4) and y, line for line."""
    rng = np.random.default_rng(2)
    X = rng.normal([300.0, 1.0, 0.5, 7.0], [10.0, 0.1, 0.2, 0.0], size=(500, 4))
    X[rng.choice(500, 3, replace=False), 1] = np.nan
    y = (X[:, 0] > 300).astype(int)
    y[:40] = 1
    return X, y


def planted() -> tuple[pd.DataFrame, pd.DataFrame]:
    X, y = seed_arrays()
    train = pd.DataFrame(X[:400], columns=COLUMNS).assign(label=y[:400])
    test_x = np.vstack([X[400:490], X[:10]])
    test_y = np.concatenate([y[400:490], y[:10]])
    test = pd.DataFrame(test_x, columns=COLUMNS).assign(label=test_y)
    return train, test


def clean() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    X = rng.normal(0.0, 1.0, size=(1000, 4))
    logits = X @ np.array([1.5, -1.0, 0.5, 0.0]) + rng.normal(0, 0.5, 1000)
    y = (logits > 0).astype(int)
    frame = pd.DataFrame(X, columns=COLUMNS).assign(label=y)
    return frame.iloc[:800].reset_index(drop=True), frame.iloc[800:].reset_index(drop=True)


def write(out: Path = HERE) -> list[Path]:
    written = []
    for stem, (train, test) in {"planted": planted(), "clean": clean()}.items():
        for split, frame in (("train", train), ("test", test)):
            csv = out / f"{stem}_{split}.csv"
            frame.to_csv(csv, index=False)  # repr floats: the CSV round-trips exactly
            pq = out / f"{stem}_{split}.parquet"
            frame.to_parquet(pq, index=False)
            written += [csv, pq]
    return written


if __name__ == "__main__":
    for path in write():
        print(path.relative_to(HERE.parent))

"""Build the image-like sample set with planted problems: ``python make_images.py``.

Writes ``train.npz`` and ``test.npz`` next to this file, each with ``inputs`` (N, 3, 16, 16)
float32 and ``label`` (N,) int64, from a fixed seed (the tests compare the stored arrays with a
fresh build). Four classes, told apart by where a bright square sits, with 20% of labels
flipped so the baselines are good but not perfect. Planted:

- raw 0..255 values (whole numbers stored as float32): T001;
- train sample 7 holds a 3x3 block of NaN in channel 0: V001 names sample 7;
- train sample 123 holds one +inf pixel in channel 1: V002 names sample 123;
- channel 2 is 0 everywhere, and the outer pixel of channels 0 and 1 is 0 in every sample:
  F001, one finding for the constant channel and the constant border;
- the first 60 train samples are all class 0: L002;
- test samples 80-89 are copies of train samples 200-209 (with their labels): S001.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZE = 16
CLASSES = 4
TRAIN, TEST = 360, 90


def _images(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    n = len(labels)
    x = rng.integers(0, 60, size=(n, 3, SIZE, SIZE)).astype(np.float32)
    corners = [(2, 2), (2, 9), (9, 2), (9, 9)]  # where each class's square sits
    for i, k in enumerate(labels):
        r, c = corners[k]
        x[i, :2, r : r + 5, c : c + 5] = rng.integers(180, 256, size=(2, 5, 5))
    x[:, 2] = 0.0  # a constant channel
    x[:, :2, 0, :] = x[:, :2, -1, :] = 0.0  # a constant border
    x[:, :2, :, 0] = x[:, :2, :, -1] = 0.0
    return x


def _noisy(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    flip = rng.random(len(labels)) < 0.2
    return np.where(flip, rng.integers(0, CLASSES, len(labels)), labels)


def build() -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    y_train = rng.integers(0, CLASSES, TRAIN)
    y_train[:60] = 0  # a sorted block at the start
    y_test = rng.integers(0, CLASSES, TEST)
    x_train = _images(rng, y_train)
    x_test = _images(rng, y_test)
    y_train, y_test = _noisy(rng, y_train), _noisy(rng, y_test)
    y_train[:60] = 0
    x_train[7, 0, 6:9, 6:9] = np.nan
    x_train[123, 1, 5, 9] = np.inf
    x_test[80:90] = x_train[200:210]
    y_test[80:90] = y_train[200:210]
    return {
        "train": {"inputs": x_train, "label": y_train.astype(np.int64)},
        "test": {"inputs": x_test, "label": y_test.astype(np.int64)},
    }


def main() -> None:
    for split, arrays in build().items():
        np.savez_compressed(HERE / f"{split}.npz", **arrays)
        print(f"wrote {HERE / f'{split}.npz'}: {arrays['inputs'].shape}")


if __name__ == "__main__":
    main()

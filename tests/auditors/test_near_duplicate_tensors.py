"""T002 near-duplicate-tensors: re-encoded / brightened copies of train images in test fire;
independent images, same-class look-alikes and exact copies (S001's) stay quiet."""

from __future__ import annotations

import numpy as np
import pytest

import datavet
from datavet.scan.perceptual import PerceptualHashes, near_pairs


def photos(n, seed, template=None, spread=1.0):
    """Smooth random uint8 images (3 x 32 x 32): low-frequency fields, like downscaled photos.
    With ``template``, each image is the template plus ``spread`` times its own field."""
    rng = np.random.default_rng(seed)
    coarse = rng.standard_normal((n, 3, 6, 6))
    fine = np.kron(coarse, np.ones((1, 1, 6, 6)))[:, :, :32, :32]
    for axis in (2, 3):  # a box blur: smooth edges between the coarse cells
        fine = (fine + np.roll(fine, 1, axis) + np.roll(fine, -1, axis)) / 3
    if template is not None:
        fine = template + spread * fine
    return np.clip(128 + 40 * fine, 0, 255).astype(np.uint8)


def reencode(img, seed, brightness=12.0, noise=3.0):
    """A JPEG-like copy: brighter, with pixel noise, rounded back to uint8."""
    rng = np.random.default_rng(seed)
    out = img.astype(float) + brightness + rng.normal(0, noise, img.shape)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def audit(train, test):
    y_train = np.zeros(len(train), dtype=np.int64)
    y_test = np.zeros(len(test), dtype=np.int64)
    return datavet.audit((train, y_train), (test, y_test), select="T002,S001", baselines=False)


def test_reencoded_copies_of_train_images_in_test_fire():
    train = photos(300, seed=0)
    test = photos(100, seed=1)
    planted = [3, 17, 40, 41, 77]
    for k, i in enumerate(planted):
        test[i] = reencode(train[10 * k + 5], seed=k)
    r = audit(train, test)
    (f,) = [f for f in r.findings if f.code == "T002"]
    assert f.split == "test" and f.examples == tuple(planted)
    assert f.n_affected == 5 and f.metrics["min_corr"] >= 0.99
    assert "test 3 ~ train 5" in f.message
    assert not [f for f in r.findings if f.code == "S001"]  # not byte-identical


def test_independent_images_are_quiet():
    r = audit(photos(300, seed=0), photos(100, seed=1))
    assert r.findings == []
    assert [o.status.value for o in r.outcomes if o.code == "T002"] == ["passed"]


def test_same_class_look_alikes_are_quiet():
    # every image is one template plus its own variation (one class of a simple dataset)
    template = np.random.default_rng(9).standard_normal((3, 32, 32))
    train = photos(300, seed=0, template=template, spread=0.6)
    test = photos(100, seed=1, template=template, spread=0.6)
    assert [f.code for f in audit(train, test).findings] == []


def test_exact_copies_are_left_to_s001():
    train = photos(300, seed=0)
    test = photos(100, seed=1)
    test[:4] = train[:4]
    r = audit(train, test)
    assert [f.code for f in r.findings] == ["S001"]


def test_small_or_non_image_tensors_are_skipped():
    x = np.random.default_rng(0).standard_normal((50, 3, 8, 8)).astype(np.float32)
    r = datavet.audit(x, x[:10] + 1, select="T002", baselines=False)
    assert [o.status.value for o in r.outcomes] == ["skipped"]


@pytest.mark.parametrize("split_at", [17, 150])
def test_hashes_merge_across_blocks_like_one_block(split_at):
    imgs = photos(200, seed=3).astype(np.float64).reshape(200, 3, -1)
    whole = PerceptualHashes.of(imgs, (32, 32), 0)
    parts = PerceptualHashes.of(imgs[:split_at], (32, 32), 0).merge(
        PerceptualHashes.of(imgs[split_at:], (32, 32), split_at)
    )
    assert np.array_equal(whole.rows, parts.rows) and np.array_equal(whole.keys, parts.keys)
    assert np.array_equal(whole.thumbs, parts.thumbs) and parts.seen == 200


def test_flat_images_get_no_hash():
    imgs = np.full((5, 1, 32 * 32), 7.0)
    h = PerceptualHashes.of(imgs, (32, 32), 0)
    assert h.hashed == 0 and h.seen == 5
    assert near_pairs(h, h) == []

"""L002: fires on a sorted file and on a short block at the start; quiet on shuffled data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.auditors.positional_label_drift import PositionalLabelDrift


def drift(train: pd.DataFrame, **thresholds) -> list:
    report = datavet.audit(
        train,
        target="label",
        select="L002",
        thresholds={"L002": thresholds} if thresholds else None,
    )
    return report.findings


def frame(labels, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=len(labels)), "label": labels})


def test_fires_on_the_seed_block_at_the_start(planted):
    train, _ = planted
    (f,) = drift(train)
    assert f.code == "L002" and f.split == "train" and f.columns == ("label",)
    assert f.metrics["segment_rows"] == 40
    assert f.metrics["segment_rate"] == 1.0
    assert round(f.metrics["rest_rate"], 2) == 0.47
    assert f.metrics["p_value"] < 1e-6
    assert f.metrics["cohens_h"] > 1.0
    assert "first 40 rows" in f.message and "100%" in f.message and "47%" in f.message
    assert f.examples == (0, 1, 2, 3, 4)


def test_fires_on_a_file_sorted_by_label():
    labels = np.sort(np.random.default_rng(1).integers(0, 2, 2000))
    (f,) = drift(frame(labels))
    assert f.metrics["p_value"] < 1e-100 or f.metrics["p_value"] == 0
    assert f.metrics["cohens_h"] > 2.5  # one side is all 0, the other all 1


def test_fires_on_a_block_at_the_end():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 1000)
    labels[-60:] = 0
    (f,) = drift(frame(labels))
    assert "last 60 rows" in f.message or f.metrics["segment_rows"] >= 60


def test_fires_on_a_block_in_the_middle_through_the_chi_square():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 3000)
    labels[1200:1500] = 1  # 10% of rows, mid-file
    (f,) = drift(frame(labels))
    lo = f.examples[0]
    assert 900 <= lo <= 1500
    assert f.metrics["segment_rate"] > 0.8


def test_multiclass_block():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 5, 2000)
    labels[:120] = 3
    (f,) = drift(frame(labels))
    assert "'3'" in f.message or " 3 " in f.message
    assert f.metrics["segment_rows"] >= 120


def test_string_labels():
    rng = np.random.default_rng(6)
    labels = rng.choice(["cat", "dog"], 800)
    labels[:80] = "dog"
    (f,) = drift(frame(labels))
    assert "'dog'" in f.message


def test_quiet_on_the_seed_table_once_shuffled(planted):
    train, _ = planted
    assert drift(train.sample(frac=1.0, random_state=0)) == []


@pytest.mark.parametrize("alpha, allowed", [(0.001, 1), (0.05, 10)])
def test_false_alarm_rate_on_200_permutations_is_within_alpha(alpha, allowed):
    """200 random orders of one label vector: alarms must stay at or under alpha.

    alpha 0.05 -> at most 10 of 200 (5%); alpha 0.001 -> at most 1 (the expectation is 0.2).
    The tests are Bonferroni-corrected and need an effect size too, so they are conservative:
    the observed rate is well under alpha, which is what the margin asks.
    """
    rng = np.random.default_rng(123)
    base = rng.integers(0, 2, 500)
    alarms = 0
    for _ in range(200):
        alarms += len(drift(frame(rng.permutation(base)), alpha=alpha))
    assert alarms <= allowed


@pytest.mark.slow
def test_one_million_shuffled_rows_stay_quiet():
    rng = np.random.default_rng(9)
    labels = rng.integers(0, 3, 1_000_000)
    train = pd.DataFrame({"x": np.zeros(1_000_000, np.float32), "label": labels})
    report = datavet.audit(train, target="label", select="L002")
    assert [o.status.value for o in report.outcomes] == ["passed"]
    assert report.findings == []


def test_one_million_rows_with_a_small_start_block_fire():
    # The same size with 2% of rows at the start all one class: found, with bins of 1,024 rows.
    rng = np.random.default_rng(10)
    labels = rng.integers(0, 2, 1_000_000)
    labels[:20_000] = 1
    train = pd.DataFrame({"x": np.zeros(1_000_000, np.float32), "label": labels})
    (f,) = datavet.audit(train, target="label", select="L002").findings
    assert abs(f.metrics["segment_rows"] - 20_000) <= 1024
    assert "bins of 1,024 rows" in f.message


def test_skipped_for_regression_and_without_target():
    df = pd.DataFrame({"x": np.arange(100.0), "label": np.linspace(0, 1, 100)})
    (o,) = datavet.audit(df, target="label", select="L002").outcomes
    assert o.status.value == "skipped" and "regression" in o.reason
    (o,) = datavet.audit(df.drop(columns="label"), select="L002").outcomes
    assert o.status.value == "skipped" and "target" in o.reason


def test_thresholds_live_on_the_class():
    assert PositionalLabelDrift.thresholds["alpha"] == 0.001
    with pytest.raises(datavet.UsageError):
        datavet.audit(
            frame([0, 1] * 20), target="label", select="L002", thresholds={"L002": {"alfa": 0.1}}
        )

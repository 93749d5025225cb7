"""The baselines' log loss covers only test rows whose class train has; the report says so."""

import numpy as np
import pandas as pd

import datavet


def test_log_loss_rows_are_named_when_test_has_classes_train_lacks():
    rng = np.random.default_rng(2)
    n = 1000
    x = rng.normal(size=(n, 3))
    y = (x[:, 0] + rng.normal(size=n) > 0.8).astype(float)
    frame = pd.DataFrame(x, columns=list("abc"))
    frame["label"] = y
    train, test = frame.iloc[:800], frame.iloc[800:].copy()
    test.iloc[:20, -1] = 2.0  # a class train never has
    report = datavet.audit(train, test, target="label")
    base = report.to_dict()["baselines"]
    (note,) = [n for n in base["notes"] if n.startswith("log loss over")]
    assert "the 180 of 200 test rows" in note and "20 carry a class train never has" in note
    # the figure is the mean over those 180 rows (accuracy still over all 200)
    prior = {m["model"]: m["metrics"] for m in base["models"]}["prior"]
    counts = np.bincount(train["label"].astype(int)) / len(train)
    seen = test["label"].to_numpy() != 2.0
    expected = -np.mean(np.log(counts[test["label"].to_numpy()[seen].astype(int)]))
    assert abs(prior["log_loss"] - expected) < 1e-9


def test_no_note_when_every_test_class_is_known():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=600), "label": rng.integers(0, 2, 600)})
    report = datavet.audit(frame.iloc[:400], frame.iloc[400:], target="label")
    assert not [n for n in report.to_dict()["baselines"]["notes"] if n.startswith("log loss")]

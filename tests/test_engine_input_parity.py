"""The same data as another input type gets the same findings: an (N, D) torch (X, y) pair as
the NumPy pair (EN-4), a Dask DataFrame's list column as the pandas one (EN-1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet

torch = pytest.importorskip("torch")


def findings(report) -> list[tuple]:
    return sorted(
        (f.code, f.split, f.columns, f.n_affected, f.examples, f.message) for f in report.findings
    )


def tables(seed: int = 0):
    """Train (1,200 rows) and test (300 rows) features x0..x4 with labels: x1 at 300x the others'
    scale, x2 constant, x3 moved 3 standard deviations in test, NaN in x4."""
    rng = np.random.default_rng(seed)
    xtr, xte = rng.normal(size=(1200, 5)), rng.normal(size=(300, 5))
    for x in (xtr, xte):
        x[:, 1] *= 300
        x[:, 2] = 7.0
    xte[:, 3] += 3.0
    xtr[[5, 75], 4] = np.nan
    return (xtr, rng.integers(0, 2, 1200)), (xte, rng.integers(0, 2, 300))


def as_torch(pair, **kw):
    x, y = pair
    return torch.tensor(x, **kw), torch.tensor(y)


def test_a_torch_pair_of_features_gets_the_numpy_pairs_findings_drift_included():
    train, test = tables()
    numpy = datavet.audit(train, test)
    tensors = datavet.audit(as_torch(train, requires_grad=True), as_torch(test))
    assert findings(tensors) == findings(numpy)
    codes = {f.code: f.columns for f in tensors.findings}
    assert codes["S010"] == ("x3",) and codes["S011"][0] == "x3"
    assert codes["F001"] == ("x2",) and codes["F003"] == ("x1",) and "T001" not in codes
    (const,) = [f for f in tensors.findings if f.code == "F001"]
    assert const.n_affected == 1200  # every row, as for a table column (not "1 of 5 features")
    assert [c["name"] for c in tensors.datasets["train"]["columns"]][:5] == [
        f"x{j}" for j in range(5)
    ]


def test_a_lone_2d_tensor_is_a_table_and_images_and_one_hot_labels_stay_tensors():
    (x, _), _ = tables()
    lone = datavet.audit(torch.tensor(x), baselines=False)
    assert findings(lone) == findings(datavet.audit(x, baselines=False))
    labels = torch.randint(0, 2, (64,))
    for shape, layout in [((64, 1, 16, 16), "image"), ((64, 10, 3), "sequence")]:
        report = datavet.audit((torch.rand(*shape), labels), baselines=False)
        assert report.datasets["train"]["tensor"]["layout"] == layout
    one_hot = torch.nn.functional.one_hot(torch.randint(0, 3, (1200,)), 3)
    report = datavet.audit((torch.tensor(x), one_hot), baselines=False)
    assert report.datasets["train"]["tensor"]["layout"] == "features"  # a table cannot hold it


# --- Dask ---------------------------------------------------------------------------------------


def embeddings(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=n), "label": rng.integers(0, 2, n)})
    emb = [rng.normal(size=4).tolist() for _ in range(n)]
    emb[20][2] = float("nan")
    frame["emb"] = emb
    return frame


def vector_checks(report) -> tuple:
    (emb,) = [c for c in report.datasets["train"]["columns"] if c["name"] == "emb"]
    nan = [(f.columns, f.n_affected, f.examples) for f in report.findings if f.code == "V001"]
    return emb["kind"], emb["nan_rows"], nan


def test_a_dask_frames_list_column_is_read_as_vectors_like_pandas():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    frame = embeddings()
    expected = vector_checks(datavet.audit(frame, target="label", baselines=False))
    assert expected == ("vector", 1, [(("emb",), 1, (20,))])
    before = dask.config.get("dataframe.convert-string", None)
    ddf = dd.from_pandas(frame, npartitions=2)
    lazy = ddf[ddf.x > -100].map_partitions(lambda p: p.assign(y=p.x * 2))
    for data in (ddf, lazy):
        report = datavet.audit(data, target="label", baselines=False, engine="local")
        assert vector_checks(report) == expected
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        report = datavet.audit(
            ddf, target="label", baselines=False, engine="dask", scheduler=cluster.scheduler_address
        )
    assert vector_checks(report) == expected
    assert dask.config.get("dataframe.convert-string", None) == before  # the user's config


def test_a_dask_text_column_that_looks_like_lists_gets_a_note():
    dd = pytest.importorskip("dask.dataframe")
    frame = embeddings()
    frame["emb"] = frame["emb"].astype(str)  # already text: nothing to undo
    data = dd.from_pandas(frame, npartitions=2)
    report = datavet.audit(data, target="label", baselines=False, engine="local")
    (note,) = [n for n in report.notes if "emb" in n]
    assert "column 'emb' holds text that looks like lists of numbers" in note
    assert "dataframe.convert-string" in note
    plain = dd.from_pandas(pd.DataFrame({"s": ["[a, b]", "[1, 2]"] * 50, "label": 1}), 2)
    assert not [n for n in datavet.audit(plain, engine="local").notes if "lists" in n]

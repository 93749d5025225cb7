"""Integrations, the second look: `assert_clean(dataset=...)` audits what `datavet audit
--dataset` audits; `datavet preflight` applies the project's settings; the pre-commit hooks
match file names in any case; `AuditStep` is transparent to `set_output` and refuses sparse
input clearly; a dropped S3 connection is not called a corrupt file."""

from __future__ import annotations

import http.client
import http.server
import io
import json
import os
import re
import socket
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import datavet
from datavet.cli import main
from datavet.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# assert_clean(dataset=NAME) audits what `datavet audit --dataset NAME` audits


def _grouped_project(tmp_path: Path, extra: str = "") -> None:
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {
            "patient_id": rng.integers(0, 60, n),
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "y": rng.integers(0, 2, n),
        }
    )
    df.iloc[:200].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "test.csv", index=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\ntarget = "y"\n'
        '[tool.datavet.datasets.main]\ntrain = "train.csv"\ntest = "test.csv"\n'
        'group = "patient_id"\n' + extra
    )


def test_assert_clean_dataset_uses_the_project_target_and_the_dataset_group(
    tmp_path, monkeypatch, capsys
):
    from datavet.testing import assert_clean

    monkeypatch.chdir(tmp_path)
    _grouped_project(tmp_path)
    code, out, _ = run(capsys, "audit", "--dataset", "main", "--format", "json")
    cli = json.loads(out)
    assert code == 1 and "S005" in {f["code"] for f in cli["findings"]}
    with pytest.raises(AssertionError, match="S005 group-leakage") as err:
        assert_clean(dataset="main")
    assert "pass --group" not in str(err.value)
    report = assert_clean(dataset="main", ignore="S005")  # B001 is a warning: passes
    assert report.target == "y"  # the top-level target, as the CLI takes it
    assert sorted(f.code for f in report.findings) == sorted(
        f["code"] for f in cli["findings"] if f["code"] != "S005"
    )
    assert len(report.outcomes) == len(cli["outcomes"]) - 1  # the label rules ran too


def test_assert_clean_dataset_takes_the_dataset_delimiter_and_time(tmp_path, monkeypatch):
    from datavet.testing import assert_clean

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    n = 120
    df = pd.DataFrame(
        {
            "when": pd.date_range("2024-01-01", periods=n, freq="D").astype(str),
            "born": pd.date_range("1950-01-01", periods=n, freq="7D").astype(str)[
                rng.permutation(n)
            ],  # a second date column: S008 picks none by itself
            "a": rng.normal(size=n),
            "label": rng.integers(0, 2, n),
        }
    )
    # a delimiter the sniffer does not try; train holds the later rows
    df.iloc[60:].to_csv(tmp_path / "train.csv", sep=":", index=False)
    df.iloc[:60].to_csv(tmp_path / "test.csv", sep=":", index=False)
    (tmp_path / "datavet.toml").write_text(
        '[datasets.d]\ntrain = "train.csv"\ntest = "test.csv"\ntime = "when"\n'
        'delimiter = ":"\ntarget = "label"\n'
    )
    with pytest.raises(AssertionError, match="S008 time-order-leakage") as err:
        assert_clean(dataset="d", select="S008", fail_on="info")
    assert "60 test rows (100.0%) are older" in str(err.value)


def test_assert_clean_dataset_and_data_together_is_a_usage_error(tmp_path, monkeypatch):
    from datavet.testing import assert_clean

    monkeypatch.chdir(tmp_path)
    _grouped_project(tmp_path)
    with pytest.raises(UsageError, match="not both"):
        assert_clean(None, "test.csv", dataset="main")
    with pytest.raises(UsageError, match="unknown dataset 'mian'; the config names: main"):
        assert_clean(dataset="mian")


def test_assert_clean_and_audit_step_refuse_a_probe_rule_setting(tmp_path):
    from datavet.sklearn import AuditStep
    from datavet.testing import assert_clean

    X = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7})
    y = np.arange(40) % 2
    with pytest.raises(UsageError, match="M001 .* is a model-probe rule"):
        assert_clean(X.assign(label=y), severity={"M001": "error"})
    with pytest.raises(UsageError, match="L001 has no threshold 'maxratio'"):
        AuditStep(select="V", thresholds={"L001": {"maxratio": 5}}).fit(X, y)


# --------------------------------------------------------------------------------------------
# datavet preflight applies the project's settings to its data audit


FACTORY = (
    "import torch\nfrom torch import nn\n\n\ndef factory():\n    torch.manual_seed(0)\n"
    "    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2)), "
    "nn.functional.cross_entropy\n"
)


def _preflight_project(tmp_path: Path, config: str) -> tuple[str, Path]:
    rng = np.random.default_rng(0)
    n = 300
    x = rng.normal(size=(n, 4))
    df = pd.DataFrame(x, columns=["a", "b", "c", "d"]).assign(
        x3=7.0, label=(x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    )  # x3: constant, F001 (a warning)
    df.to_parquet(tmp_path / "train.parquet", index=False)
    (tmp_path / "model.py").write_text(FACTORY)
    (tmp_path / "pyproject.toml").write_text(config)
    return f"{tmp_path / 'model.py'}:factory", tmp_path / "train.parquet"


@pytest.fixture
def one_torch_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_preflight_gates_at_the_config_fail_on(tmp_path, monkeypatch, capsys, one_torch_thread):
    monkeypatch.chdir(tmp_path)
    model, train = _preflight_project(
        tmp_path, '[tool.datavet]\ntarget = "label"\nfail-on = "warning"\n'
    )
    code, out, _ = run(capsys, "preflight", model, "--train", str(train))  # no --target
    assert code == 1
    assert "1. [FAIL] data audit" in out and "at or above warning: F001" in out
    assert "2. [--  ] baselines" in out
    # --isolated reads no config: the default gate (error) and an explicit target
    code, out, _ = run(
        capsys, "preflight", model, "--train", str(train), "--target", "label", "--isolated"
    )
    assert code == 0 and "1. [ok  ] data audit" in out


def test_preflight_applies_the_config_ignores(tmp_path, monkeypatch, capsys, one_torch_thread):
    monkeypatch.chdir(tmp_path)
    model, train = _preflight_project(
        tmp_path,
        '[tool.datavet]\ntarget = "label"\n[tool.datavet.per-column-ignores]\n'
        'x3 = { rules = ["F001"], reason = "constant by design" }\n',
    )
    code, out, _ = run(capsys, "preflight", model, "--train", str(train), "--fail-on", "warning")
    assert code == 0, out
    assert "1. [ok  ] data audit" in out
    assert "constant by design" in out  # listed as ignored, with the reason
    code, out, _ = run(capsys, "preflight", model, "--train", str(train), "--format", "json")
    payload = json.loads(out)
    assert [i["finding"]["code"] for i in payload["ignored"]] == ["F001"]


def test_preflight_with_config_and_isolated_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(
        capsys, "preflight", "m.py:f", "--train", "t.csv", "--config", "x.toml", "--isolated"
    )
    assert code == 2 and "--config and --isolated cannot be used together" in err


# --------------------------------------------------------------------------------------------
# the pre-commit hooks match data files in any case


HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
DATA_FILES = [
    "data/train.csv",
    "t.tsv",
    "t.tab",
    "t.parquet",
    "t.pq",
    "t.parq",
    "t.arrow",
    "t.arrows",
    "t.feather",
    "t.ipc",
    "t.csv.gz",
    "t.parquet.zst",
    "t.csv.bz2",
    "t.csv.lz4",
    "data/EXPORT.CSV",
    "data/Train.Parquet",
    "data/x.csv.GZ",
    "Data.TSV",
]


@pytest.mark.parametrize("hook", HOOKS, ids=lambda h: h["id"])
def test_the_hooks_match_data_files_in_any_case(hook):
    pattern = re.compile(hook["files"])  # pre-commit matches with re.search
    for name in DATA_FILES:
        assert pattern.search(name), (hook["id"], name)
    for name in ("train.py", "a.csvx", "notes.csv.bak", "README.md", "csv"):
        assert not pattern.search(name), (hook["id"], name)
    project = hook["id"] == "datavet-project"
    for name in ("pyproject.toml", "sub/datavet.toml"):
        assert bool(pattern.search(name)) is project, (hook["id"], name)


# --------------------------------------------------------------------------------------------
# AuditStep: transparent to set_output and get_feature_names_out; sparse input refused clearly


def _xy(n: int = 200):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    y = pd.Series(((X.a + 1.5 * rng.normal(size=n)) > 0).astype(int), name="label")
    return X, y


def test_audit_step_works_with_set_output_and_feature_names():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from datavet.sklearn import AuditStep

    X, y = _xy()
    pipe = make_pipeline(AuditStep(), StandardScaler()).set_output(transform="pandas")
    out = pipe.fit_transform(X, y)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b"]
    assert list(pipe.get_feature_names_out()) == ["a", "b"]
    step = pipe[0]
    assert list(step.feature_names_in_) == ["a", "b"] and step.n_features_in_ == 2
    assert list(step.get_feature_names_out()) == ["a", "b"]
    # arrays: no names of their own, sklearn's x0, x1
    step = AuditStep().fit(X.to_numpy(), y.to_numpy())
    assert not hasattr(step, "feature_names_in_")
    assert list(step.get_feature_names_out()) == ["x0", "x1"]
    assert step.transform(X) is X  # still passes its input through


def test_audit_step_refuses_a_sparse_matrix_naming_the_conversion():
    sp = pytest.importorskip("scipy.sparse")
    from datavet.sklearn import AuditStep

    X, y = _xy()
    for matrix in (sp.csr_matrix(X.to_numpy()), sp.csc_array(X.to_numpy())):
        with pytest.raises(UsageError) as err:
            AuditStep().fit(matrix, y.to_numpy())
        message = str(err.value)
        assert "sparse" in message and "X.toarray()" in message and "200x2" in message
        with pytest.raises(UsageError, match=r"sparse .* as test: .*X\.toarray\(\)"):
            datavet.audit(X.assign(label=y), matrix)


# --------------------------------------------------------------------------------------------
# a store that drops the connection is not a corrupt file


def test_transport_problem_tells_the_store_from_the_data():
    import pyarrow as pa

    from datavet.sources.parquet import transport_problem

    dropped = OSError(
        "AWS Error NETWORK_CONNECTION during GetObject operation: curlCode: 18, Transferred a "
        "partial file"
    )
    stalled = OSError(
        "AWS Error NETWORK_CONNECTION during GetObject operation: curlCode: 28, Timeout was reached"
    )
    assert transport_problem(dropped).startswith("cannot read: connection lost (AWS Error")
    assert transport_problem(stalled).startswith("cannot read: timed out (AWS Error")
    assert transport_problem(ConnectionResetError(104, "Connection reset by peer"))
    assert transport_problem(TimeoutError("read")).startswith("cannot read: timed out")
    for decode in (
        pa.ArrowInvalid("Parquet magic bytes not found in footer"),
        OSError("Couldn't deserialize thrift: TProtocolException: Invalid data"),
        pa.ArrowInvalid("CSV parse error: Expected 3 columns, got 2"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    ):
        assert transport_problem(decode) is None, decode


S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
DROP_OVER = 200_000  # bytes: a GET body larger than this is cut off halfway


@pytest.fixture(scope="module")
def dropping_s3():
    """moto's S3 server with a large Parquet and CSV object, behind a proxy that sends half of
    each large GET body and then closes the connection (the store failing mid-read)."""
    boto3 = pytest.importorskip("boto3")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()

    class Dropper(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def relay(self):
            upstream = http.client.HTTPConnection(host, port, timeout=30)
            upstream.request(self.command, self.path, headers=dict(self.headers))
            response = upstream.getresponse()
            body = response.read()
            upstream.close()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.end_headers()
            if self.command == "GET" and len(body) > DROP_OVER:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = relay

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Dropper)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    saved = {k: os.environ.get(k) for k in (*S3_ENV, "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")}
    os.environ.update(S3_ENV)
    os.environ.pop("AWS_ENDPOINT_URL_S3", None)
    try:
        client = boto3.client("s3", endpoint_url=f"http://{host}:{port}")
        client.create_bucket(Bucket="dropped")
        rng = np.random.default_rng(0)
        n = 100_000
        df = pd.DataFrame(
            {"a": rng.normal(size=n), "b": rng.normal(size=n), "label": rng.integers(0, 2, n)}
        )
        buf = io.BytesIO()
        df.to_parquet(buf, index=False, row_group_size=50_000)
        client.put_object(Bucket="dropped", Key="big.parquet", Body=buf.getvalue())
        client.put_object(Bucket="dropped", Key="big.csv", Body=df.to_csv(index=False).encode())
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.server_address[1]}"
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        proxy.shutdown()
        server.stop()


@pytest.mark.parametrize("key", ["big.parquet", "big.csv"])
def test_a_dropped_connection_is_said_as_such(dropping_s3, capsys, key):
    url = f"s3://dropped/{key}"
    with pytest.raises(InputError) as err:
        datavet.audit(url, target="label", baselines=False)
    message = str(err.value)
    assert message.startswith(f"{url}: cannot read: connection lost (")
    assert "corrupt" not in message and "cannot parse CSV" not in message
    assert "not a readable" not in message
    code, out, err_text = run(capsys, "audit", url, "--target", "label", "--isolated")
    assert code == 2 and out == ""
    (line,) = err_text.splitlines()
    assert line.startswith(f"datavet: error: {url}: cannot read: connection lost")

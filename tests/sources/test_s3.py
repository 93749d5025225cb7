"""s3:// inputs against a real S3-compatible server (moto's server mode on 127.0.0.1), configured
the way users configure any S3 client: AWS_ENDPOINT_URL and the AWS credential variables."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.cli import main

from . import object_stores as store

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "datavet-test"
ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(scope="module")
def s3():
    """A moto S3 server on 127.0.0.1 (a free port), a bucket with Parquet and CSV objects and a
    Hive-partitioned prefix; the endpoint and credentials in the environment."""
    import boto3  # with moto[server], a dev dependency
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {k: os.environ.get(k) for k in (*ENV, "AWS_ENDPOINT_URL")}
    os.environ.update(ENV, AWS_ENDPOINT_URL=endpoint)
    try:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket=BUCKET)
        train, test = store.splits()
        objects = {
            **store.objects(train, test),
            "test.csv.gz": __import__("gzip").compress(test.to_csv(index=False).encode()),
            "hive/train/_SUCCESS": b"",
        }
        for key, body in objects.items():
            client.put_object(Bucket=BUCKET, Key=key, Body=body)
        yield {"endpoint": endpoint, "train": train, "test": test}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def url(key: str) -> str:
    return f"s3://{BUCKET}/{key}"


def summary(report) -> list[tuple]:
    return store.summary(report)


def test_parquet_objects_audit_like_the_local_frames(s3):
    store.check_parquet_like_local(url, s3["train"], s3["test"])


def test_csv_objects_plain_and_gzipped(s3):
    store.check_csv_like_local(url("train.csv"), url("test.csv.gz"), s3["train"], s3["test"])


def test_hive_partitioned_prefix(s3):
    store.check_hive_prefix(url)


def test_glob_on_s3(s3):
    store.check_glob(url)


def test_cli_reads_s3_urls(s3, capsys):
    code = main(["audit", url("train.parquet"), "--test", url("test.parquet"), "--target", "label"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "S001" in out and "V001" in out


def test_cli_in_a_fresh_process_configured_by_environment_only(s3):
    store.check_fresh_cli(url)


@pytest.mark.parametrize(
    ("target", "pattern"),
    [
        (url("missing.parquet"), r"no such file"),
        ("s3://no-such-bucket-datavet/train.parquet", r"no such|bucket|not found|cannot read"),
        (url("nothing-here/*.parquet"), r"no files match|not a directory"),
    ],
)
def test_missing_object_or_bucket_is_a_one_line_error(s3, capsys, target, pattern):
    store.check_one_line_error(capsys, target, pattern)


def test_dask_engine_on_an_s3_prefix(s3):
    from distributed import LocalCluster

    local = datavet.audit(url("hive/train"), target="label", baselines=False)
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        dask = datavet.audit(
            url("hive/train"),
            target="label",
            baselines=False,
            engine="dask",
            scheduler=cluster.scheduler_address,
        )
    assert summary(dask) == summary(local)


def test_reads_are_ranged_not_a_download(s3):
    """Reading one column of a Parquet object fetches a fraction of it: the object is read
    through ranged requests on the filesystem, never downloaded whole."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    from datavet.sources import open_source

    big = pd.DataFrame(np.random.default_rng(0).normal(size=(20_000, 8)), columns=list("abcdefgh"))
    body = store.parquet_bytes(big, row_group_size=5000)
    import boto3

    boto3.client("s3", endpoint_url=s3["endpoint"]).put_object(
        Bucket=BUCKET, Key="wide.parquet", Body=body
    )
    source = open_source(url("wide.parquet"))
    counted = []

    class Counting:
        """The S3 filesystem, counting the bytes its files hand out."""

        def __init__(self, inner):
            self.inner = inner

        def open_input_file(self, path):
            f = self.inner.open_input_file(path)

            class Reader(io.RawIOBase):
                def readable(self):
                    return True

                def seekable(self):
                    return True

                def seek(self, offset, whence=0):
                    return f.seek(offset, whence)

                def tell(self):
                    return f.tell()

                def readinto(self, buf):
                    data = f.read(len(buf))
                    counted.append(len(data))
                    buf[: len(data)] = data
                    return len(data)

            return pa.PythonFile(io.BufferedReader(Reader(), 1 << 12), mode="r")

    assert isinstance(source.filesystem, pafs.S3FileSystem)
    source.filesystem = Counting(source.filesystem)
    rows = sum(b.num_rows for _, b in source.column_batches(["a"], 4096))
    assert rows == 20_000
    assert 0 < sum(counted) < len(body) / 3

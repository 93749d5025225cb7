"""Airflow: a DAG whose validation task fails when datavet finds problems, so the training task
downstream never runs (it is marked ``upstream_failed``).

The task raises ``AirflowFailException`` (a subclass of ``AirflowException``): the task fails at
once, without retries, because retrying does not change the data. On success it returns the
report as a JSON-safe dict, which Airflow pushes to XCom (no DataFrame ever goes to XCom).

Airflow is imported only inside :func:`build_dag`, and the DAG is only built when Airflow is
installed, so :func:`vet` (the task body) runs and is tested without it. Written for Airflow 3
(``airflow.sdk``), with the Airflow 2 import paths as a fallback. Put this file in your DAGs
folder, or run one DAG run in-process:

    airflow db migrate
    AIRFLOW__CORE__DAGS_FOLDER=examples python examples/airflow_dag.py
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import datavet

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN = os.environ.get("DATAVET_TRAIN", str(SAMPLE / "clean_train.parquet"))
TEST = os.environ.get("DATAVET_TEST", str(SAMPLE / "clean_test.parquet"))


def vet(train, test=None, *, target="label", fail_on="error", html=None) -> dict:
    """The task body: audit, optionally write the HTML report, return the JSON dict; raise
    :class:`datavet.AuditFailed` when findings reach ``fail_on``."""
    report = datavet.audit(train, test, target=target, fail_on=fail_on)
    if html:
        report.save_html(html)
    report.raise_for_findings()
    return report.to_dict()


def build_dag(train: str, test: str | None, *, target: str = "label", dag_id: str = "datavet"):
    try:
        from airflow.sdk import dag, task
        from airflow.sdk.exceptions import AirflowFailException
    except ImportError:  # Airflow 2
        from airflow.decorators import dag, task
        from airflow.exceptions import AirflowFailException

    @dag(
        dag_id=dag_id,
        schedule=None,
        start_date=datetime.datetime(2024, 1, 1),
        catchup=False,
        tags=["datavet"],
    )
    def training_data():
        @task
        def vet_training_data() -> dict:
            try:
                return vet(train, test, target=target)
            except datavet.AuditFailed as exc:
                raise AirflowFailException(str(exc)) from exc

        @task
        def train_model(report: dict) -> None:
            print(f"training on data that passed datavet {report['version']}")

        train_model(vet_training_data())

    return training_data()


try:
    import airflow  # noqa: F401
except ImportError:  # the module stays importable, and vet() testable, without Airflow
    pass
else:
    datavet_dag = build_dag(TRAIN, TEST)

if __name__ == "__main__":
    run = datavet_dag.test()
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    print(f"dag run {run.state}: {states}")

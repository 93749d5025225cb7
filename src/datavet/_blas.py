"""BLAS on one thread while an audit fits its models.

An audit's linear algebra is many small products (a logistic fit on a few thousand rows and
a few dozen features: each product well under a millisecond), run on several threads at once
beside the scan's and the other rules' threads. A multithreaded BLAS (OpenBLAS by default, as
NumPy ships it) splits each product across the cores and then keeps its threads spinning,
waiting for the next one: on two cores, measured on the 1M-row benchmark, that spin took
about 0.3 s of CPU from the audit's own threads and made it slower, not faster.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext


def one_blas_thread() -> AbstractContextManager:
    """A context in which BLAS uses one thread (the process-wide setting, as threadpoolctl
    sets it: entered once for the whole audit, not per fit on each thread, so no thread's exit
    gives the threads back while another still fits). Restored on exit."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it BLAS keeps its threads
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")

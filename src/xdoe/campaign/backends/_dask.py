"""A Dask distributed cluster: ``--dask ADDRESS`` or ``--dask local``."""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from xdoe.campaign._tasks import WORKER_DIED, RunTask
from xdoe.campaign.backends._base import FutureBackend, failed_result
from xdoe.errors import InputError
from xdoe.execution import RunResult

__all__ = ["DaskBackend"]


class DaskBackend(FutureBackend):
    """Each run a task on a Dask distributed cluster.

    Args:
        address: a scheduler address (``tcp://host:8786``) or ``"local"``
            for a :class:`distributed.LocalCluster` on the loopback interface
            without dashboard.
        n_workers: workers of the local cluster (one thread each); default
            the CPU count.
    """

    def __init__(self, address: str, *, n_workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - distributed is a dependency
            raise InputError(f"--dask needs the 'distributed' package: {exc}") from None
        self.cluster: Any = None
        if address == "local":
            self.cluster = LocalCluster(host="127.0.0.1", n_workers=n_workers or os.cpu_count() or 1,
                                        threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(address, timeout="20s")
            except (OSError, TimeoutError) as exc:
                self.close()
                raise InputError(f"--dask {address}: cannot connect to the scheduler: {exc}") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.capacity = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values())) * 2

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def _wait(self, futures: list[Any]) -> Iterable[Any]:
        from distributed import wait as dask_wait

        done, _ = dask_wait(futures, return_when="FIRST_COMPLETED")
        return done

    def _result(self, fut: Any, task: RunTask) -> RunResult:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - KilledWorker, lost connection ...
            name = type(exc).__name__
            error = f"{WORKER_DIED} ({name}: {exc})" if name == "KilledWorker" else f"{name}: {exc}"
            return failed_result(task, error)

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self.cluster is not None:
            self.cluster.close()

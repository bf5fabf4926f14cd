"""In this process, one run after another: ``--jobs 1`` and the debugging path."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Iterator, Sequence

from xdoe.campaign._stop import request_stop, stop_requested
from xdoe.campaign._tasks import RunTask, execute_task
from xdoe.campaign.backends._base import FutureBackend, ProgressCallback, failed_result, stops
from xdoe.execution import RunResult
from xdoe.store import Store

__all__ = ["SequentialBackend"]


class SequentialBackend(FutureBackend):
    """Runs every task in this process, one after another, sharing one open
    store per store URL; per-run progress works."""

    remote = False

    def __init__(self, stores: "dict[str | None, Store] | None" = None) -> None:
        # the stores given are the caller's (used, never closed); the others are opened here
        self._given = dict(stores or {})
        self._stores: dict[str | None, Store] = dict(self._given)

    def submit(self, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            fut.set_exception(exc)
        return fut

    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        for task in tasks:
            if stop_requested():
                return
            if started is not None:
                started(task)
            url = task.options.store_url
            store = self._stores.get(url)
            if store is None:
                store = self._stores[url] = Store(url, wait=task.options.store_wait)
            try:
                result = execute_task(task, store=store, progress=progress)
            except KeyboardInterrupt:  # a real Ctrl-C: the run recorded itself interrupted (resumable)
                request_stop()
                result = failed_result(task, "interrupted")
                result.status, result.stop_campaign = "interrupted", True
            yield result
            if stops(result, fail_fast):
                return

    def close(self) -> None:
        for url, store in self._stores.items():
            if self._given.get(url) is not store:
                store.close()
        self._stores.clear()

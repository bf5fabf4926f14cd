"""The options of a campaign, in one frozen object that travels with every
run task to whatever process runs it (:class:`CampaignOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from xdoe.errors import InputError
from xdoe.store import DEFAULT_RESULTS_ROOT, HEARTBEAT_TIMEOUT

__all__ = ["CampaignOptions", "STORE_WAIT"]

#: Seconds a campaign waits for a store that went away (``--store-wait``'s default).
STORE_WAIT = 60.0


@dataclass(frozen=True)
class CampaignOptions:
    """How a campaign runs its run documents (picklable; ``xrun
    experiment-start``'s options).

    Attributes:
        store_url: the store's URL (``None``: ``$XRUN_STORE`` or the default).
        results: root of the results folders (``None``: none written).
        store_steps: ``none``, ``all`` or ``every:N``.
        rerun: run again runs that finished before (a new instance).
        heartbeat_timeout: seconds without heartbeat after which a running
            instance, or another process's claim, counts as dead (its run
            is resumed, its claim taken over); claims beat every quarter of it.
        run_timeout: seconds each run may take (``--run-timeout``; ``None``: no limit).
        parallel_workers: run the phases with ``worker > 1`` in worker
            processes (:mod:`xdoe.execution._parallel_workers`).
        jobs: runs at once, each in its own process.
        dask: a Dask scheduler address or ``"local"`` (``None``: no Dask).
        in_process: with one job, run in this process instead of one worker
            process (debuggers, profilers).
        fail_fast: start no run after the first failed one.
        laydown: put ``laydown.svg`` into each run's results folder (drawn
            by ``xrun``, not by the executor, when matplotlib is installed).
        claim: claim each run in the store first (``False``: run unconditionally).
        store_wait: seconds to wait, with back-off, for a store that went
            away (its server stopped or restarting) before the campaign stops
            (``--store-wait``; 0: stop at once). Meanwhile no run starts and
            the runs in flight keep their episodes buffered.
        log: ``tensorboard:DIR`` / ``mlflow:URI`` targets every run logs its
            episodes to as they are recorded (``--log``; :mod:`xdoe.tracking`),
            besides those of its document's ``run_config.log``.

    Raises:
        InputError: ``jobs`` is below 1 or a time is not positive.
    """

    store_url: str | None = None
    results: str | None = str(DEFAULT_RESULTS_ROOT)
    store_steps: str = "none"
    rerun: bool = False
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT
    run_timeout: float | None = None
    parallel_workers: bool = False
    jobs: int = 1
    dask: str | None = None
    in_process: bool = False
    fail_fast: bool = False
    laydown: bool = True
    claim: bool = True
    store_wait: float = STORE_WAIT
    log: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if int(self.jobs) < 1:
            raise InputError(f"--jobs must be at least 1, got {self.jobs}")
        if not float(self.heartbeat_timeout) > 0:
            raise InputError(f"--heartbeat-timeout must be positive, got {self.heartbeat_timeout}")
        if self.run_timeout is not None and not float(self.run_timeout) > 0:
            raise InputError(f"--run-timeout must be positive, got {self.run_timeout}")
        if not float(self.store_wait) >= 0:
            raise InputError(f"--store-wait must be 0 or more, got {self.store_wait}")
        if self.results is not None and not isinstance(self.results, str):
            object.__setattr__(self, "results", str(self.results))
        if self.log:
            from xdoe.documents import log_targets

            object.__setattr__(self, "log", tuple(str(t) for t in log_targets(list(self.log))))

    @property
    def remote(self) -> bool:
        """Whether runs execute in other processes that may start elsewhere
        (several jobs or Dask): they get absolute paths."""
        return bool(self.dask) or self.jobs > 1

    @property
    def in_this_process(self) -> bool:
        """Whether the runs execute in this process (``in_process`` with one
        job and no Dask: :func:`~xdoe.campaign.backends.make_backend`'s
        sequential backend)."""
        return self.in_process and not self.remote

    def for_workers(self) -> "CampaignOptions":
        """These options as the processes running the tasks need them: with
        an absolute store URL and results root when :attr:`remote`."""
        if not self.remote:
            return self
        from xdoe.documents import log_targets  # relative log folders and file stores made absolute too
        from xdoe.store import absolute_url

        results = None if self.results is None else str(Path(self.results).resolve())
        log = tuple(str(t.absolute()) for t in log_targets(list(self.log)))
        return replace(self, store_url=absolute_url(self.store_url), results=results, log=log)

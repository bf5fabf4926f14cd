"""Stop requests: ask a running instance, wherever its process runs, to stop
cleanly at its next episode end.

The dashboard (or any client) calls :meth:`Store.request_stop <StopRows.request_stop>`; the executor polls
:meth:`~StopRows.stop_requested` at episode ends (every couple of seconds, one
primary-key read), records the instance ``interrupted`` — resumable like a
Ctrl-C — and calls :meth:`~StopRows.clear_stop_request`. Going through the store works
for every backend (process pool, Dask, SLURM nodes), where a signal would
reach only processes on this host and, in a sequential ``xrun`` process,
would stop the whole campaign instead of one run.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select

from xdoe.store._base import StoreBase
from xdoe.store._tables import run_instance, stop_request, utcnow

__all__ = ["StopRows"]


class StopRows(StoreBase):
    """Stop requests, a mixin of :class:`xdoe.store.Store`."""

    def request_stop(self, instance_id: int, reason: str | None = None) -> bool:
        """Ask the running instance ``instance_id`` to stop at its next episode end.

        Returns:
            ``True`` when the instance is running (the request is recorded, or
            was already); ``False`` when it is not running (nothing recorded).

        Raises:
            StoreError: the store cannot be written.
        """
        with self._core_write("record a stop request in") as conn:
            status = conn.execute(
                select(run_instance.c.status).where(run_instance.c.id == instance_id)
            ).scalar_one_or_none()
            if status != "running":
                return False
            pending = select(stop_request.c.instance_id).where(stop_request.c.instance_id == instance_id)
            if conn.execute(pending).first() is None:
                conn.execute(insert(stop_request).values(instance_id=instance_id, requested=utcnow(), reason=reason))
            return True

    def stop_requested(self, instance_id: int) -> str | None:
        """The reason of the pending stop request of ``instance_id`` (``"stop
        requested"`` when none was given), or ``None`` when there is none."""
        with self._core_read("read stop requests from") as conn:
            row = conn.execute(
                select(stop_request.c.instance_id, stop_request.c.reason)
                .where(stop_request.c.instance_id == instance_id)
            ).first()
        if row is None:
            return None
        return row.reason or "stop requested"

    def clear_stop_request(self, instance_id: int) -> None:
        """Remove the stop request of ``instance_id`` (done when it was honoured,
        and when the instance resumes)."""
        with self._core_write("clear a stop request in") as conn:
            conn.execute(delete(stop_request).where(stop_request.c.instance_id == instance_id))

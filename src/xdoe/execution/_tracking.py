"""Live logging of a run (``--log``, ``run_config.log``): its trackers
(:mod:`xdoe.tracking`) opened in the run's process and made an observer of
its recorder; a failure is the run's warning, never its failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from xdoe.errors import one_line
from xdoe.execution._plan import RunPlan
from xdoe.store import HEARTBEAT_TIMEOUT

if TYPE_CHECKING:
    from xdoe.documents import LogTarget

__all__ = ["log_live"]


def log_live(plan: RunPlan, log: "Sequence[str | LogTarget]", recorder: Any, *, resumed: bool,
             heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> None:
    """Open the run's trackers (``log`` and ``run_config.log``) and make
    them an observer of ``recorder``; a failure is the run's warning. The
    tracker runs of the run's other instances whose process is gone (no
    heartbeat for ``heartbeat_timeout`` seconds, or gone from this host)
    are ended (:func:`~xdoe.tracking.open_live`'s ``ended``)."""
    targets = (*log, *plan.log)
    if not targets:
        return
    try:
        from xdoe.tracking import TrackedRun, open_live

        info = TrackedRun.of_document(plan.document, recorder.instance_uuid, plan.content_hash)
        live = open_live(targets, info, recorder.on_warning, recorded=_recorded(plan, recorder) if resumed else None,
                         ended=_ended(plan, recorder, heartbeat_timeout))
    except Exception as exc:  # noqa: BLE001 - logging never fails a run
        from xdoe.errors import TrackingWarning

        recorder.on_warning("tracking", f"logging to {', '.join(map(str, targets))} failed ({one_line(exc)}); "
                            "the run goes on without it", TrackingWarning)
        return
    if live is not None:
        recorder.observers.append(live)


def _recorded(plan: RunPlan, recorder: Any) -> Any:
    """The phases and episodes the store keeps of a resumed instance, in
    order (``open_live``'s ``recorded``: its tracker runs are written anew)."""
    store, instance_id = recorder.store, recorder.instance_id

    def recorded() -> Any:
        phases = [p for p in store.views.selected_phases(plan.experiment_uid, all_instances=True, include_branches=True)
                  if p.instance_id == instance_id]
        for phase in sorted(phases, key=lambda p: p.index):
            yield phase.index, phase.name, phase.mode, store.views.phase_episodes(phase)

    return recorded


def _ended(plan: RunPlan, recorder: Any, heartbeat_timeout: float) -> Any:
    """The other instances of the run that no process runs any more, uuid ->
    status (``open_live``'s ``ended``): a ``running`` one whose process is
    gone counts as ``interrupted``; one that may be alive is left out."""
    store, instance_id = recorder.store, recorder.instance_id

    def ended() -> dict[str, str]:
        out = {}
        for other in store.runs.instances(run_uid=plan.uid):
            if other.id == instance_id:
                continue
            if other.status != "running":
                out[other.uuid] = other.status
            elif not other.alive(heartbeat_timeout):
                out[other.uuid] = "interrupted"
        return out

    return ended

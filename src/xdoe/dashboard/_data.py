"""JSON endpoints read by the page scripts: curve points (incremental,
down-sampled) and the lineage graph."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request

from xdoe.dashboard._security import MAX_ID

from xdoe.dashboard._web import store_of

__all__ = ["router"]

router = APIRouter(prefix="/api")


@router.get("/instances/{instance_id}/curves")
def curves(request: Request, instance_id: Annotated[int, Path(ge=1, le=MAX_ID)],
           after: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
           max_points: Annotated[int, Query(ge=1, le=10**6)] = 1000,
           k: Annotated[int | None, Query(ge=1, le=10**9)] = None) -> dict[str, Any]:
    """Points newer than episode row ``after`` (see :meth:`store.views.curve_points <xdoe.store.views._views.Views.curve_points>`:
    ``xrun plot curves``' definition, x in environment steps), plus ``status`` of the
    instance (the page stops polling when it is not running)."""

    store = store_of(request)
    instance = store.runs.instance(instance_id)
    if instance is None:
        raise HTTPException(404, f"no run instance {instance_id}")
    data = store.views.curve_points(instance_id, after=max(0, after), max_points=min(max(10, max_points), 5000),
                              bin_size=None if k is None else max(1, k))
    data["status"] = instance.status
    return data


@router.get("/tree")
def tree(request: Request, experiment: str | None = None, tree: str | None = None) -> dict[str, Any]:
    """Session tree ``tree`` when given, else the lineage of ``experiment``."""
    from xdoe.dashboard._graph import lineage_graph, session_graph

    if tree:
        return session_graph(store_of(request), tree)
    return lineage_graph(store_of(request), experiment,
                         heartbeat_timeout=request.app.state.settings.heartbeat_timeout)

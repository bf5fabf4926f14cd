"""The HTML pages and the fragments htmx refreshes in place."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from xdoe.dashboard._web import store_of, templates
from xdoe.dashboard._settings import Settings

__all__ = ["router"]

router = APIRouter()


def _context(request: Request, **values: Any) -> dict[str, Any]:
    settings: Settings = request.app.state.settings
    from xdoe.dashboard._security import given_token

    return {"request": request, "store_url": request.app.state.store_url,
            "read_only": settings.read_only, "has_token": settings.token_ok(given_token(request)),
            **values}


def _page(request: Request, name: str, **values: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, _context(request, **values))


@router.get("/", response_class=HTMLResponse)
def campaigns_page(request: Request) -> HTMLResponse:
    from xdoe.dashboard._launch import candidate_folders

    s: Settings = request.app.state.settings
    folders = candidate_folders(s.runs_dir or s.workdir, s.workdir)
    return _page(request, "campaigns.html", folders=folders, **_campaigns(request))


def _campaigns(request: Request) -> dict[str, Any]:
    s: Settings = request.app.state.settings
    launches = _launches(request)
    try:
        store = store_of(request)
    except HTTPException as exc:  # no store yet: the page still offers to start a campaign
        return {"campaigns": [], "no_store": exc.detail, **launches}
    return {"campaigns": store.views.campaign_summaries(heartbeat_timeout=s.heartbeat_timeout,
                                                  design=request.app.state.designs.by_experiment()),
            **launches}


def _launches(request: Request) -> dict[str, Any]:
    launcher = request.app.state.launcher
    return {"launches": list(reversed(launcher.launches)), "launching": launcher.running}


@router.get("/fragments/launches", response_class=HTMLResponse)
def launches_fragment(request: Request) -> HTMLResponse:
    """The processes started here; it polls itself every second while one runs."""
    return _page(request, "_launches.html", **_launches(request))


@router.get("/fragments/campaigns", response_class=HTMLResponse)
def campaigns_fragment(request: Request) -> HTMLResponse:
    return _page(request, "_campaigns_table.html", **_campaigns(request))


def _runs(request: Request, experiment: str) -> dict[str, Any]:
    q = request.query_params
    s: Settings = request.app.state.settings
    try:
        page = int(q.get("page", "1"))
    except ValueError:
        page = 1
    params = {"status": q.get("status") or "", "q": q.get("q") or "",
              "sort": q.get("sort") or "design_point", "desc": q.get("desc") == "1"}
    data = store_of(request).views.campaign_runs(experiment, status=params["status"] or None,
                                           search=params["q"] or None, sort=params["sort"], descending=params["desc"],
                                           page=page, heartbeat_timeout=s.heartbeat_timeout,
                                           cache=request.app.state.responses,
                                           design=request.app.state.designs.by_experiment())
    return {"experiment": experiment, "data": data, "params": params}


@router.get("/campaigns/{experiment}", response_class=HTMLResponse)
def campaign_page(request: Request, experiment: str) -> HTMLResponse:
    values = _runs(request, experiment)
    if not values["data"].total:
        raise HTTPException(404, f"no experiment {experiment!r} in the store")
    return _page(request, "campaign.html", **values)


@router.get("/fragments/campaigns/{experiment}/runs", response_class=HTMLResponse)
def runs_fragment(request: Request, experiment: str) -> HTMLResponse:
    return _page(request, "_runs_table.html", **_runs(request, experiment))


def _run(request: Request, uid: str) -> Any:
    q = request.query_params.get("instance")
    s: Settings = request.app.state.settings
    instance = int(q) if q and q.isascii() and q.isdigit() and len(q) < 19 else None
    view = store_of(request).views.run_view(uid, instance,
                                      heartbeat_timeout=s.heartbeat_timeout)
    if view is None:
        raise HTTPException(404, f"no run {uid!r} in the store")
    return view


@router.get("/runs/{uid}", response_class=HTMLResponse)
def run_page(request: Request, uid: str) -> HTMLResponse:
    from xdoe.documents import dump_canonical

    view = _run(request, uid)
    return _page(request, "run.html", run=view, document=dump_canonical(view.document))


@router.get("/fragments/runs/{uid}/status", response_class=HTMLResponse)
def run_status_fragment(request: Request, uid: str) -> HTMLResponse:
    return _page(request, "_run_status.html", run=_run(request, uid))


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request) -> HTMLResponse:
    uids = [u for u in request.query_params.getlist("runs") if u]
    if not uids and request.query_params.get("text"):
        uids = request.query_params["text"].replace(",", " ").split()
    curves, unknown = [], []
    for uid in dict.fromkeys(uids):
        view = store_of(request).views.run_view(uid)
        if view is None or view.instance is None:
            unknown.append(uid)
            continue
        curves.append({"id": view.instance.id, "label": _run_label(view),
                       "running": view.status.status == "running"})
    return _page(request, "compare.html", uids=uids, curves=json.dumps(curves), unknown=unknown)


def _run_label(view: Any) -> str:
    """A run as a comparison names it: its factor levels (readable) and its
    repetition, else its uid (a run outside a design)."""
    from xdoe.results import levels_text

    levels = levels_text(view.levels)
    if not levels:
        return view.uid
    rep = view.status.repetition
    return levels + (f" · rep {rep}" if rep is not None else "") + f" ({view.uid})"


@router.get("/tree", response_class=HTMLResponse)
def tree_page(request: Request) -> HTMLResponse:
    """The session trees of the store (``?tree=``) and, for every experiment,
    its lineage (``?experiment=``); the first session tree by default, else
    the first experiment's lineage. ``?node=RUN`` opens that node's panel."""

    store = store_of(request)
    q = request.query_params
    trees = [t.uid for t in store.sessions.session_trees()]
    experiments = store.views.experiment_uids()
    tree = q.get("tree") if q.get("tree") in trees else None
    experiment = q.get("experiment") or None
    if tree is None and experiment is None and q.get("node"):  # the node's own tree
        found = store.sessions.nodes_of_run(q["node"])
        tree = found[-1].tree if found else None
        if tree is None:  # not a session yet: its campaign's lineage
            experiment = _run(request, q["node"]).experiment
    if tree is None and experiment is None:
        tree = trees[0] if trees else None
        experiment = None if tree else (experiments[0] if experiments else None)
    return _page(request, "tree.html", experiments=experiments, trees=trees, tree=tree,
                 chosen=experiment, node=q.get("node") or "")


@router.get("/fragments/tree/{uid}", response_class=HTMLResponse)
def tree_node_fragment(request: Request, uid: str) -> HTMLResponse:
    """A node's panel: its session (health, metric, overrides) when it is
    one, curves, configuration and the branch form."""
    from xdoe.documents import dump_canonical
    from xdoe.tree import edge_label, node_health

    view = _run(request, uid)
    tree = request.query_params.get("tree")
    found = [n for n in store_of(request).sessions.nodes_of_run(uid) if tree in (None, "", n.tree)]
    session = None
    if found:
        n = found[-1]
        session = {"tree": n.tree, "health": node_health(n), "metric": n.metric, "reason": n.reason,
                   "edge": edge_label(n)}
    phases = [next(iter(entry)) for entry in view.document.get("schedule", [])]
    return _page(request, "_node.html", run=view, document=dump_canonical(view.document),
                 session=session, phases=phases)

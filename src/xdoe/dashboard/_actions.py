"""Write actions (each needs the token, none in read-only mode): start a
campaign from a folder of run documents, stop a running run, branch a
session (:func:`xdoe.tree.branch` in a background ``xrun branch``)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Path, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from xdoe.dashboard._security import MAX_ID, read_form

from xdoe.dashboard._web import require_token, resume_note, store_of, templates
from xdoe.errors import InputError

__all__ = ["router", "stop_instance", "StartForm", "StopForm", "BranchForm"]

router = APIRouter(prefix="/actions", dependencies=[Depends(require_token)])


def _blank_is_none(value: Any) -> Any:
    """An empty form field (``episodes=``) means "not given"."""
    return None if isinstance(value, str) and not value.strip() else value


#: A positive 64-bit count (episodes, steps): larger ones are refused, never sent to a store.
_Count = Annotated[Annotated[int, Field(ge=1, le=MAX_ID)] | None, BeforeValidator(_blank_is_none)]


class _Action(BaseModel):
    """An action's fields: unknown ones are refused (422) before anything launches."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StartForm(_Action):
    """``POST /actions/start``: the folder of run documents."""

    folder: str = ""


class StopForm(_Action):
    """``POST /actions/instances/<id>/stop``: no field."""


class BranchForm(_Action):
    """``POST /actions/runs/<uid>/branch``: overrides (``KEY=VALUE`` lines),
    episodes or steps, the phase."""

    set: list[str] = []
    episodes: _Count = None
    steps: _Count = None
    phase: str = ""

    @property
    def overrides(self) -> list[str]:
        return [line.strip() for text in self.set for line in text.splitlines()
                if line.strip() and not line.strip().startswith("#")]


_A = TypeVar("_A", bound=_Action)


def _problem(error: Any, fields: list[str]) -> str:
    name = ".".join(str(part) for part in error["loc"][:1]) or "the body"
    given = error.get("input")
    if error["type"] == "extra_forbidden":
        return f"unknown field {name!r}; this action takes {', '.join(fields) or 'no field'}"
    if error["type"].startswith(("int_", "greater_than", "less_than")):
        shown = given if not isinstance(given, str) or len(given) <= 30 else f"{given[:20]}... ({len(given)} characters)"
        return f"{name} must be a positive integer (at most {MAX_ID}), not {shown!r}"
    return f"{name}: {error['msg']}"


async def _fields(request: Request, model: type[_A]) -> _A:
    """The action's form (or JSON) body as ``model``.

    Raises:
        HTTPException: 422 an unknown field, a value out of range or of the
            wrong kind (one line per problem); 400 an unreadable JSON body.
    """
    try:
        form = await read_form(request)
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None
    lists = {name for name, f in model.model_fields.items() if f.annotation == list[str]}
    data = {name: values if name in lists or len(values) != 1 else values[0] for name, values in form.items()}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        fields = list(model.model_fields)
        raise HTTPException(422, "; ".join(_problem(e, fields) for e in exc.errors())) from None


def _message(request: Request, text: str, kind: str = "ok", status: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(request, "_message.html",
                                      {"request": request, "text": text, "kind": kind},
                                      status_code=status)


@router.post("/start", response_class=HTMLResponse)
async def start(request: Request) -> HTMLResponse:
    """Start ``xrun experiment-start`` on the folder named by the form field ``folder``."""
    fields = await _fields(request, StartForm)
    try:
        launch = request.app.state.launcher.start(fields.folder)
    except InputError as exc:
        return _message(request, str(exc), "error", 400)
    return _launched(_message(request, f"started {launch.files} run(s) from {launch.folder} "
                                        f"(process {launch.process.pid}, log {launch.log})"))


def _launched(response: HTMLResponse) -> HTMLResponse:
    response.headers["HX-Trigger"] = "launched"  # the list of launches refreshes at once
    return response


def stop_instance(store: object, instance_id: int, heartbeat_timeout: float) -> str:
    """Stop one running instance: a stop request its process honours at the
    next episode end; an instance whose process is already gone is marked
    interrupted at once. Returns what was done.

    Raises:
        HTTPException: 404 no such instance, 409 it is not running.
    """

    inst = store.runs.instance(instance_id)  # type: ignore[attr-defined]
    if inst is None:
        raise HTTPException(404, f"no run instance {instance_id}")
    if inst.status != "running":
        raise HTTPException(409, f"instance {instance_id} is {inst.status}, not running")
    stale = inst.dead_reason(heartbeat_timeout)
    if stale is not None:
        store.runs.mark_interrupted(instance_id, f"stopped from the dashboard ({stale})")  # type: ignore[attr-defined]
        return f"instance {instance_id} was not alive ({stale}): marked interrupted"
    store.runs.request_stop(instance_id, "stopped from the dashboard")  # type: ignore[arg-type]
    view = store.views.run_view(inst.run_uid, instance_id)  # type: ignore[arg-type]
    note = f" {resume_note(view)}" if view is not None else ""
    return (f"stop requested: run {inst.run_uid} stops at its next episode end "
            f"and can be resumed with xrun experiment-start.{note}")


@router.post("/instances/{instance_id}/stop", response_class=HTMLResponse)
async def stop(request: Request, instance_id: Annotated[int, Path(ge=1, le=MAX_ID)]) -> HTMLResponse:
    await _fields(request, StopForm)
    text = stop_instance(store_of(request), instance_id,
                         request.app.state.settings.heartbeat_timeout)
    return _message(request, text)


def check_branch(store: object, node: str, overrides: list[str], *, episodes: int | None,
                 steps: int | None, phase: str | None) -> None:
    """Build the child's document in memory (nothing written) so a bad node,
    phase or override key is reported before a process starts.

    Raises:
        InputError: as :func:`xdoe.tree.branch` would (unknown key with close matches...).
        RunError: the parent saved no checkpoint.
    """
    from xdoe.tree import child_document, resolve_source

    source = resolve_source(store, node)  # type: ignore[arg-type]
    child_document(store, source, f"{source.run_uid}_b00", 1, overrides,  # type: ignore[arg-type]
                   episodes=episodes, steps=steps, phase=phase)


@router.post("/runs/{uid}/branch", response_class=HTMLResponse)
async def branch(request: Request, uid: str) -> HTMLResponse:
    """Branch a child session from run ``uid`` (its newest finished instance):
    form fields ``set`` (``KEY=VALUE`` lines), ``episodes`` or ``steps``,
    ``phase``; checked here, then run by ``xrun branch`` in the background."""
    from xdoe.errors import RunError

    fields = await _fields(request, BranchForm)
    overrides, episodes, steps = fields.overrides, fields.episodes, fields.steps
    phase = fields.phase.strip() or None
    try:
        check_branch(store_of(request), uid, overrides, episodes=episodes, steps=steps, phase=phase)
    except (InputError, RunError) as exc:
        return _message(request, str(exc), "error", 400)
    launch = request.app.state.launcher.branch(uid, overrides, episodes=episodes, steps=steps, phase=phase)
    changes = ", ".join(overrides) or "no override (continue)"
    return _launched(_message(request, f"branching {uid}: {changes} (process {launch.process.pid}, "
                                       f"log {launch.log}); the child appears in the tree"))

"""The dashboard's door: every request passes :func:`guard` before a route runs.

* **Host header** (DNS rebinding): it must be one the server was started
  for (:meth:`Settings.host_names`: ``127.0.0.1:PORT``, ``localhost:PORT``,
  the bound host), else 400.
* **Control characters** (NUL...) in the path or the query: 400.
* **Token on every read** (pages, fragments, JSON, pictures) unless the
  server is ``--read-only --public``; static files (the app's own scripts,
  styles and icon) need none. Given as ``?token=`` (a GET then sets an
  HttpOnly ``SameSite=Strict`` cookie named for the port), the cookie, or
  the ``X-Xdoe-Token`` header; refused with 403.
* **Actions** (``/actions/...``) additionally need a same-origin request:
  ``Origin``, or without it ``Referer``, must be this dashboard's own origin
  (``http://`` + the Host header); a page on another port of 127.0.0.1 is
  the same *site* (its requests carry a SameSite=Strict cookie) but another
  *origin*, and is refused (403). The body must be a form or JSON
  (``application/x-www-form-urlencoded`` or ``application/json``): a ``text/plain`` body, which a page may send
  anywhere without a preflight, is refused (415).
* **Headers on every response**: :data:`SECURITY_HEADERS` (a
  Content-Security-Policy allowing only this origin's scripts, no framing,
  no referrer to other origins, no MIME sniffing).
"""

from __future__ import annotations

import html
from typing import Any, Awaitable, Callable
from urllib.parse import unquote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from xdoe.dashboard._settings import TOKEN_HEADER, Settings

__all__ = ["SECURITY_HEADERS", "CSP", "guard", "given_token", "FORM_TYPES", "MAX_ID", "read_form"]

#: Scripts, styles, pictures and requests only from this origin; inline
#: styles (Plotly and htmx set element styles) but no inline script, no
#: eval; no plugins; no framing; forms post only here.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
#: Content types an action accepts (what forms, htmx and scripts send).
FORM_TYPES = ("application/x-www-form-urlencoded", "application/json")
#: Largest id of a store row (64-bit signed integers); larger ones are refused (404).
MAX_ID = 2**63 - 1
#: Paths readable without the token: the app's own static files, no data.
_OPEN = ("/static/", "/vendor/")


def given_token(request: Request) -> str | None:
    """The token a request carries: ``?token=``, the port's cookie or the header."""
    settings: Settings = request.app.state.settings
    return (request.query_params.get("token") or request.cookies.get(settings.cookie)
            or request.headers.get(TOKEN_HEADER))


def _refuse(request: Request, status: int, text: str) -> Response:
    if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
        body = (f"<!doctype html><meta charset=utf-8><title>xdoe dashboard: {status}</title>"
                f"<p>{html.escape(text)}</p>")
        return HTMLResponse(body, status_code=status)
    return JSONResponse({"detail": text}, status_code=status)


def _has_control(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def _same_origin(request: Request) -> str | None:
    """Why an action's origin is not this dashboard's, or ``None`` when it is."""
    own = "http://" + request.headers.get("host", "").lower()
    origin = request.headers.get("origin")
    if origin is not None:
        return None if origin.lower().rstrip("/") == own else f"a request from another origin ({origin})"
    referer = request.headers.get("referer")
    if referer:
        parts = urlsplit(referer)
        if f"{parts.scheme}://{parts.netloc}".lower() == own:
            return None
        return "a request from another origin (Referer)"
    return "a request without Origin or Referer header"


def _check(request: Request) -> Response | None:
    settings: Settings = request.app.state.settings
    host = request.headers.get("host", "").lower()
    if host not in settings.host_names():
        return _refuse(request, 400, f"unknown Host header {host!r}: this dashboard answers "
                                     f"{', '.join(sorted(settings.host_names()))}")
    raw = request.scope.get("raw_path") or request.url.path.encode()
    if _has_control(unquote(raw.decode("latin-1"))) or _has_control(unquote(request.url.query)):
        return _refuse(request, 400, "a control character in the path or query")
    path = request.url.path
    if path.startswith(_OPEN) or path == "/favicon.ico":
        return None
    if not (settings.public and settings.read_only) and not settings.token_ok(given_token(request)):
        return _refuse(request, 403, "this dashboard needs its token: open the URL printed when it "
                                     "started (http://...:PORT/?token=...)")
    if path.startswith("/actions/"):
        why = _same_origin(request)
        if why is not None:
            return _refuse(request, 403, f"refused: {why}; actions are taken from the dashboard's own pages")
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind not in FORM_TYPES:
            return _refuse(request, 415, f"refused: an action's body must be a form or JSON, not {kind or 'none'!r}")
    return None


async def guard(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """The middleware: :func:`_check`, then the route; the cookie for a
    valid ``?token=``; :data:`SECURITY_HEADERS` on every response."""
    settings: Settings = request.app.state.settings
    response = _check(request) or await call_next(request)
    given = request.query_params.get("token")
    if request.method == "GET" and given and response.status_code < 400 and settings.token_ok(given):
        response.set_cookie(settings.cookie, given, httponly=True, samesite="strict")
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


async def read_form(request: Request) -> dict[str, list[str]]:
    """An action's fields: a urlencoded form or a JSON object (strings, or
    lists of strings), as ``name -> [values]``.

    Raises:
        InputError: a JSON body that is not such an object.
    """
    import json
    from urllib.parse import parse_qs

    from xdoe.errors import InputError

    body = await request.body()
    if request.headers.get("content-type", "").split(";", 1)[0].strip().lower() != "application/json":
        return parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    try:
        data = json.loads(body or b"{}")
    except ValueError as exc:
        raise InputError(f"the JSON body cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise InputError("the JSON body must be an object of fields")
    out: dict[str, list[str]] = {}
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            raise InputError(f"field {key!r}: a string (or a list of strings)")
        out[str(key)] = [str(v) for v in values]
    return out

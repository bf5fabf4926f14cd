"""What one dashboard server is configured with, its token, the Host
headers it answers, and the rule for paths coming from the browser."""

from __future__ import annotations

import secrets
import socket
from dataclasses import dataclass, field
from pathlib import Path

from xdoe.errors import InputError

__all__ = ["Settings", "inside", "TOKEN_COOKIE", "TOKEN_HEADER", "WILDCARD_HOSTS"]

#: Cookie set when the page is opened with ``?token=...`` (HttpOnly, SameSite=Strict;
#: its name ends in the port, so dashboards on several ports keep their own).
TOKEN_COOKIE = "xdoe_token"
#: Addresses that mean "every interface" (the Host header then names the machine).
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
#: Header a script may send instead of the cookie.
TOKEN_HEADER = "X-Xdoe-Token"


@dataclass
class Settings:
    """One server's configuration.

    Attributes:
        store_url: the store's URL as given (``None``: ``$XRUN_STORE`` or the
            default); never shown, :attr:`xdoe.store.Store.url` is.
        runs_dir: the folder of run documents the start form offers
            (relative to ``workdir``); ``None``: ``workdir`` itself.
        read_only: no write action at all (buttons hidden, endpoints 403).
        public: with ``read_only``, pages are readable without the token
            (``xrun dashboard --read-only --public``); refused without it.
        token: the secret every page and action needs (random by default).
        host, port: where the server listens; the Host header of a request
            must be ``127.0.0.1:PORT``, ``localhost:PORT``, ``HOST:PORT`` or
            one of ``allowed_hosts`` (DNS rebinding).
        allowed_hosts: further ``name[:port]`` values the Host header may
            have (a name without port: on ``port``).
        workdir: the working directory: no path from the browser leaves it.
        results: the results root given to started campaigns.
        heartbeat_timeout: seconds without heartbeat after which a running
            instance counts as interrupted.
    """

    store_url: str | None = None
    runs_dir: Path | None = None
    read_only: bool = False
    public: bool = False
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    host: str = "127.0.0.1"
    port: int = 8050
    allowed_hosts: tuple[str, ...] = ()
    workdir: Path = field(default_factory=Path.cwd)
    results: Path = Path("_outputs/results")
    heartbeat_timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.public and not self.read_only:
            raise InputError("--public needs --read-only: actions always need the token")
        self.workdir = Path(self.workdir).resolve()
        if self.runs_dir is not None:
            self.runs_dir = inside(self.workdir, str(self.runs_dir))

    @property
    def launch_root(self) -> Path:
        """The folder every run file started from the browser must lie in
        (after resolving links): ``runs_dir``, else the working directory."""
        return self.runs_dir or self.workdir

    @property
    def cookie(self) -> str:
        """The token cookie's name on this port."""
        return f"{TOKEN_COOKIE}_{self.port}"

    def host_names(self) -> set[str]:
        """Every Host header value this server answers (lower case)."""
        names = {"127.0.0.1", "localhost", self.host.lower()}
        if ":" in self.host:  # IPv6: bracketed in a Host header
            names.add(f"[{self.host.strip('[]').lower()}]")
        if self.host in ("::1", "[::1]"):
            names.add("[::1]")
        if self.host in WILDCARD_HOSTS:  # every interface: the machine's own names
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        out = {f"{name}:{self.port}" for name in names if name and name not in WILDCARD_HOSTS}
        for extra in self.allowed_hosts:
            extra = extra.strip().lower()
            if extra:
                out.add(extra if extra.rsplit(":", 1)[-1].isdigit() and not extra.endswith("]")
                        else f"{extra}:{self.port}")
        return out

    def token_ok(self, given: str | None) -> bool:
        """Whether ``given`` is the token (constant-time comparison)."""
        return bool(given) and secrets.compare_digest(str(given).encode("utf-8", "replace"),
                                                      self.token.encode("utf-8"))


def inside(root: Path, relative: str) -> Path:
    """``relative`` resolved under ``root``; refuses anything that leaves it.

    Raises:
        InputError: the path is absolute elsewhere, climbs out with ``..``
            or through a symbolic link, or holds a control character (NUL...).
    """
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in relative):
        raise InputError(f"{relative!r}: a path with a control character")
    root = Path(root).resolve()
    candidate = Path(relative)
    try:
        path = (candidate if candidate.is_absolute() else root / candidate).resolve()
    except (OSError, RuntimeError) as exc:  # a name too long, a loop of links
        raise InputError(f"{relative[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    if path != root and root not in path.parents:
        raise InputError(f"{relative[:200]}: outside the working directory {root}")
    return path

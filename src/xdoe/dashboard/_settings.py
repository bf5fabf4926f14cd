"""What one dashboard server is configured with, its write token, and the
rule for paths coming from the browser."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from xdoe.errors import InputError

__all__ = ["Settings", "inside", "TOKEN_COOKIE", "TOKEN_HEADER"]

#: Cookie set when the page is opened with ``?token=...`` (HttpOnly, SameSite=Strict).
TOKEN_COOKIE = "xdoe_token"
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
        token: the secret every write action needs (random by default).
        workdir: the working directory: no path from the browser leaves it.
        results: the results root given to started campaigns.
        heartbeat_timeout: seconds without heartbeat after which a running
            instance counts as interrupted.
    """

    store_url: str | None = None
    runs_dir: Path | None = None
    read_only: bool = False
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    workdir: Path = field(default_factory=Path.cwd)
    results: Path = Path("_outputs/results")
    heartbeat_timeout: float = 120.0

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir).resolve()
        if self.runs_dir is not None:
            self.runs_dir = inside(self.workdir, str(self.runs_dir))

    def token_ok(self, given: str | None) -> bool:
        """Whether ``given`` is the token (constant-time comparison)."""
        return bool(given) and secrets.compare_digest(str(given), self.token)


def inside(root: Path, relative: str) -> Path:
    """``relative`` resolved under ``root``; refuses anything that leaves it.

    Raises:
        InputError: the path is absolute elsewhere, climbs out with ``..``
            or through a symbolic link.
    """
    root = Path(root).resolve()
    candidate = Path(relative)
    path = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if path != root and root not in path.parents:
        raise InputError(f"{relative}: outside the working directory {root}")
    return path

"""File helpers shared by the packages: the one ``file_sha256``."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["file_sha256"]

_CHUNK = 1 << 20


def file_sha256(path: Path | str) -> str:
    """sha256 (64 lowercase hex digits) of a file's bytes, read in 1 MiB chunks.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()

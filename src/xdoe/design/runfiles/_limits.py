"""Refusing run files a file system cannot hold: names longer than most
allow (``NAME_MAX``)."""

from __future__ import annotations

from typing import Any

__all__ = ["refuse_long_file_names", "MAX_FILE_NAME"]

#: longest file name most file systems allow (NAME_MAX, bytes)
MAX_FILE_NAME = 255


def refuse_long_file_names(runs: Any) -> None:
    """A :class:`DocumentError` at the uid when the run files' names would
    be longer than :data:`MAX_FILE_NAME` bytes."""
    size = len(runs.file_name(max(len(runs) - 1, 0)).encode("utf-8"))
    if size > MAX_FILE_NAME:
        exp = runs.experiment
        raise exp.error(f"the uid is too long for file names: run files would be named {size} bytes long (at most "
                        f"{MAX_FILE_NAME}); shorten it to {len(exp.safe_uid) - (size - MAX_FILE_NAME)} characters "
                        "or fewer", ("uid" if "uid" in exp.data else "id",))

"""File helpers shared by the packages: the one ``file_sha256``, and the one
way to write a file the user named (:func:`write_atomically`: never over an
existing file unless asked, never half-written), and the run files of a
folder as xrun sees them (:func:`folder_run_files`)."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
from pathlib import Path
from typing import Any, Callable

from xdoe.errors import InputError

__all__ = ["file_sha256", "folder_run_files", "manifest_design", "refuse_existing", "write_atomically", "xgen_folder"]

_CHUNK = 1 << 20
#: errno values of a file system without hard links (then: check, then rename)
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


def file_sha256(path: Path | str) -> str:
    """sha256 (64 lowercase hex digits) of a file's bytes, read in 1 MiB chunks.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    # os.read on a descriptor: half the CPU of open() and a buffered reader
    # for small files (10,000 run files: 0.12 s instead of 0.23 s)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def refuse_existing(path: Path | str, hint: str = "") -> None:
    """Raise :class:`InputError` ``PATH: exists; not overwritten (HINT)`` when
    ``path`` exists (a file, folder or dangling link)."""
    target = Path(path)
    if target.exists() or target.is_symlink():
        raise InputError(f"{target}: exists; not overwritten" + (f" ({hint})" if hint else ""))


def write_atomically(path: Path | str, write: Callable[[Path], None], *, overwrite: bool = False,
                     hint: str = "") -> Path:
    """Write the file ``path`` through ``write(tmp)``, which writes a temporary
    file beside it; then move that into place in one step (rename, or hard
    link when not overwriting). A failure (an exception, a full disk, Ctrl-C)
    leaves neither a half-written ``path`` nor the temporary file (a SIGKILL
    can leave the hidden ``.NAME.*.tmp``; it is never mistaken for ``path``).
    The file gets the mode ``open()`` would give it (0666 less the process's
    umask, e.g. 0644 under umask 022); missing parent folders are created.

    Args:
        path: the file to write.
        write: writes the whole content to the path it is given.
        overwrite: replace an existing ``path``; else an existing one is
            refused, also when it appears while ``write`` runs (the final step
            is a hard link, which never replaces a file).
        hint: what to do instead, appended to the refusal.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        InputError: ``path`` exists and ``overwrite`` is false (nothing written).
        OSError: the file cannot be written.
    """
    import tempfile  # on use: most processes never write such a file

    target = Path(path)
    if not overwrite:
        refuse_existing(target, hint)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        if overwrite:
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, hint)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _umask() -> int:
    """The process's umask, read without changing it (Linux reports it in
    ``/proc/self/status``; elsewhere set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _link_new(tmp: Path, target: Path, hint: str) -> None:
    """Give ``tmp``'s content the name ``target`` unless that exists (atomic
    where the file system has hard links)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        refuse_existing(target, hint)
        raise
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        refuse_existing(target, hint)
        os.replace(tmp, target)


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder", stat.S_IFLNK: "a symbolic link"}
#: largest manifest read (bytes): an xgen manifest lists its run files, about 200 bytes each
_MAX_MANIFEST = 256 << 20


def _read_manifest(path: Path) -> tuple[set[str] | None, str | None]:
    """The file names the xgen manifest ``path`` lists, or ``None`` and why
    it is none: not a regular file (its type is checked with ``os.lstat``
    before it is opened, so a FIFO never blocks), unreadable, or not JSON
    with ``xdoe_version`` and a ``files`` list."""
    import json

    try:
        st = os.lstat(path)
        kind = stat.S_IFMT(st.st_mode)
        if kind != stat.S_IFREG:
            return None, f"is {_KINDS.get(kind, 'not a regular file')}, not a regular file"
        if st.st_size > _MAX_MANIFEST:
            return None, f"is larger than {_MAX_MANIFEST >> 20} MiB"
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # replaced since: checked again
                return None, "is not a regular file"
            data = json.loads(fh.read(_MAX_MANIFEST + 1).decode("utf-8"))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    except (ValueError, RecursionError) as exc:
        return None, f"is not UTF-8 JSON ({str(exc).splitlines()[0][:100]})"
    if not (isinstance(data, dict) and "xdoe_version" in data and isinstance(data.get("files"), list)):
        return None, "is not an xgen manifest (JSON with xdoe_version and a files list)"
    try:
        return {str(entry["name"]) for entry in data["files"] if isinstance(entry, dict) and "name" in entry}, None
    except (KeyError, TypeError):  # pragma: no cover - guarded above
        return None, "is not an xgen manifest"


def _manifest_names(path: Path) -> set[str] | None:
    """The file names an xgen manifest lists; ``None`` when ``path`` is not
    a regular file holding one (JSON with ``xdoe_version`` and a ``files`` list)."""
    return _read_manifest(path)[0]


def _manifest_paths(root: Path) -> list[Path]:
    return [m for m in sorted(root.glob("manifest*.json"))
            if m.name == "manifest.json" or m.name.startswith("manifest-")]


def _manifests(root: Path) -> list[set[str]]:
    """The file lists of the xgen manifests in ``root`` (``manifest.json``, ``manifest-<uid>.json``)."""
    found = []
    for manifest in _manifest_paths(root):
        names = _manifest_names(manifest)
        if names is not None:
            found.append(names)
    return found


def xgen_folder(target: Path | str) -> bool:
    """Whether xgen may write into the existing folder ``target`` without
    ``--force-folder``: it is empty, or holds a manifest xgen wrote (a
    regular ``manifest.json`` or ``manifest-<uid>.json`` whose JSON has
    ``xdoe_version`` and a ``files`` list)."""
    root = Path(target)
    try:
        with os.scandir(root) as entries:
            if next(entries, None) is None:
                return True
    except OSError:
        return False
    return bool(_manifests(root))


def folder_run_files(folder: Path | str) -> tuple[list[Path], list[Path]]:
    """The run documents of a folder as xrun takes them, and those it leaves out.

    A folder with an xgen manifest (``manifest.json``, ``manifest-<uid>.json``)
    stands for the ``run-*.yaml`` files its manifests list: xgen writes a
    manifest last, so run files that an interrupted ``xgen generate`` (a
    SIGKILL while extending an output) added but no manifest names yet are
    never run (they are returned second, for a warning; the next ``xgen
    generate`` finishes the extension). A folder without a manifest (run
    files written by hand) stands for all its ``run-*.yaml``.

    A manifest that is not one (not a regular file — a FIFO is never
    opened —, not JSON, JSON without ``xdoe_version`` and ``files``) is
    refused rather than ignored: ignoring it would run every run file of
    the folder, those it leaves out too.

    Returns:
        ``(taken, unlisted)``, each sorted by name.

    Raises:
        InputError: a manifest of the folder cannot be read as one (one line naming it).
    """
    root = Path(folder)
    found = sorted(root.glob("run-*.yaml"))
    manifests = []
    for path in _manifest_paths(root):
        names, problem = _read_manifest(path)
        if names is None:
            raise InputError(f"{path}: {problem}; xrun takes the run files an xgen manifest lists, so it "
                             "cannot tell which to run (regenerate the folder with xgen generate, or "
                             "remove the file)")
        manifests.append(names)
    if not manifests:
        return found, []
    listed = set().union(*manifests)
    return [p for p in found if p.name in listed], [p for p in found if p.name not in listed]


@functools.lru_cache(maxsize=8)
def _manifest_json(path: str, mtime_ns: int, size: int) -> Any:
    """A manifest's JSON, read once per version of the file (a campaign of
    10,000 runs asks for its design once per run)."""
    import json

    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def manifest_design(folder: Path | str | None, experiment: str | None) -> dict | None:
    """The design of ``experiment`` as the manifest xgen wrote into ``folder``
    (``manifest-<uid>.json``, else ``manifest.json`` when it belongs to
    ``experiment`` or names none) records it: ``{"method", "coding",
    "factors", ...}`` -- a ``design:`` mapping's whole ``design.doe``
    (``info``, ``points``, ``diagnostics``) plus ``blocks``; a design of
    today's names its ``coding`` (a two-level factor's low level is the first
    the document lists). ``None`` without a readable manifest or coding
    (a manifest written before codings were recorded)."""
    import json

    if folder is None:
        return None
    candidates = []
    if experiment:
        safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in experiment)
        candidates.append(Path(folder) / f"manifest-{safe}.json")
    candidates.append(Path(folder) / "manifest.json")
    for path in candidates:
        try:
            if not path.is_file():
                continue
            st = path.stat()
            data = _manifest_json(str(path), st.st_mtime_ns, st.st_size)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        files = data.get("files")
        names = [f.get("name") if isinstance(f, dict) else f for f in files] if isinstance(files, list) else []
        if experiment and path.name == "manifest.json" and names and not any(
                str(name).startswith(f"run-{safe}-") for name in names):
            return None  # another experiment's manifest
        design = data.get("design") if isinstance(data.get("design"), dict) else {}
        doe = design.get("doe")
        if isinstance(doe, dict):
            return {"method": data.get("method"), **doe, "blocks": (doe.get("info") or {}).get("blocks")}
        if isinstance(design.get("coding"), dict):
            return {"method": data.get("method"), "coding": design["coding"], "factors": design.get("factors")}
        return None
    return None


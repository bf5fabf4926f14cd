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
from typing import Callable, Iterable

from xdoe.errors import InputError, OutputError, OutputPathError

__all__ = ["OutputError", "OutputPathError", "changed_since_written", "file_sha256", "folder_run_files", "manifest_design", "output_error",
           "refuse_existing", "write_atomically", "xgen_folder"]

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


#: causes in the user's hands: the name or the place (exit 2); any other errno is I/O (exit 1)
_NAME_ERRNOS = {errno.EEXIST, errno.ENOTDIR, errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENAMETOOLONG,
                errno.EISDIR, errno.ENOTEMPTY, errno.ELOOP, errno.EINVAL, errno.EXDEV, errno.ENXIO, errno.ENODEV}
_NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}


def output_error(target: Path | str, exc: OSError) -> OutputError | OutputPathError:
    """One line for an ``OSError`` while writing the file ``target``:
    :class:`OutputPathError` (exit 2) for a cause in the user's hands,
    :class:`OutputError` (exit 1) for I/O (a full disk...)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) not in (str(target), "") and \
        not Path(str(exc.filename)).name.startswith(f".{Path(target).name}.") else ""
    if exc.errno == errno.ENAMETOOLONG:
        reason += " (choose a shorter -o)"
    elif exc.errno in _NO_SPACE:
        reason += "; nothing was written (free space there, or choose another -o)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason += " (choose a writable place for -o)"
    cls = OutputPathError if exc.errno in _NAME_ERRNOS else OutputError
    out = cls(f"cannot write {target}: {reason}{where}")
    out.errno, out.strerror, out.filename = exc.errno, exc.strerror, exc.filename
    return out


def refuse_existing(path: Path | str, hint: str = "") -> None:
    """Raise :class:`InputError` ``PATH: exists; not overwritten (HINT)`` when
    ``path`` exists (a file, folder or dangling link); a name that cannot be
    looked up (too long, a loop of links) is :class:`OutputPathError`."""
    target = Path(path)
    try:
        os.lstat(target)
        found = True
    except FileNotFoundError:
        found = False  # a missing folder is created when the file is written
    except OSError as exc:  # too long, a loop of links, a file where a folder should be
        raise output_error(target, exc) from None
    if found:
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
        OutputPathError: the name or place cannot be written (too long, a
            folder, read-only...: exit 2), one line; nothing left behind
            (the folders it created are removed again).
        OutputError: an I/O failure (a full disk: exit 1), one line; both
            are ``OSError`` too.
    """
    import tempfile  # on use: most processes never write such a file

    target = Path(path)
    if not overwrite:
        refuse_existing(target, hint)
    created: list[Path] = []
    tmp: Path | None = None
    try:
        if os.path.isdir(target):
            raise IsADirectoryError(errno.EISDIR, "Is a directory (give a file name)")
        created = _make_parents(target.parent)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        if overwrite:
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, hint)
    except OSError as exc:
        _cleanup(tmp, created)
        if isinstance(exc, (OutputError, OutputPathError)):
            raise
        raise output_error(target, exc) from None
    except BaseException:
        _cleanup(tmp, created)
        raise
    if tmp is not None:
        tmp.unlink(missing_ok=True)
    return target


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the ones created,
    deepest first (removed again when the write fails)."""
    missing = []
    at = folder
    while not os.path.isdir(at) and at != at.parent:
        missing.append(at)
        at = at.parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
    return missing


def _cleanup(tmp: Path | None, created: list[Path]) -> None:
    """Remove the temporary file and the folders this write created (nothing left behind)."""
    try:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    except OSError:
        pass
    for folder in created:
        try:
            os.rmdir(folder)
        except OSError:
            break


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
    it is none (:func:`_load_manifest`)."""
    data, why = _load_manifest(path)
    if data is None:
        return None, why
    return {str(entry["name"]) for entry in data["files"] if isinstance(entry, dict) and "name" in entry}, None


def _load_manifest(path: Path) -> tuple[dict | None, str | None]:
    """The JSON of the xgen manifest ``path``, or ``None`` and why it is
    none: not a regular file (its type is checked with ``os.lstat`` before
    it is opened, so a FIFO never blocks), unreadable, or not JSON with
    ``xdoe_version`` and a ``files`` list. Read once per version of the file
    (its size and mtime): a campaign of 10,000 runs asks for its design once
    per run (:func:`manifest_design`)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    return _load_manifest_version(str(path), st.st_mtime_ns, st.st_size, st.st_mode)


@functools.lru_cache(maxsize=8)
def _load_manifest_version(path: str, mtime_ns: int, size: int, mode: int) -> tuple[dict | None, str | None]:
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
    return data, None


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


def changed_since_written(paths: Iterable[Path | str]) -> dict[str, str]:
    """Of the run documents ``paths``, those that may not run as they are:
    the xgen manifest of their folder lists them with another sha256 than
    their bytes have (edited by hand since ``xgen generate`` wrote them).
    Such a file's ``design_point`` still names the levels xgen gave it, and
    every analysis would label its results with them although the run may
    no longer use them (a wrong answer, issue 33's "nothing silent").
    Returns ``{path as given: why}``; a file as written, or that no readable
    manifest of its folder lists, is not in it. Each folder's manifests are
    read once (a campaign of 10,000 files: one pass, not one per file)."""
    indexes: dict[Path, dict[str, tuple[str, str]]] = {}
    out = {}
    for path in paths:
        file = Path(path)
        index = indexes.get(file.parent)
        if index is None:
            index = indexes[file.parent] = _manifest_hashes(file.parent)
        listed = index.get(file.name)
        if listed is None or file_sha256(file) == listed[0]:
            continue
        out[str(path)] = (f"changed since xgen wrote it (its sha256 is not the one {listed[1]} records): its "
                          "design_point still names the levels xgen gave it, so every analysis would label its "
                          "results with them; write the change into the experiment document and run xgen generate "
                          "--force, or run a copy outside this folder without design_point")
    return out


def _manifest_hashes(folder: Path) -> dict[str, tuple[str, str]]:
    """``name -> (sha256, manifest name)`` of every run file the xgen
    manifests of ``folder`` list (the first manifest, in name order, that
    lists a name wins)."""
    out: dict[str, tuple[str, str]] = {}
    for manifest in _manifest_paths(folder):
        data, _why = _load_manifest(manifest)
        if data is None:
            continue
        for entry in data["files"]:
            if isinstance(entry, dict):
                name, sha = entry.get("name"), entry.get("sha256")
                if isinstance(name, str) and isinstance(sha, str):
                    out.setdefault(name, (sha, manifest.name))
    return out


def manifest_design(folder: Path | str | None, experiment: str | None) -> dict | None:
    """The design of ``experiment`` as the manifest xgen wrote into ``folder``
    (``manifest-<uid>.json``, else ``manifest.json`` when it belongs to
    ``experiment`` or names none) records it: ``{"method", "coding",
    "factors", ...}`` -- a ``design:`` mapping's whole ``design.doe``
    (``info``, ``points``, ``diagnostics``) plus ``blocks``; a design of
    today's names its ``coding`` (a two-level factor's low level is the first
    the document lists). ``None`` without a readable manifest or coding
    (a manifest written before codings were recorded)."""
    if folder is None:
        return None
    candidates = []
    if experiment:
        from xdoe.documents import safe_uid

        safe = safe_uid(experiment)  # the name xgen gives the experiment's files (OutputLayout)
        candidates.append(Path(folder) / f"manifest-{safe}.json")
    candidates.append(Path(folder) / "manifest.json")
    for path in candidates:
        if not os.path.lexists(path):
            continue
        data, _why = _load_manifest(path)
        if data is None:
            return None
        names = [f.get("name") if isinstance(f, dict) else f for f in data["files"]]
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


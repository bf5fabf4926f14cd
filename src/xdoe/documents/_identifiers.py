"""The names a document gives that end up in file names, store keys, CSV
exports and terminal output, and the rules each follows. One set of rules
for ``xgen check``, ``xgen generate`` and ``xrun experiment-check``.

* a **run uid** (``uid`` of a run document; the store's key) and an
  **experiment uid** (``uid`` or arsenAI's ``id`` of an experiment document;
  ``experiment_uid`` of a run document) are read as written, like palaestrAI
  and arsenAI read them: printable text (spaces and non-ASCII letters
  included, e.g. ``Minimal Powergrid Run``), no ``/``, not ``.`` or ``..``,
  not blank, at most :data:`MAX_RUN_UID` (run) or :data:`MAX_EXPERIMENT_UID`
  (experiment) characters. Not printable are control characters (newline,
  NUL, BEL, ESC...), the line and paragraph separators U+2028/U+2029 and
  format characters such as U+202E;
* an **agent name**, **phase name** or **environment uid**: printable text,
  no ``/`` or ``\\``, not ``.`` or ``..``, at most 64 characters.

Where a uid names a file or a folder (run files, results folders) it goes
through :func:`uid_file_name` (run uids) or :func:`experiment_file_name`
(experiment uids): a uid of the old, file-safe alphabet
(:data:`UID_ALPHABET`; an experiment uid's spaces written ``_``) names its
files as it always did; any other uid names them by a slug and a short hash
of the uid (``Minimal_Powergrid_Run-3f1c0a9b2e``), stable across versions.

So a uid cannot hide a terminal escape or a right-to-left override and
cannot name a file outside its folder.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

__all__ = [
    "EXPERIMENT_UID_ALPHABET", "MAX_EXPERIMENT_UID", "MAX_NAME", "MAX_RUN_UID", "UID_ALPHABET",
    "experiment_file_name", "experiment_uid_problem", "name_problem", "run_uid_problem", "safe_uid", "uid_file_name",
]

#: longest run uid (characters)
MAX_RUN_UID = 128
#: longest experiment uid (characters): run uids add ``-NNNN``
MAX_EXPERIMENT_UID = 64
#: longest agent name, phase name or environment uid (characters)
MAX_NAME = 64
#: the file-safe run uid alphabet (a regular expression): a run uid of it names its files as written
UID_ALPHABET = rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_RUN_UID - 1}}}"
#: the file-safe experiment uid alphabet (a regular expression): a space is written ``_`` in file names
EXPERIMENT_UID_ALPHABET = rf"[A-Za-z0-9]([A-Za-z0-9._ -]{{0,{MAX_EXPERIMENT_UID - 2}}}[A-Za-z0-9._-])?"

_UID = re.compile(UID_ALPHABET + r"\Z")
_EXPERIMENT_UID = re.compile(EXPERIMENT_UID_ALPHABET + r"\Z")
#: characters of a slug kept as they are; runs of others become ``_``
_NOT_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
#: longest slug before the hash (characters)
_SLUG_LENGTH = 48
#: hexadecimal digits of the hash after the slug
_HASH_LENGTH = 10


def _shown(char: str) -> str:
    """A character as the error shows it: itself when printable, else its code (``U+202E``)."""
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


def _uid_problem(value: Any, what: str, limit: int) -> str | None:
    if not isinstance(value, str):
        return f"expected a {what} (text), got {type(value).__name__}"
    rule = f"{what}s are printable text without '/', at most {limit} characters"
    if not value.strip():
        return f"the {what} is empty; {rule}"
    if len(value) > limit:
        return f"the {what} of {len(value)} characters is too long for file names and store keys; {rule}"
    bad = next((c for c in value if not c.isprintable() or c == "/"), None)
    if bad is not None:
        return f"the {what} must not contain {_shown(bad)}; {rule}"
    if value in (".", ".."):
        return f"the {what} must not be {value!r} (it names files); {rule}"
    return None


def run_uid_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a run uid, or ``None``."""
    return _uid_problem(value, "run uid", MAX_RUN_UID)


def experiment_uid_problem(value: Any) -> str | None:
    """Why ``value`` cannot be an experiment uid, or ``None``."""
    return _uid_problem(value, "experiment uid", MAX_EXPERIMENT_UID)


def _slug_and_hash(uid: str) -> str:
    """``<slug>-<hash>``: the uid's letters in ASCII (accents dropped), runs of
    other characters as ``_``, at most :data:`_SLUG_LENGTH` characters, then the
    first :data:`_HASH_LENGTH` hex digits of the SHA-256 of the uid's UTF-8."""
    ascii_text = unicodedata.normalize("NFKD", uid).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"\.{2,}", ".", _NOT_SLUG.sub("_", ascii_text)).strip("._-")[:_SLUG_LENGTH].strip("._-")
    digest = hashlib.sha256(uid.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]
    return f"{slug or 'uid'}-{digest}"


def uid_file_name(uid: str) -> str:
    """The name a run uid gives its files and folders: the uid itself when it
    is of :data:`UID_ALPHABET` (no ``..``), else a slug and a short hash
    (:func:`_slug_and_hash`); always one safe path component."""
    uid = str(uid)
    if _UID.match(uid) and ".." not in uid:
        return uid
    return _slug_and_hash(uid)


def experiment_file_name(uid: str) -> str:
    """The name an experiment uid gives its run files and run uids: of
    :data:`EXPERIMENT_UID_ALPHABET` (no ``..``), the uid with every space
    written ``_`` (``Dummy Experiment`` -> ``Dummy_Experiment``); else a slug
    and a short hash (:func:`_slug_and_hash`)."""
    uid = str(uid)
    if _EXPERIMENT_UID.match(uid) and ".." not in uid:
        return uid.replace(" ", "_")
    return _slug_and_hash(uid)


def name_problem(value: Any, what: str) -> str | None:
    """Why ``value`` cannot be an agent name, phase name or environment uid
    (``what`` says which), or ``None``."""
    if not isinstance(value, str):
        return None  # the document model reports the type
    if len(value) > MAX_NAME:
        return f"the {what} of {len(value)} characters is too long for file names (at most {MAX_NAME})"
    bad = next((c for c in value if not c.isprintable() or c in "/\\"), None)
    if bad is not None:
        return f"the {what} must not contain {_shown(bad)} (printable text without / or \\)"
    if not value.strip():
        return f"the {what} must not be empty" + (f" ({value!r})" if value else "")
    if value.strip() in (".", ".."):
        return f"the {what} must not be {value!r}"
    return None


def safe_uid(uid: str) -> str:
    """The name an experiment uid gives its run files and run uids
    (:func:`experiment_file_name`): a uid of the file-safe alphabet with
    spaces written ``_``, any other a slug and a short hash. Light to import
    (no document model): the manifest reader of every run uses it."""
    return experiment_file_name(uid)

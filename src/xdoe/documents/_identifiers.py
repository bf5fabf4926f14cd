"""The names a document gives that end up in file names, store keys, CSV
exports and terminal output, and the alphabet each may use. One set of rules
for ``xgen check``, ``xgen generate`` and ``xrun experiment-check``.

* a **run uid** (``uid`` of a run document; the run file's name and the
  store's key): :data:`UID_ALPHABET`, ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}``:
  letters, digits, ``.``, ``_``, ``-``, starting with a letter or digit, no
  ``..``, at most 128 characters;
* an **experiment uid** (``uid`` or arsenAI's ``id`` of an experiment
  document; ``experiment_uid`` of a run document): the same alphabet plus the
  space (arsenAI ids such as ``Dummy Experiment``), at most 64 characters;
  run uids write a space as ``_`` (``Dummy_Experiment-0000``);
* an **agent name**, **phase name** or **environment uid**: printable text
  (no control characters such as newline, BEL or ESC, no line or paragraph
  separator U+2028/U+2029, no format character such as U+202E), no ``/`` or
  ``\\``, not ``.`` or ``..``, at most 64 characters.

So a uid cannot hide a terminal escape or a right-to-left override, cannot
name a file outside its folder, and two different uids never give the same
run uids by a character being replaced (only a space and ``_`` share one).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "EXPERIMENT_UID_ALPHABET", "MAX_EXPERIMENT_UID", "MAX_NAME", "MAX_RUN_UID", "UID_ALPHABET",
    "experiment_uid_problem", "name_problem", "run_uid_problem",
]

#: longest run uid (characters)
MAX_RUN_UID = 128
#: longest experiment uid (characters): run uids add ``-NNNN``
MAX_EXPERIMENT_UID = 64
#: longest agent name, phase name or environment uid (characters)
MAX_NAME = 64
#: the run uid alphabet (a regular expression)
UID_ALPHABET = rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_RUN_UID - 1}}}"
#: the experiment uid alphabet (a regular expression): a space is allowed
EXPERIMENT_UID_ALPHABET = rf"[A-Za-z0-9]([A-Za-z0-9._ -]{{0,{MAX_EXPERIMENT_UID - 2}}}[A-Za-z0-9._-])?"

_UID = re.compile(UID_ALPHABET + r"\Z")
_EXPERIMENT_UID = re.compile(EXPERIMENT_UID_ALPHABET + r"\Z")
_UID_CHAR = re.compile(r"[A-Za-z0-9._-]")


def _shown(char: str) -> str:
    """A character as the error shows it: itself when printable, else its code (``U+202E``)."""
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


def _uid_problem(value: Any, what: str, pattern: re.Pattern[str], limit: int, space: bool) -> str | None:
    if not isinstance(value, str):
        return f"expected a {what} (text), got {type(value).__name__}"
    rule = (f"{what}s use letters A-Z a-z, digits and . _ -{' and spaces' if space else ''}, "
            f"starting with a letter or digit, at most {limit} characters")
    if pattern.match(value) and ".." not in value:
        return None
    if not value:
        return f"the {what} is empty; {rule}"
    if len(value) > limit:
        return f"the {what} of {len(value)} characters is too long for file names and store keys; {rule}"
    bad = next((c for c in value if not (_UID_CHAR.match(c) or (space and c == " "))), None)
    if bad is not None:
        return f"the {what} must not contain {_shown(bad)}; {rule}"
    if ".." in value:
        return f"the {what} must not contain '..' (it names files), got {value!r}"
    return f"the {what} {value!r} must start with a letter or digit; {rule}"


def run_uid_problem(value: Any) -> str | None:
    """Why ``value`` is not a valid run uid (:data:`UID_ALPHABET`), or ``None``."""
    return _uid_problem(value, "run uid", _UID, MAX_RUN_UID, space=False)


def experiment_uid_problem(value: Any) -> str | None:
    """Why ``value`` is not a valid experiment uid
    (:data:`EXPERIMENT_UID_ALPHABET`), or ``None``."""
    return _uid_problem(value, "experiment uid", _EXPERIMENT_UID, MAX_EXPERIMENT_UID, space=True)


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

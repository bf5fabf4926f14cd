"""The error hierarchy of xdoe.

Every error xdoe raises on purpose derives from :class:`XdoeError` and is
defined here (the packages that raise one re-export it under their own name,
e.g. ``xdoe.environment.EnvironmentCheckError``). The command line turns
:class:`DocumentError` (and any other :class:`InputError`) into exit code 2
and any other :class:`XdoeError` into exit code 1, each with a one-line
message and no traceback. The one exception that is not an
:class:`XdoeError` is :class:`RunTimeout`, a ``BaseException`` on purpose.
"""

from __future__ import annotations

import errno
from typing import Sequence

__all__ = [
    "NoStoreError",
    "XdoeError",
    "InputError",
    "AmbiguousExperimentError",
    "DocumentError",
    "DesignError",
    "IncompleteDesignError",
    "ComponentError",
    "ComponentImportError",
    "ComponentRaisedError",
    "RunError",
    "RunStopped",
    "RunPruned",
    "StoreError",
    "StoreLostError",
    "DiskFullError",
    "OutputError",
    "OutputPathError",
    "no_space_cause",
    "format_key_path",
    "parse_key_path",
    "one_line",
    "printable",
    "cap_traceback",
    "MAX_ERROR_CHARS",
    "MAX_TRACEBACK_CHARS",
    "NonFiniteWarning",
    "DesignTooLarge",
    "PlaceholderError",
    "ReferenceSyntaxError",
    "StoreStepsError",
    "EnvironmentCheckError",
    "SlurmError",
    "RunTimeout",
    "ObservationSpaceWarning",
    "RunWarning",
    "TrackingWarning",
]


def format_key_path(path: Sequence[str | int]) -> str:
    """Render a key path like ``("schedule", 0, "training", "agents")`` as
    ``schedule[0].training.agents``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class XdoeError(Exception):
    """Base class of every error xdoe raises on purpose."""


class InputError(XdoeError):
    """The user's input cannot be used (the CLI exits with code 2)."""


class AmbiguousExperimentError(InputError):
    """A store or a frame holds runs of several experiments and none was
    chosen: their results are never pooled into one answer (the command
    line refuses the same case, exit 2, ``choose one with -e UID``).

    Attributes:
        experiments: the experiments' uids, sorted.
        where: what holds them (``store sqlite:///...``, ``the frame``).
    """

    #: uids named in the message (all of them stay in :attr:`experiments`)
    SHOWN = 20

    def __init__(self, experiments: Sequence[str], where: str = "the store", fix: str | None = None) -> None:
        self.experiments = sorted(str(e) for e in experiments)
        self.where = where
        self.fix = fix
        shown = ", ".join(self.experiments[: self.SHOWN])
        if len(self.experiments) > self.SHOWN:
            shown += f" and {len(self.experiments) - self.SHOWN} more"
        way_out = fix or (f'choose one with experiment="UID" (e.g. experiment="{self.experiments[0]}"; '
                          f'on the command line: -e UID)' if self.experiments else "choose one")
        super().__init__(f"{where} holds {len(self.experiments)} experiments: {shown}; {way_out}")

    def __reduce__(self) -> tuple[type, tuple[list[str], str, str | None]]:  # picklable across processes
        return (AmbiguousExperimentError, (self.experiments, self.where, self.fix))


class DocumentError(InputError):
    """An experiment or run document is invalid.

    Attributes:
        file: the document's path (or ``"<string>"``).
        line: 1-based line of the offending key, or ``None`` when unknown.
        key_path: the keys from the document root to the offending value.
        message: what was expected.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key_path: Sequence[str | int] = (),
    ) -> None:
        self.message = message
        self.file = file or "<string>"
        self.line = line
        self.key_path = tuple(key_path)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        key = format_key_path(self.key_path)
        text = f"{where}: {key}: {self.message}" if key else f"{where}: {self.message}"
        return printable(text)


class DesignError(InputError):
    """A design cannot be built from the given factors and settings."""


class IncompleteDesignError(InputError):
    """The runs with a finished score do not hold the two-level design's
    model: a factor's main effect has no contrast of its own (a corner whose
    every run failed, runs not yet run); :func:`~xdoe.analysis.analyze`
    answers such runs by the type II ANOVA and says why."""


class DesignTooLarge(DesignError):
    """A design would have more runs than allowed (raised by
    :func:`xdoe.design._limits.check_design_size`; ``xgen`` reports it as a
    located :class:`DocumentError`). ``cause`` is ``"points"`` (the design
    points alone exceed the limit) or ``"repetitions"``."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


class PlaceholderError(InputError, ValueError):
    """A malformed ``${...}`` placeholder (``${`` without ``}``, an empty
    name) or a list or mapping interpolated into text
    (:mod:`xdoe.documents`; also a ``ValueError``)."""


class ReferenceSyntaxError(InputError, ValueError):
    """A ``$req(...)`` reference does not follow the grammar
    (:func:`xdoe.documents.parse_reference`; also a ``ValueError``).

    Attributes:
        text: the reference text.
        column: 0-based position in ``text`` where reading failed.
    """

    def __init__(self, message: str, text: str, column: int) -> None:
        self.text = text
        self.column = column
        super().__init__(message)


class StoreStepsError(InputError, ValueError):
    """A ``store_steps`` value is not ``none``, ``all`` or ``every:N`` (N >= 1)
    (:class:`xdoe.store.StepPolicy`; also a ``ValueError``)."""


class EnvironmentCheckError(XdoeError, AssertionError):
    """An environment breaks the plugin contract (the message says where;
    :func:`xdoe.environment.check_environment`; also an ``AssertionError``)."""


class ComponentError(InputError):
    """A ``module:Class`` component cannot be imported or constructed.

    The message names the document key, the module and attribute tried and
    the underlying error.
    """


class ComponentImportError(ComponentError):
    """A component's module cannot be imported (here: it may import on the
    node that runs it, so ``xrun experiment-start`` leaves it to the run)."""


class ComponentRaisedError(ComponentError):
    """A component's constructor raised (plugin code: a run failure when it
    happens while the run starts)."""


class RunError(XdoeError):
    """Executing a run failed (a component raised, an action left its space...)."""


class RunStopped(XdoeError):
    """A stop was requested for the running instance (:meth:`store.runs.request_stop <xdoe.store.runs._runs.Runs.request_stop>`):
    the run ends ``interrupted``, resumable, and the campaign goes on."""


class RunPruned(XdoeError):
    """The run's ``run_config.prune`` rule ended it at a rung
    (:mod:`xdoe.execution._pruning`): it is recorded ``pruned``, done (never
    run again), with every episode it ran."""


class SlurmError(XdoeError):
    """A SLURM command is missing, failed or timed out (the CLI exits with code 1)."""


class RunTimeout(BaseException):
    """Raised in the run's thread when a time limit is passed
    (:mod:`xdoe.execution._watchdog`). A ``BaseException``, not an
    :class:`XdoeError`, on purpose: plugin code's ``except Exception`` does not
    swallow it; the executor records the run as failed with a timeout."""


class StoreError(XdoeError):
    """The results store cannot be opened or written."""


class StoreLostError(StoreError):
    """The connection to the store was lost, or its server cannot be reached
    (stopped, restarting, the network gone; a SQLite file that cannot be
    opened any more). A store opened with ``wait`` seconds
    (:class:`xdoe.store.Store`) waits that long for it to come back, with
    back-off, before it raises this; a campaign then stops with one line
    (its finished runs are kept, the runs in flight resume next time).

    Attributes:
        waited: the store was waited for already (in this process).
    """

    waited = False


class NoStoreError(InputError):
    """A store opened for reading (``Store(url, create=False)``) does not
    exist: no SQLite file, or no xdoe tables in the database."""


class DiskFullError(StoreError):
    """No space is left on the device of a results folder or of the store:
    every later run would fail the same way, so a campaign stops (the run
    that hit it is resumable, finished runs are kept).

    Attributes:
        folder: the folder that could not be written (for a database server:
            its masked URL).
        detail: the operating system's or database's own words.
        store: the store's own device is full (nothing more can be recorded).
    """

    def __init__(self, folder: str, detail: str = "", store: bool = False) -> None:
        self.folder, self.detail, self.store = str(folder), detail, store
        what = f"the store in {self.folder}" if store else self.folder
        why = f" ({detail})" if detail else ""
        super().__init__(f"no space left on device: cannot write {what}{why}; free space there "
                         f"and start again (finished runs are kept, this run resumes)")

    def __reduce__(self) -> tuple[type, tuple[str, str, bool]]:  # picklable across processes
        return (DiskFullError, (self.folder, self.detail, self.store))


#: ``errno`` values meaning "the device is full" (ENOSPC, and EDQUOT: over quota).
_NO_SPACE = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def no_space_cause(error: BaseException | None) -> BaseException | None:
    """The :class:`DiskFullError`, or the ``OSError`` with ``errno`` ENOSPC or
    EDQUOT, that ``error`` is or was raised from (following ``__cause__`` and
    ``__context__``); ``None`` when the device was not full."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, DiskFullError) or (isinstance(error, OSError) and error.errno in _NO_SPACE):
            return error
        error = error.__cause__ or error.__context__
    return None


#: longest error line kept (printed and stored); a longer one is cut with a note
MAX_ERROR_CHARS = 2000
#: longest traceback kept in the store; a longer one keeps its head and tail with a note
MAX_TRACEBACK_CHARS = 64 * 1024


def printable(text: str) -> str:
    """``text`` with every character that is not printable (control
    characters such as newline, BEL, ESC, line separators, format characters
    such as U+202E) written as an escape (``\\n``, ``\\x1b``, ``\\u202e``), so
    an error line stays one line and cannot drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def one_line(error: BaseException | str | None, limit: int | None = MAX_ERROR_CHARS) -> str | None:
    """An error as one line: whitespace runs collapsed to single spaces,
    other non-printable characters escaped (:func:`printable`); an exception
    that is not an :class:`XdoeError` prefixed with its type name
    (``ValueError: ...``); cut to ``limit`` characters (default
    :data:`MAX_ERROR_CHARS`; ``None``: no limit) with a note of the full
    length. ``None`` stays ``None``."""
    if error is None:
        return None
    text = str(error)
    full = len(text)
    if limit is not None and full > 4 * limit:  # never split a 20 MB message into words
        text = text[: 4 * limit]
    line = printable(" ".join(text.split()))
    if isinstance(error, BaseException) and not isinstance(error, XdoeError):
        line = f"{type(error).__name__}: {line}"
    if limit is not None and (len(line) > limit or full > 4 * limit):
        note = f"\u2026 [message of {full} characters cut to {limit}]"
        line = line[: max(limit - len(note), 0)] + note
    return line


def cap_traceback(text: str | None, limit: int = MAX_TRACEBACK_CHARS) -> str | None:
    """A traceback of at most about ``limit`` characters: a longer one keeps
    its first and last halves with a note of what was cut between them."""
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def parse_key_path(key: str) -> tuple[str | int, ...]:
    """The inverse of :func:`format_key_path`:
    ``schedule[0].training.agents[1].load`` -> ``("schedule", 0, "training", "agents", 1, "load")``."""
    out: list[str | int] = []
    for part in key.split("."):
        while "[" in part:
            head, _, rest = part.partition("[")
            if head:
                out.append(head)
            index, _, part = rest.partition("]")
            out.append(int(index))
        if part:
            out.append(part)
    return tuple(out)


class RunWarning(UserWarning):
    """Something a run reports and goes on with: noted once per run and
    cause in the run's report, so it is printed by ``xrun`` as ``run <uid>
    warning: ...``, kept in ``RunResult.warnings``, stored with the run
    instance and shown by ``xrun status``."""


class NonFiniteWarning(RunWarning):
    """An episode's reward, objective or wall time was NaN or infinite; it is
    recorded as missing (``NULL`` in the store, ``null`` in ``episodes.jsonl``)."""


class ObservationSpaceWarning(RunWarning):
    """An environment reported a sensor value outside the sensor's space
    (``phase_config.observation_check: warn``, the default); warned once per
    run and sensor, naming the sensor, the value and the space."""


class TrackingWarning(RunWarning):
    """Logging a run to TensorBoard or MLflow (``--log``, ``run_config.log``)
    failed; warned once per run and target, after which the run goes on
    without that target (the store keeps every episode)."""


class OutputError(XdoeError, OSError):
    """A file the user named (``-o``, :func:`xdoe._files.write_atomically`) cannot be written for a reason outside the
    name (a full disk, an I/O error): one line, exit 1. Still an
    ``OSError`` (``errno`` kept) for callers that catch those."""

    def __str__(self) -> str:  # the one line, not OSError's "[Errno N] ..."
        return str(self.args[0]) if self.args else ""


class OutputPathError(InputError, OSError):
    """A file the user named cannot be written because of its name or
    place (too long, a folder, a read-only or missing place, a loop of
    links): one line, exit 2. Still an ``OSError`` (``errno`` kept)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

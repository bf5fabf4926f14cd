"""Where runs are logged besides the store: ``KIND:WHERE`` (``xrun
experiment-start --log``, ``run_config: {log: [...]}``, ``xrun export --to``).

``tensorboard:DIR`` writes TensorBoard event files below ``DIR``;
``mlflow:URI`` writes to an MLflow tracking URI (``file:///abs/mlruns``, a
plain folder, ``sqlite:///mlflow.db`` or ``http://host:5000``). The one
grammar; :mod:`xdoe.tracking` writes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from xdoe.errors import InputError

__all__ = ["LOG_KINDS", "LogTarget", "parse_log_target", "log_targets", "check_log"]

#: the kinds of log target, each with the extra that writes it
LOG_KINDS = {"tensorboard": "tensorboard", "mlflow": "mlflow"}
_SHAPE = "tensorboard:DIR or mlflow:URI"


@dataclass(frozen=True)
class LogTarget:
    """One place runs are logged: ``kind`` (``tensorboard``, ``mlflow``) and
    ``where`` (a folder, or an MLflow tracking URI)."""

    kind: str
    where: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.where}"

    @property
    def extra(self) -> str:
        """The extra of the distribution that writes this kind (``pip install 'xdoe[EXTRA]'``)."""
        return LOG_KINDS[self.kind]

    def absolute(self) -> "LogTarget":
        """The same target with a relative folder made absolute (a run in
        another process or on another node writes where this one would)."""
        if self.kind == "tensorboard":
            return LogTarget(self.kind, os.path.abspath(self.where))
        if "://" not in self.where and not self.where.startswith("file:"):  # a plain folder: a file store
            return LogTarget(self.kind, os.path.abspath(self.where))
        return self


def parse_log_target(text: Any) -> LogTarget:
    """``tensorboard:DIR`` or ``mlflow:URI`` as a :class:`LogTarget`.

    Raises:
        InputError: another shape or kind, or nothing after the colon.
    """
    if isinstance(text, LogTarget):
        return text
    if not isinstance(text, str):
        raise InputError(f"a log target is a string {_SHAPE}, not {type(text).__name__}")
    kind, colon, where = text.partition(":")
    kind = kind.strip().lower()
    if not colon or kind not in LOG_KINDS:
        raise InputError(f"log target {text!r}: expected {_SHAPE}")
    if not where.strip():
        raise InputError(f"log target {text!r}: nothing after {kind + ':'!r} (expected {_SHAPE})")
    return LogTarget(kind, where.strip())


def log_targets(values: Any) -> tuple[LogTarget, ...]:
    """A string or a list of them (``run_config.log``) as targets, in order,
    each once.

    Raises:
        InputError: one of them is no log target.
    """
    if values is None:
        return ()
    items = [values] if isinstance(values, (str, LogTarget)) else values
    if not isinstance(items, (list, tuple)):
        raise InputError(f"log: expected a list of {_SHAPE}, not {type(values).__name__}")
    out: list[LogTarget] = []
    for item in items:
        target = parse_log_target(item)
        if target not in out:
            out.append(target)
    return tuple(out)


def check_log(value: Any) -> list[str] | None:
    """``run_config.log`` checked (a pydantic ``before`` validator): the
    targets as written, a single string as a list of one.

    Raises:
        ValueError: one of them is no log target (the document's error names it).
    """
    if value is None:
        return None
    try:
        log_targets(value)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return [value] if isinstance(value, str) else list(value)

"""Telling a real Ctrl-C from plugin code that raises ``KeyboardInterrupt``.

Python turns SIGINT into ``KeyboardInterrupt``, but any code can raise it
(or ``SystemExit``, through ``sys.exit()``). :func:`run <xdoe.execution.run>`
treats a real interrupt as "stop and keep the run resumable" and everything
else that is not an ``Exception`` as a failure of that run only. While a run
executes, :func:`watch_sigint` installs a SIGINT handler that notes the
signal before raising ``KeyboardInterrupt``, so the two can be told apart.

Only the main thread can install signal handlers; elsewhere (a run started
from a worker thread) every ``KeyboardInterrupt`` counts as real, as before.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

__all__ = ["SigintWatch", "watch_sigint", "plugin_exit", "sigint_as_ctrl_c"]


@dataclass
class SigintWatch:
    """``received``: a SIGINT arrived while watching; ``active``: the handler
    could be installed (main thread)."""

    received: bool = False
    active: bool = False

    def genuine(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a real interrupt (a ``KeyboardInterrupt`` from
        SIGINT, or any when SIGINT could not be watched)."""
        return isinstance(exc, KeyboardInterrupt) and (self.received or not self.active)


@contextmanager
def watch_sigint() -> Iterator[SigintWatch]:
    """While the block runs, SIGINT sets ``watch.received`` and raises
    ``KeyboardInterrupt`` (also in pool workers, which otherwise ignore
    SIGINT between runs); the previous handler is restored afterwards."""
    watch = SigintWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        watch.received = True
        raise KeyboardInterrupt

    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, on_sigint)
        watch.active = True
    except (ValueError, OSError):  # pragma: no cover - not the main interpreter
        pass
    try:
        yield watch
    finally:
        if watch.active:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def sigint_as_ctrl_c() -> Iterator[None]:
    """While the block runs, SIGINT raises ``KeyboardInterrupt`` even when
    this process inherited it ignored (``nohup xrun ... &`` from a
    non-interactive shell): a group SIGINT then stops the campaign like
    Ctrl-C instead of only the worker's run. Elsewhere than in the main
    thread, or when SIGINT is handled already, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def plugin_exit(exc: BaseException) -> str:
    """One line for a ``BaseException`` that is not an ``Exception`` and not a
    real interrupt: plugin code ended the run on its own."""
    if isinstance(exc, SystemExit):
        return f"plugin code called sys.exit({exc.code!r}); only this run fails"
    if isinstance(exc, KeyboardInterrupt):
        return "plugin code raised KeyboardInterrupt (no Ctrl-C was pressed); only this run fails"
    return f"plugin code raised {type(exc).__name__}: {exc}; only this run fails"

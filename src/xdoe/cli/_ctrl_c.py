"""Ctrl-C during ``xrun experiment-start`` (issue 33, item 9): the first
stops starting runs and lets the running ones record their interruption,
then the summary and ``resume with: xrun experiment-start ...`` (the same
arguments) are printed, exit 130; a second stops at once (:class:`CtrlC`)."""

from __future__ import annotations

import sys
from typing import Any

import click

__all__ = ["EXIT_INTERRUPTED", "CtrlC", "RememberArgs", "resume_line"]

#: ``xrun experiment-start``'s exit code after a Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130
_ARGS = "xdoe_xrun_args"


class RememberArgs(click.Command):
    """A command that keeps its arguments as given (``ctx.meta``), for the
    ``resume with: ...`` line after a Ctrl-C."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_ARGS] = list(args)
        return super().parse_args(ctx, args)


def resume_line(ctx: click.Context) -> str:
    import shlex

    return "resume with: " + shlex.join(["xrun", ctx.info_name or "experiment-start", *ctx.meta.get(_ARGS, [])])


class CtrlC:
    """SIGINT while a campaign runs (issue 33, item 9). The first: no new run
    starts (:func:`xdoe.campaign.request_stop`); the runs in flight go on to
    record their interruption (a terminal's Ctrl-C reaches the worker
    processes too) and the campaign returns. The second: stop at once
    (exit 130; the worker processes see ``xrun`` end and record their runs
    interrupted themselves)."""

    def __init__(self, display: Any, resume: str) -> None:
        self.display, self.resume, self.count = display, resume, 0
        self._previous: Any = None

    def __call__(self, signum: int, frame: Any) -> None:
        from xdoe.campaign import request_stop

        self.count += 1
        request_stop()
        if self.count == 1:
            self.display.message("interrupted: no new run starts; the running ones record their interruption "
                                 "(Ctrl-C again to stop at once)", error=True)  # said under -q too
            return
        import os

        try:
            sys.stdout.flush()
            sys.stderr.write(f"stopped at once\n{self.resume}\n")
            sys.stderr.flush()
        finally:
            os._exit(EXIT_INTERRUPTED)

    def __enter__(self) -> "CtrlC":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self)
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

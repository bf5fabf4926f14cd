"""Preloaded last by the forkserver of ``--jobs`` (see
:mod:`xdoe.campaign.backends._gc_paused`): freezes what the preload made
(``gc.freeze``: the workers forked from the forkserver never scan those
objects, nor copy their pages to do so) and turns the collector on again.

It also makes the forkserver's own exit immediate: when its last client
(``xrun``) exits, the forkserver ends with ``SystemExit`` and would then
tear down every module it preloaded (numpy, gymnasium, SQLAlchemy: ~0.03 s
of CPU, ~0.06 s of wall on a loaded machine), which a shell pipeline
(``xrun ... | tee``: the forkserver holds the same standard output) or a
benchmark waiting for every process waits for. It holds nothing to flush
or close, so its exit handler leaves at once (``os._exit``); in any other
process (the workers forked from it end with ``os._exit`` anyway; a process
plugin code forks from one and ends with ``sys.exit``) it does nothing."""

import atexit
import gc
import os

_FORKSERVER = os.getpid()


def _leave() -> None:
    if os.getpid() == _FORKSERVER:
        os._exit(0)


gc.freeze()
gc.enable()
atexit.register(_leave)

"""Preloaded last by the forkserver of ``--jobs`` (see
:mod:`xdoe.campaign.backends._gc_paused`): freezes what the preload made
(``gc.freeze``: the workers forked from the forkserver never scan those
objects, nor copy their pages to do so) and turns the collector on again."""

import gc

gc.freeze()
gc.enable()

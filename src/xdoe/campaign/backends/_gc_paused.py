"""Preloaded first by the forkserver of ``--jobs`` (:func:`xdoe.campaign.backends._warm.start_forkserver`):
turns the cyclic garbage collector off while the forkserver imports what the
runs need. Those imports make ~90,000 lasting objects and no garbage cycles;
the collections they would trigger cost ~10 % of the preload, which every
run of the campaign waits for. :mod:`xdoe.campaign.backends._gc_resumed`,
preloaded last, turns it on again."""

import gc

gc.disable()

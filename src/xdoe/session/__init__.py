"""A loop-agnostic training session: :class:`TrainingSession` records a
training loop that lives elsewhere (your own script, another framework) in
the xdoe store, with checkpoints, so ``xrun status``, ``xrun export`` and
``xrun tree`` see it (also importable as ``xdoe.TrainingSession``).

Modules: :mod:`~xdoe.session._session` (the session: registration, episodes,
steps, heartbeats, finish), :mod:`~xdoe.session._checkpoints` (budgets and
checkpoints, a mixin), :mod:`~xdoe.session._figures` (elapsed time, steps per
second, summaries, a mixin).
"""

from __future__ import annotations

from xdoe.session._session import TrainingSession

__all__ = ["TrainingSession"]

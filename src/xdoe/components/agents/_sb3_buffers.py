"""Stable-Baselines3's own buffers, drawing their samples from the brain's
generator instead of numpy's global one.

SB3's buffers draw from ``np.random``: ``RolloutBuffer.get`` its minibatch
permutation, ``ReplayBuffer.sample`` its indices. :func:`own` gives a buffer
SB3 built a class of this module, a subclass of SB3's own whose only change
is that these draws come from its attribute ``random``, the brain's
``np.random.RandomState`` (the same calls with the same arguments, so the
same numbers as SB3's with ``np.random`` in that state); everything else is
SB3's. Imported when an ``SB3Brain`` is set up
(it imports Stable-Baselines3).
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from stable_baselines3.common import buffers

__all__ = ["own"]


def _pickled(self: Any, protocol: Any) -> tuple[Any, ...]:
    """Pickles (``save_replay_buffer``) as SB3's own class without
    ``random`` (the brain stores its generator itself), so a saved buffer
    loads with Stable-Baselines3 alone."""
    state = {k: v for k, v in vars(self).items() if k != "random"}
    return object.__new__, (self.sb3_class,), state


def _rollout_get(self: Any, batch_size: int | None = None) -> Iterator[Any]:
    """SB3's ``RolloutBuffer.get`` / ``DictRolloutBuffer.get``: the buffer's
    ``buffer_size * n_envs`` transitions (flattened on the first call) in
    minibatches of ``batch_size`` (default all), in the order of a
    permutation drawn from ``self.random`` when the first minibatch is taken."""
    assert self.full, ""
    total = self.buffer_size * self.n_envs
    indices = self.random.permutation(total)
    if not self.generator_ready:
        for name in ("observations", "actions", "values", "log_probs", "advantages", "returns"):
            value = self.__dict__[name]
            if isinstance(value, dict):  # DictRolloutBuffer's observations, flattened key by key
                for key, array in value.items():
                    value[key] = self.swap_and_flatten(array)
            else:
                self.__dict__[name] = self.swap_and_flatten(value)
        self.generator_ready = True
    if batch_size is None:
        batch_size = total
    for start in range(0, total, batch_size):
        yield self._get_samples(indices[start:start + batch_size])


def _replay_sample(self: Any, batch_size: int, env: Any = None) -> Any:
    """SB3's ``ReplayBuffer.sample`` (``DictReplayBuffer``'s,
    ``NStepReplayBuffer``'s): ``batch_size`` indices drawn from
    ``self.random`` among the stored transitions (with
    ``optimize_memory_usage`` never the one at ``pos``), then SB3's
    ``_get_samples``, whose draw of a column per sample draws nothing with
    the one column the brain fills (``randint(0, 1)``).

    Raises:
        ValueError: the buffer has several columns (``n_envs > 1``).
    """
    if self.n_envs != 1:
        raise ValueError(f"{type(self).__name__} with n_envs={self.n_envs}: the brain fills one column")
    if self.optimize_memory_usage and self.full:
        batch_inds = (self.random.randint(1, self.buffer_size, size=batch_size) + self.pos) % self.buffer_size
    else:
        batch_inds = self.random.randint(0, self.buffer_size if self.full else self.pos, size=batch_size)
    return self._get_samples(batch_inds, env=env)


def _own_class(base: type, method: str, draws: Any) -> type:
    """A subclass of ``base`` adding no field (so a buffer SB3 built can take
    it), its ``method`` replaced by ``draws``."""
    return type(f"Own{base.__name__}", (base,), {
        "__module__": __name__, "__doc__": f"SB3's ``{base.__name__}``, its draws from ``random``.",
        "sb3_class": base, method: draws, "__reduce_ex__": _pickled})


#: SB3's buffer classes (exactly these: a subclass may draw in code of its own) and their own versions
_OWN = {base: _own_class(base, method, draws) for base, method, draws in (
    (buffers.RolloutBuffer, "get", _rollout_get), (buffers.DictRolloutBuffer, "get", _rollout_get),
    (buffers.ReplayBuffer, "sample", _replay_sample), (buffers.DictReplayBuffer, "sample", _replay_sample),
    *(((buffers.NStepReplayBuffer, "sample", _replay_sample),) if hasattr(buffers, "NStepReplayBuffer") else ()))}


def own(buffer: Any, random: np.random.RandomState, algorithm: str) -> Any:
    """``buffer`` (a buffer SB3 built, its data kept) with its draws from
    ``random``: its class becomes this module's subclass of its SB3 class.

    Args:
        buffer: an instance of SB3's ``RolloutBuffer``, ``DictRolloutBuffer``,
            ``ReplayBuffer``, ``DictReplayBuffer`` or ``NStepReplayBuffer``
            (or of the subclass this function gave it before).
        random: the generator it draws from hereafter.
        algorithm: named in the error.

    Returns:
        the same object.

    Raises:
        ValueError: another buffer class (a ``rollout_buffer_class`` or
            ``replay_buffer_class`` hyperparameter, ``HerReplayBuffer``, an
            algorithm's own buffer): its own code may draw from numpy's global
            generator, which the brain does not touch.
    """
    sb3_class = getattr(type(buffer), "sb3_class", type(buffer))
    cls = _OWN.get(sb3_class)
    if cls is None:
        known = ", ".join(c.__name__ for c in _OWN)
        raise ValueError(f"{algorithm} keeps its transitions in a {sb3_class.__name__}: SB3Brain draws the "
                         f"samples of SB3's own {known} from its seeded generator, and no other buffer class "
                         f"(leave rollout_buffer_class / replay_buffer_class unset)")
    buffer.__class__ = cls
    buffer.random = random
    return buffer

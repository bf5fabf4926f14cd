"""Seeds of everything random in a run, all derived from the run seed.

Every seed handed to a component is
``int(SeedSequence(run_seed, spawn_key=key).generate_state(1, uint32)[0])``
with the key:

============================  ==========================================
component                     ``spawn_key``
============================  ==========================================
brain of agent ``name``       ``(0, *name_key(name))`` (one per run: an
                              agent keeps its brain from phase to phase)
environment ``uid``           ``(1, phase, worker, *name_key(uid))``
muscle of agent ``name``      ``(2, phase, worker, *name_key(name))``
parameter samplers of         ``(3, phase, worker, *name_key(uid))``: one
environment ``uid``           generator (:func:`sampler_rng`) per phase,
                              worker and environment
============================  ==========================================

Environments whose ``params`` hold samplers (``{sampler: uniform, ...}``)
are re-created at every episode start: from the sampler generator of their
phase, worker and environment, first every sampler is drawn once (in
document order), then the environment's seed for that episode,
``int(rng.integers(2**32))``. So the drawn parameters and the episode's
environment seed depend only on the run seed, the phase, the worker, the
environment uid and the episode number; the generator's state is saved with
every checkpoint, so a resumed phase draws what an uninterrupted one would.

``phase`` is the phase's index in the schedule, ``worker`` the worker's index
and ``name_key(s)`` the two 32-bit halves of the first 8 bytes of
``sha256(s)``. Keys depend on names, not positions: reordering the agents or
environments of a phase changes no seed. Components draw every random
number from their own ``default_rng(seed)``; the executor itself draws none
(workers advance in a fixed round-robin order).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from xdoe._random import seed_word

__all__ = ["Seeds", "name_key", "derive_seed", "brain_seed", "environment_seed", "muscle_seed",
           "sampler_rng", "CHECK_SEED"]

#: The seed ``xrun experiment-check`` gives components it only constructs.
CHECK_SEED = 0

BRAIN, ENVIRONMENT, MUSCLE, SAMPLER = 0, 1, 2, 3


def name_key(name: str) -> tuple[int, int]:
    """The two 32-bit halves of the first 8 bytes of ``sha256(name)``."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big"), int.from_bytes(digest[4:8], "big")


def derive_seed(run_seed: int, *key: int) -> int:
    """A uint32 seed from ``SeedSequence(run_seed, spawn_key=key)`` (:func:`xdoe._random.seed_word`)."""
    return seed_word(run_seed, *key)


def brain_seed(run_seed: int, agent: str) -> int:
    """Seed of the brain of agent ``agent`` (constant over the run's phases)."""
    return derive_seed(run_seed, BRAIN, *name_key(agent))


def environment_seed(run_seed: int, phase: int, worker: int, uid: str) -> int:
    """Seed of environment ``uid`` in worker ``worker`` of phase ``phase``."""
    return derive_seed(run_seed, ENVIRONMENT, phase, worker, *name_key(uid))


def muscle_seed(run_seed: int, phase: int, worker: int, agent: str) -> int:
    """Seed of the muscle of agent ``agent`` in worker ``worker`` of phase ``phase``."""
    return derive_seed(run_seed, MUSCLE, phase, worker, *name_key(agent))


def sampler_rng(run_seed: int, phase: int, worker: int, uid: str) -> np.random.Generator:
    """The generator of the parameter samplers (and per-episode seeds) of
    environment ``uid`` in worker ``worker`` of phase ``phase``:
    ``default_rng(SeedSequence(run_seed, spawn_key=(3, phase, worker, *name_key(uid))))``."""
    ss = np.random.SeedSequence(int(run_seed), spawn_key=(SAMPLER, int(phase), int(worker), *name_key(uid)))
    return np.random.default_rng(ss)


@dataclass(frozen=True)
class Seeds:
    """Where a phase's components get their seeds: derived from the run seed
    ``run`` (the functions above), or, with ``fixed`` (``xrun
    experiment-check``, :data:`CHECK_SEED`), that one seed for every
    component and ``fixed`` as the samplers' root."""

    run: int
    fixed: int | None = None

    def brain(self, agent: str) -> int:
        """:func:`brain_seed`, or the fixed seed."""
        return self.fixed if self.fixed is not None else brain_seed(self.run, agent)

    def environment(self, phase: int, worker: int, uid: str) -> int:
        """:func:`environment_seed`, or the fixed seed."""
        return self.fixed if self.fixed is not None else environment_seed(self.run, phase, worker, uid)

    def muscle(self, phase: int, worker: int, agent: str) -> int:
        """:func:`muscle_seed`, or the fixed seed."""
        return self.fixed if self.fixed is not None else muscle_seed(self.run, phase, worker, agent)

    def sampler(self, phase: int, worker: int, uid: str) -> np.random.Generator:
        """:func:`sampler_rng` of the run seed, or of the fixed seed."""
        return sampler_rng(self.fixed if self.fixed is not None else self.run, phase, worker, uid)

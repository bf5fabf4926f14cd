"""Seeds derive from the run seed by name, phase and worker."""

from __future__ import annotations

import numpy as np

from xdoe.execution import brain_seed, derive_seed, environment_seed, muscle_seed


def test_seeds_follow_the_documented_spawn_keys():
    from xdoe.execution._seeding import name_key

    ss = np.random.SeedSequence(42, spawn_key=(2, 1, 0, *name_key("learner")))
    assert muscle_seed(42, 1, 0, "learner") == int(ss.generate_state(1, np.uint32)[0])
    assert derive_seed(42, 0, *name_key("learner")) == brain_seed(42, "learner")


def test_seeds_differ_by_component_phase_worker_and_name():
    seeds = {
        brain_seed(7, "a"), brain_seed(7, "b"),
        environment_seed(7, 0, 0, "taxi"), environment_seed(7, 1, 0, "taxi"),
        environment_seed(7, 0, 1, "taxi"), muscle_seed(7, 0, 0, "a"), muscle_seed(7, 0, 1, "a"),
        muscle_seed(7, 1, 0, "a"), muscle_seed(8, 0, 0, "a"),
    }
    assert len(seeds) == 9
    assert all(0 <= s < 2**32 for s in seeds)
    assert environment_seed(7, 0, 0, "taxi") == environment_seed(7, 0, 0, "taxi")

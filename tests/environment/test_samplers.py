"""Environment-parameter samplers (ML-Agents style)."""

import numpy as np
import pytest

from xdoe._plugins import (
    GaussianSampler,
    MultiRangeUniformSampler,
    UniformSampler,
    find_samplers,
    make_sampler,
)


def test_uniform_draws_stay_in_range_and_cover_it():
    sampler = make_sampler({"sampler": "uniform", "min": 2.0, "max": 3.0})
    assert isinstance(sampler, UniformSampler)
    rng = np.random.default_rng(1)
    values = np.array([sampler.sample(rng) for _ in range(2000)])
    assert values.min() >= 2.0 and values.max() < 3.0
    assert abs(values.mean() - 2.5) < 0.03


def test_gaussian_moments():
    sampler = make_sampler({"sampler": "gaussian", "mean": 5, "std": 2})
    assert isinstance(sampler, GaussianSampler)
    rng = np.random.default_rng(2)
    values = np.array([sampler.sample(rng) for _ in range(5000)])
    assert abs(values.mean() - 5) < 0.1
    assert abs(values.std() - 2) < 0.1


def test_multirange_uniform_weights_by_interval_length():
    sampler = make_sampler({"sampler": "multirange_uniform", "intervals": [[0, 1], [10, 13]]})
    assert isinstance(sampler, MultiRangeUniformSampler)
    rng = np.random.default_rng(3)
    values = np.array([sampler.sample(rng) for _ in range(4000)])
    in_first = ((values >= 0) & (values < 1)).mean()
    in_second = ((values >= 10) & (values < 13)).mean()
    assert in_first + in_second == 1.0
    assert abs(in_first - 0.25) < 0.03  # length 1 of 4


def test_find_samplers_nested_and_draw_reproducible():
    params = {
        "env_id": "CartPole-v1",
        "physics": {"gravity": {"sampler": "uniform", "min": 9, "max": 10}},
        "wind": [0.0, {"sampler": "gaussian", "mean": 0, "std": 1}],
    }
    sampled = find_samplers(params)
    assert bool(sampled)
    a = sampled.draw(np.random.default_rng(7))
    b = sampled.draw(np.random.default_rng(7))
    assert a == b
    drawn_params, drawn = a
    assert set(drawn) == {"physics.gravity", "wind.1"}
    assert drawn_params["physics"]["gravity"] == drawn["physics.gravity"]
    assert drawn_params["wind"][1] == drawn["wind.1"]
    assert drawn_params["env_id"] == "CartPole-v1"
    # the template itself is untouched, so the next episode draws afresh
    assert params["physics"]["gravity"]["sampler"] == "uniform"
    rng = np.random.default_rng(7)
    first, second = sampled.draw(rng)[1], sampled.draw(rng)[1]
    assert first != second


def test_no_samplers_is_falsy():
    sampled = find_samplers({"length": 10, "nested": {"a": [1, 2]}})
    assert not sampled
    assert sampled.draw(np.random.default_rng(0)) == ({"length": 10, "nested": {"a": [1, 2]}}, {})


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ({"sampler": "beta", "a": 1}, "unknown sampler 'beta'"),
        ({"sampler": "uniform", "min": 1}, "needs 'max'"),
        ({"sampler": "uniform", "min": 2, "max": 1}, "greater than max"),
        ({"sampler": "uniform", "min": "a", "max": 1}, "finite number"),
        ({"sampler": "uniform", "min": 0, "max": 1, "scale": 2}, "unknown key(s) scale"),
        ({"sampler": "gaussian", "mean": 0, "std": -1}, "std must be >= 0"),
        ({"sampler": "multirange_uniform", "intervals": []}, "must not be empty"),
        ({"sampler": "multirange_uniform", "intervals": [[1, 2, 3]]}, "is not [min, max]"),
    ],
)
def test_malformed_samplers_are_reported_with_their_path(spec, fragment):
    with pytest.raises(ValueError) as info:
        find_samplers({"outer": {"x": spec}})
    assert fragment in str(info.value)
    assert str(info.value).startswith("params.outer.x:")

"""Plackett-Burman designs against Plackett & Burman (1946), "The design of
optimum multifactorial experiments", Biometrika 33, 305-325 (also
Montgomery 2012, Table 8.23; NIST/SEMATECH 5.3.3.5): the published
generator is the first run, each next run shifts it one place to the right,
the last run has every factor low."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xdoe.design import Factor, make_design

PUBLISHED = {
    12: "++-+++---+-",
    20: "++--++++-+-+----++-",
    24: "+++++-+-++--++--+-+----",
    36: "-+-+++---+++++-+++--+----+-+-++--+-",
    44: "++--+-+--+++-+++++---+-+++-----+---++-+-++-",
}


def two(k: int) -> list[Factor]:
    return [Factor(f"x{i + 1}", levels=(-1, 1)) for i in range(k)]


def signs(row: np.ndarray) -> str:
    return "".join("+" if v > 0 else "-" for v in row)


@pytest.mark.parametrize("runs", sorted(PUBLISHED))
def test_the_published_cyclic_design(runs):
    coded = make_design(two(runs - 1), method={"method": "plackett_burman"}).coded()
    assert coded.shape == (runs, runs - 1)
    generator = PUBLISHED[runs]
    assert signs(coded[0]) == generator
    for i in range(1, runs - 1):
        assert signs(coded[i]) == generator[-i:] + generator[:-i]
    assert signs(coded[-1]) == "-" * (runs - 1)
    assert np.allclose(coded.T @ coded, runs * np.eye(runs - 1))


@pytest.mark.parametrize("runs", [12, 20, 24])
def test_fewer_factors_take_the_first_columns(runs):
    k = runs - 4
    coded = make_design(two(k), method={"method": "plackett_burman"}).coded()
    assert signs(coded[0]) == PUBLISHED[runs][:k]


def test_no_main_effect_of_the_24_run_design_is_fully_aliased_with_an_interaction():
    """The cyclic 24-run design aliases each main effect with two-factor
    interactions partially (|r| 1/3); a doubled 12-run design (pydoe's
    ``pbdesign``) aliases some fully (|r| 1)."""
    coded = make_design(two(23), method={"method": "plackett_burman"}).coded()
    worst = max(abs(coded[:, i] @ (coded[:, a] * coded[:, b])) / 24
                for i in range(23) for a, b in itertools.combinations([j for j in range(23) if j != i], 2))
    assert worst == pytest.approx(1 / 3)

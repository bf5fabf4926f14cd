"""User-given generators of ``fractional_factorial``: a word whose letters
cancel (``aa`` is the constant column, ``abb`` is ``a``) is refused with the
word named, never turned into a factor that does not vary or that repeats
another one."""

from __future__ import annotations

import numpy as np
import pytest

from xdoe.design import Factor, make_design
from xdoe.errors import DesignError


def two(names: str) -> list[Factor]:
    return [Factor(n, levels=(0, 1)) for n in names]


@pytest.mark.parametrize("generators,message", [
    ("a b c aa ac", r"'aa' .*constant"),
    ("a b c ab bcc", r"'bcc' .*same column as 'b'"),
    ("a b c abb ac", r"'abb' .*same column as 'a'"),
    ("a b c ab -ba", r"'-ba' .*same column as 'ab'"),
    ("a b c ab aab", r"'aab' .*same column as 'b'"),
])
def test_generators_whose_letters_cancel_are_refused(generators, message):
    with pytest.raises(DesignError, match=message):
        make_design(two("abcde"), method={"method": "fractional_factorial", "generators": generators})


def test_valid_generators_give_distinct_varying_columns():
    design = make_design(two("abcde"), method={"method": "fractional_factorial", "generators": "a b c -ab abc"})
    coded = design.coded()
    assert coded.shape == (8, 5)
    assert np.allclose(coded.T @ coded, 8 * np.eye(5))

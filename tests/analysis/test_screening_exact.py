"""A noise-free response (a deterministic simulation): the effects the
function plants are active, every other contrast is exactly zero and
inactive, whether floating-point rounding leaves ~1e-15 residues (Lenth and
pure error) or the arithmetic is exact (Lenth's PSE is then 0)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis._screening import screening


def _two_level_table(k: int, mean, centre: int = 0, repeat: int = 1) -> pd.DataFrame:
    rows = []
    for r in range(repeat):
        for i in range(2 ** k):
            c = [1.0 if (i >> j) & 1 else -1.0 for j in range(k)]
            rows.append({**{f"x{j}": v for j, v in enumerate(c)}, "y": mean(c), "design_point": i, "repetition": r})
    for r in range(centre):
        c = [0.0] * k
        rows.append({**{f"x{j}": 0.0 for j in range(k)}, "y": mean(c), "design_point": 2 ** k, "repetition": r})
    return pd.DataFrame(rows)


def _planted(c):  # effects (high - low): x0 +6, x1 -4, x2*x3 +3; the response not a whole number
    return 10.1 + 3 * c[0] - 2 * c[1] + 1.5 * c[2] * c[3] + 0.7 * sum(v * v for v in c)


def _whole(c):  # exact arithmetic: every other effect is exactly 0, so Lenth's PSE is 0
    return 10 + 3 * c[0] - 2 * c[1] + 1.5 * c[2] * c[3]


@pytest.mark.parametrize("mean,centre,repeat,method", [
    (_planted, 0, 1, "lenth"), (_whole, 0, 1, "lenth"),
    (_planted, 4, 1, "pure error"), (_planted, 0, 2, "pure error"), (_whole, 0, 2, "pure error"),
])
def test_a_noise_free_response_flags_exactly_the_planted_effects(mean, centre, repeat, method):
    names = [f"x{j}" for j in range(4)]
    table = _two_level_table(4, mean, centre, repeat)
    result = screening(table, table[names], names)
    assert result["method"] == method
    effects = {r["name"]: r for r in result["effects"]}
    planted = {"x0": 6.0, "x1": -4.0, "x2*x3": 3.0}
    assert {n for n, r in effects.items() if r["active"]} == set(planted)
    for name, r in effects.items():
        assert r["effect"] == pytest.approx(planted.get(name, 0.0), abs=1e-12)
        if name in planted:
            assert r["p"] == 0.0 and np.isinf(r["t"]) and np.sign(r["t"]) == np.sign(planted[name])
        else:
            assert r["effect"] == 0.0 and r["t"] == 0.0 and r["p"] == 1.0
    if centre:
        assert result["curvature"]["effect"] == pytest.approx(4 * 0.7)
        assert result["curvature"]["p"] == 0.0


def test_an_infinite_t_or_f_reads_inf_in_the_tables() -> None:
    """A t or F over a zero error is infinite: the tables say ``inf``, not ``-`` (which means "not given")."""
    from xdoe.analysis._format import fmt_num

    assert (fmt_num(float("inf")), fmt_num(-float("inf")), fmt_num(float("nan")), fmt_num(None)) == \
        ("inf", "-inf", "-", "-")

"""Two-level screening: effects, contrasts and aliases, Lenth's PSE against
Montgomery's worked example, and the pure-error test with replication."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis._screening import contrasts, lenth, screening
from xdoe.design import Factor, make_design

# Montgomery, Design and Analysis of Experiments (8th ed., 2012), Example 6.2:
# filtration rate of a 2^4 design, runs in standard order (1), a, b, ab, ...
FILTRATION = [45, 71, 48, 65, 68, 60, 80, 65, 43, 100, 45, 104, 75, 86, 70, 96]
EFFECTS = {"A": 21.625, "B": 3.125, "C": 9.875, "D": 14.625, "A*B": 0.125, "A*C": -18.125, "A*D": 16.625,
           "B*C": 2.375, "B*D": -0.375, "C*D": -1.125, "A*B*C": 1.875, "A*B*D": 4.125, "A*C*D": -1.625,
           "B*C*D": -2.625, "A*B*C*D": 1.375}


def _filtration(repeat: int = 1, noise: float = 0.0) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(0)
    for r in range(repeat):
        for i, y in enumerate(FILTRATION):
            levels = {n: (1 if (i >> j) & 1 else -1) for j, n in enumerate("ABCD")}
            rows.append({**levels, "y": y + noise * rng.standard_normal(), "design_point": i, "repetition": r})
    return pd.DataFrame(rows)


def test_lenth_pse_against_montgomery_example_6_2():
    table = _filtration()
    result = screening(table, table[list("ABCD")].astype(float), list("ABCD"))
    assert result["method"] == "lenth"
    assert {r["name"]: r["effect"] for r in result["effects"]} == pytest.approx(EFFECTS)
    # Montgomery: s0 = 1.5 x 2.625 = 3.9375, PSE = 1.5 x 1.75 = 2.625, ME = 6.75, SME = 13.70 (df = 5)
    assert result["pse"] == pytest.approx(2.625)
    assert result["me"] == pytest.approx(6.75, abs=0.01)
    assert result["sme"] == pytest.approx(13.70, abs=0.01)
    assert result["df"] == 5
    active = {r["name"] for r in result["effects"] if r["active"]}
    assert active == {"A", "C", "D", "A*C", "A*D"}  # Montgomery's conclusion


def test_lenth_on_raw_effects_matches_hand_computation():
    stats = lenth(np.array(list(EFFECTS.values())))
    assert stats["s0"] == pytest.approx(3.9375)
    assert stats["pse"] == pytest.approx(2.625)
    from scipy import stats as st

    assert stats["p"][0] == pytest.approx(2 * st.t.sf(21.625 / 2.625, 5))


def test_replicated_design_uses_the_pure_error_t_test():
    table = _filtration(repeat=2, noise=1.0)
    result = screening(table, table[list("ABCD")].astype(float), list("ABCD"))
    assert result["method"] == "pure error" and result["df"] == 16
    effects = {r["name"]: r["effect"] for r in result["effects"]}
    assert effects["A"] == pytest.approx(21.625, abs=1.5)
    import statsmodels.formula.api as smf

    fit = smf.ols("y ~ A * B * C * D", data=table).fit()
    assert effects["A"] == pytest.approx(2 * fit.params["A"])
    p = {r["name"]: r["p"] for r in result["effects"]}
    assert p["A"] == pytest.approx(fit.pvalues["A"])


def test_contrasts_of_the_two_to_the_seven_minus_three_design_are_fifteen_with_their_chains():
    design = make_design([Factor(n, levels=(0, 1)) for n in "ABCDEFG"],
                         method={"method": "fractional_factorial", "generators": "a b c d abc bcd acd"})
    cols, labels, aliases = contrasts(design.coded(), list("ABCDEFG"))
    assert cols.shape == (16, 15)
    assert np.allclose(cols.T @ cols, 16 * np.eye(15))  # orthogonal
    # resolution IV: main effects clear of two-factor interactions, each chain listed to three-factor terms
    assert labels[:7] == list("ABCDEFG") and all(a and all(t.count("*") == 2 for t in a) for a in aliases[:7])
    chains = {frozenset(t for t in [label, *alias] if t.lstrip("-").count("*") == 1)
              for label, alias in zip(labels, aliases) if label.count("*") == 1}
    assert frozenset({"A*B", "C*E", "F*G"}) in chains and len(chains) == 7
    # Montgomery (2012) Table 8.10 (2^(7-3)_IV, E = ABC, F = BCD, G = ACD): A = BCE = DEF = CDG = BFG
    assert set(aliases[0]) == {"B*C*E", "D*E*F", "C*D*G", "B*F*G"}


def test_plackett_burman_contrasts_completed_by_the_orthogonal_complement():
    design = make_design([Factor(n, levels=(0, 1)) for n in "ABCDE"], method={"method": "plackett_burman"})
    x = design.coded()
    cols, labels, _ = contrasts(x, list("ABCDE"))
    assert cols.shape == (len(x), len(x) - 1)
    assert np.allclose(cols.T @ cols, len(x) * np.eye(len(x) - 1))


@pytest.mark.parametrize("runs,k,order", [(12, 8, 0), (12, 8, 1), (12, 8, 2), (24, 8, 0), (36, 33, 1)])
def test_lenth_of_a_plackett_burman_design_takes_its_unused_columns_as_the_error(runs, k, order):
    """An unreplicated Plackett-Burman design of ``k`` factors: Lenth's PSE is the one over all
    ``runs - 1`` columns of the published design (its unused "dummy" columns estimate the error,
    as in the textbook analysis), whatever the order of the runs and with a factor coded the
    other way round. An arbitrary orthonormal basis of the error space gave another PSE (12 runs:
    0.119 against 0.116 here) that changed with the order of the runs; 24 runs took a two-factor
    interaction orthogonal to the main effects (yet correlated 1/3 with others) as a contrast of
    its own; and 36 runs of 33 factors searched all 2^33 products (the analysis never ended)."""
    full = make_design([Factor(f"z{i}", levels=(0, 1)) for i in range(runs - 1)],
                       method={"method": "plackett_burman"}).coded()
    noise = 0.3 * np.random.default_rng(1).standard_normal(runs)
    y = 10 + 2.5 * full[:, 0] - 1.5 * full[:, 2] + 0.9 * full[:, 5] + noise
    names = [f"f{i}" for i in range(k)]
    table = pd.DataFrame(full[:, :k], columns=names).assign(y=y, design_point=range(runs))
    table["f4"] = -table["f4"] if order == 2 else table["f4"]
    table = table.iloc[np.random.default_rng(order).permutation(runs) if order else np.arange(runs)]
    result = screening(table, table[names], names)
    assert result["method"] == "lenth"
    assert result["pse"] == pytest.approx(lenth(full.T @ y / (runs / 2))["pse"], rel=1e-12)
    assert [r["name"] for r in result["effects"]] == names + [f"(error {i + 1})" for i in range(runs - 1 - k)]
    errors = sorted(abs(r["effect"]) for r in result["effects"][k:])
    assert errors == pytest.approx(sorted(abs(full[:, k:].T @ y / (runs / 2))), rel=1e-12)


def test_three_blocks_are_a_fixed_effect_of_the_same_model():
    """Three replicates of the 2^4 as three blocks shifted by 0, +10 and -5:
    the effects are those of ``y ~ A*B*C*D + block`` (statsmodels)."""
    import statsmodels.formula.api as smf

    table = _filtration(repeat=3, noise=0.5)
    table["blk"] = table["repetition"]
    table["y"] += table["blk"].map({0: 0.0, 1: 10.0, 2: -5.0})
    result = screening(table, table[list("ABCD")].astype(float), list("ABCD"), blocks=table["blk"])
    table["b1"], table["b2"] = (table["blk"] == 1).astype(float), (table["blk"] == 2).astype(float)
    fit = smf.ols("y ~ A * B * C * D + b1 + b2", data=table).fit()  # (a column C hides patsy's C())
    effects = {r["name"]: r for r in result["effects"]}
    assert result["method"] == "pure error" and result["df"] == fit.df_resid == 30
    for name in ("A", "A*C", "B*C*D", "A*B*C*D"):
        term = name.replace("*", ":")
        assert effects[name]["effect"] == pytest.approx(2 * fit.params[term])
        assert effects[name]["p"] == pytest.approx(fit.pvalues[term])
    assert effects["A"]["effect"] == pytest.approx(21.625, abs=1.0)  # the block shifts are taken out

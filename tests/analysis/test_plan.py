"""``xrun plan`` (issue 37, item 4): repetitions needed to detect a difference,
by Welch's t test (statsmodels' power solver) and by a bootstrap."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from xdoe.analysis import bootstrap_repetitions, plan_repetitions, welch_repetitions
from xdoe.analysis._plan import welch_power_test


@pytest.mark.parametrize("delta,sd_a,sd_b,alpha,power", [(1.0, 1.0, 1.0, 0.05, 0.8), (0.5, 1.0, 2.0, 0.01, 0.9),
                                                          (0.3, 0.5, 0.25, 0.05, 0.8)])
def test_welch_matches_statsmodels(delta, sd_a, sd_b, alpha, power):
    from statsmodels.stats.power import tt_ind_solve_power

    expected = tt_ind_solve_power(effect_size=delta / math.sqrt((sd_a ** 2 + sd_b ** 2) / 2), alpha=alpha,
                                  power=power, ratio=1.0, alternative="two-sided")
    assert welch_repetitions(delta, sd_a, sd_b, alpha, power) == pytest.approx(float(expected), abs=1e-9)


def test_welch_large_effect_by_noncentral_t():
    """statsmodels gives up below 2 runs per point: the same power by scipy's noncentral t."""
    from xdoe.analysis._plan import _power

    assert welch_repetitions(24.0, 0.25, 0.25) == 2.0
    n = welch_repetitions(3.0, 1.0, 1.0)
    assert 2 < n < 4 and _power(3.0, n, 0.05) == pytest.approx(0.8, abs=1e-7)


def test_a_large_effect_prints_no_solver_warning():
    """statsmodels' first import of its warnings module inside our filter
    context put its "always" filter first: `xrun plan` printed the solver's
    ConvergenceWarning on stderr. In a fresh process, as the CLI runs it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-W", "default", "-c",
                           "from xdoe.analysis._plan import welch_repetitions; print(welch_repetitions(100.0, 1.0, 1.0))"],
                          capture_output=True, text=True, check=True)
    assert (done.stdout.strip(), done.stderr) == ("2.0", "")


def test_welch_no_answer():
    assert welch_repetitions(0.0, 1.0, 1.0) is None
    assert welch_repetitions(1.0, 0.0, 0.0) is None


def test_recommended_n_reaches_power_monte_carlo():
    """Normal samples at the recommended n for the true delta / sigma: the
    empirical power of Welch's test is within Monte Carlo error of the target
    (and not below it: n is rounded up)."""
    delta, sigma, alpha, power, trials = 0.8, 1.0, 0.05, 0.8, 2000
    n = math.ceil(welch_repetitions(delta, sigma, sigma, alpha, power))
    rng = np.random.default_rng(np.random.SeedSequence(37))
    a = rng.normal(delta, sigma, size=(trials, n))
    b = rng.normal(0.0, sigma, size=(trials, n))
    empirical = welch_power_test(a, b, alpha).mean()
    se = math.sqrt(power * (1 - power) / trials)
    assert empirical >= power - 3 * se
    assert empirical <= power + 3 * se + 0.05  # rounding n up adds at most a few percent here
    assert n == 26  # 0.8 SD at 80 %: the textbook 26 per group


def test_bootstrap_close_to_welch_on_normal_pilot():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 1.0, 200), rng.normal(0.0, 1.0, 200)
    n, capped = bootstrap_repetitions(a, b, delta=0.8, seed=3, trials=1000)
    assert not capped
    assert 20 <= n <= 33  # Welch: 26
    assert bootstrap_repetitions(a, b, delta=0.8, seed=3, trials=1000) == (n, False)  # seeded


def test_bootstrap_cap():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.01, 1.0, 20), rng.normal(0.0, 1.0, 20)
    assert bootstrap_repetitions(a, b, delta=0.01, cap=64, trials=200) == (None, True)


class _P:
    def __init__(self, index, values):
        self.index, self.values, self.levels, self.design_points = index, np.asarray(values, float), {"x": index}, [index]


def test_comparisons_best_vs_each_and_compare():
    points = [_P(2, [5.0, 5.5, 4.5]), _P(0, [4.0, 4.2, 3.8]), _P(1, [1.0, 1.5, 0.5])]
    out = plan_repetitions(points, trials=200)
    assert [(c.a, c.b) for c in out] == [(2, 0), (2, 1)]
    assert out[0].observed == pytest.approx(1.0)
    assert out[0].missing == max(out[0].welch, out[0].bootstrap) - 3
    one = plan_repetitions(points, compare=(1, 0), trials=200, delta=0.5)
    assert [(c.a, c.b, c.delta) for c in one] == [(0, 1, 0.5)]
    with pytest.raises(ValueError):
        plan_repetitions(points, compare=(0, 9))


def test_plan_cli_known_truth(campaign):
    """The synthetic campaign (tests/analysis/synthetic.py): the best points
    pay 16, the next 10, per-run noise sd 1/4 (16 one-step episodes of sd 1):
    observed delta near the truth, and n (Welch) is statsmodels' answer for
    the pilot's SDs."""
    from click.testing import CliRunner
    from statsmodels.stats.power import tt_ind_solve_power

    from xdoe.cli._xrun import main

    done = CliRunner().invoke(main, ["plan", str(campaign["dir"]), "--store", campaign["store"], "--format", "json",
                                     "--delta", "0.3", "--trials", "200"])
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["experiment"] and plan["response"] and plan["alpha"] == 0.05 and plan["power"] == 0.8
    assert len(plan["comparisons"]) == 7  # 8 points: best vs each
    for c in plan["comparisons"]:
        assert c["pilot_n_a"] == c["pilot_n_b"] == 3
        assert c["observed_delta"] == pytest.approx(round(c["observed_delta"] / 2) * 2, abs=1.0)  # 0, 6, 10 or 16
        sd = math.sqrt((c["sd_a"] ** 2 + c["sd_b"] ** 2) / 2)
        exact = tt_ind_solve_power(effect_size=0.3 / sd, alpha=0.05, power=0.8)
        assert c["n_welch_exact"] == pytest.approx(exact, abs=1e-9)
        assert c["n_welch"] == math.ceil(exact)
        assert 0.05 < c["sd_a"] < 0.6
    table = CliRunner().invoke(main, ["plan", str(campaign["dir"]), "--store", campaign["store"], "--trials", "200"])
    assert table.exit_code == 0, table.output
    assert "Welch" in table.stdout and "bootstrap" in table.stdout and "alpha 0.05" in table.stdout

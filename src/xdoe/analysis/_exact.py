"""Tests that stay right on a noise-free response (a deterministic
simulation, a known-truth function without noise).

A fit of a response with no noise leaves residues of floating-point rounding
(~1e-15 of the response) in the estimates of terms with no effect and in the
residual error. Tested against each other they give arbitrary t, F and p (a
term with no effect can come out significant). Here an estimate, error or
sum of squares within ``ROUNDING`` times the largest |response| (squared and
times the runs for sums of squares) of zero is exactly 0, and a test of a
non-zero estimate over a zero error gives ``t, F = inf``, ``p = 0``, of a
zero one ``t, F = 0``, ``p = 1``. On a noisy response nothing changes (its
estimates and errors are many orders above the threshold).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROUNDING", "snap", "snap_ss", "t_test", "f_test"]

#: relative size (of the largest |response|) below which an estimate or an error is rounding residue
ROUNDING = 1e-12


def snap(values: np.ndarray, scale: float) -> np.ndarray:
    """``values`` (any shape) with every entry within ``ROUNDING * scale`` of
    zero set to exactly 0 (``scale``: the largest |response|, >= 0)."""
    values = np.asarray(values, float)
    return np.where(np.abs(values) <= ROUNDING * scale, 0.0, values)


def snap_ss(values: np.ndarray, scale: float, runs: int) -> np.ndarray:
    """Sums of squares ``values`` (any shape) with every entry within
    ``runs * (ROUNDING * scale)^2`` of zero set to 0."""
    values = np.asarray(values, float)
    return np.where(np.abs(values) <= runs * (ROUNDING * scale) ** 2, 0.0, values)


def t_test(estimates: np.ndarray, errors: np.ndarray, df: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided t tests of ``estimates`` (shape ``(m,)``) with standard errors
    ``errors`` (same shape, >= 0) on ``df`` degrees of freedom: ``(t, p)``,
    each of shape ``(m,)``. A zero error gives ``t = ±inf``, ``p = 0`` for a
    non-zero estimate and ``t = 0``, ``p = 1`` for a zero one."""
    from scipy import stats

    estimates = np.asarray(estimates, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = estimates / np.asarray(errors, float)
    t = np.where(estimates == 0, 0.0, t)
    return t, 2 * stats.t.sf(np.abs(t), df)


def f_test(ss: float, df: float, ss_error: float, df_error: float) -> tuple[float, float, float]:
    """F test of a sum of squares ``ss`` on ``df`` degrees of freedom against
    the error's ``ss_error`` on ``df_error``: ``(F, p, partial eta²)``. A zero
    error gives ``(inf, 0, 1)`` for ``ss > 0`` and ``(0, 1, 0)`` for ``ss = 0``
    (both already :func:`snap_ss`-ed); NaNs without degrees of freedom."""
    from scipy import stats

    if not (df > 0 and df_error > 0) or np.isnan(ss) or np.isnan(ss_error):
        return float("nan"), float("nan"), float("nan")
    if ss == 0:
        return 0.0, 1.0, 0.0
    if ss_error == 0:
        return float("inf"), 0.0, 1.0
    F = (ss / df) / (ss_error / df_error)
    return float(F), float(stats.f.sf(F, df, df_error)), float(ss / (ss + ss_error))

"""Response-surface designs: the second-order model, lack of fit, canonical
analysis and the contour plot.

* Model (coded units): ``y = b0 + sum b_i x_i + sum b_ii x_i^2 + sum b_ij x_i x_j``
  fitted by OLS (statsmodels), plus a block term ``C(block)`` when the design
  was augmented in blocks.
* Lack of fit: the second-order model against the cell-means model of the
  distinct points (statsmodels ``anova_lm``); needs replicated points (centre
  points, or repetitions).
* Canonical analysis (Box & Wilson 1951; Montgomery 2012, 11.3; Myers,
  Montgomery & Anderson-Cook 2016, 6.3): with ``b`` the linear coefficients and
  ``B`` the symmetric matrix of ``b_ii`` (diagonal) and ``b_ij / 2``, the
  stationary point is ``x_s = -B^-1 b / 2``; its kind from the eigenvalues of
  ``B``: all negative a maximum, all positive a minimum, mixed signs a saddle.
  ``inside``: every coordinate of ``x_s`` within the coded range of the design
  points. ``predicted``: the fitted mean at ``x_s`` with its 95 % confidence
  interval (statsmodels ``get_prediction``).
"""

from __future__ import annotations

import itertools
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._design_info import natural

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["surface", "canonical", "plot_contour"]


def _terms(k: int) -> list[tuple[int, ...]]:
    return [(i,) for i in range(k)] + [(i, i) for i in range(k)] + list(itertools.combinations(range(k), 2))


def _matrix(x: np.ndarray, blocks: np.ndarray | None = None) -> np.ndarray:
    cols = [np.ones(len(x))] + [np.prod(x[:, list(t)], axis=1) for t in _terms(x.shape[1])]
    if blocks is not None:
        for b in sorted(set(blocks))[1:]:
            cols.append((blocks == b).astype(float))
    return np.column_stack(cols)


def canonical(b: np.ndarray, bq: np.ndarray, bij: dict[tuple[int, int], float]) -> dict[str, Any]:
    """Stationary point ``-B^-1 b / 2`` and eigenvalues of ``B`` (coded units).

    Args:
        b: ``(k,)`` linear coefficients; ``bq``: ``(k,)`` pure quadratic ones;
        bij: ``{(i, j): b_ij}`` interaction coefficients (``i < j``).

    Returns:
        ``{"point": (k,), "eigenvalues": (k,), "kind"}``; ``kind`` is
        ``maximum``, ``minimum`` or ``saddle``.

    Raises:
        numpy.linalg.LinAlgError: ``B`` is singular.
    """
    k = len(b)
    big = np.diag(np.asarray(bq, float))
    for (i, j), v in bij.items():
        big[i, j] = big[j, i] = v / 2
    point = -0.5 * np.linalg.solve(big, np.asarray(b, float))
    eig = np.linalg.eigvalsh(big)
    kind = "maximum" if np.all(eig < 0) else ("minimum" if np.all(eig > 0) else "saddle")
    return {"point": point, "eigenvalues": eig, "kind": kind, "matrix": big, "k": k}


def factor_tests(fit: Any, k: int) -> dict[str, Any]:
    """Tests of the second-order model ``fit`` (columns: intercept, then
    :func:`_terms` of ``k`` factors, then block columns): per factor the joint
    F test (statsmodels ``f_test``) that its linear, quadratic and interaction
    coefficients are all zero, ``(F, p, df_num, df_den)``; per pair ``(i, j)``
    the interaction coefficient's ``(b_ij, t, p, df_resid)``."""
    terms = _terms(k)
    params = np.asarray(fit.params)
    out: dict[str, Any] = {"factors": [], "interactions": {}}
    for i in range(k):
        cols = [1 + n for n, t in enumerate(terms) if i in t]
        r = np.zeros((len(cols), len(params)))
        for row, c in enumerate(cols):
            r[row, c] = 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = fit.f_test(r)
        out["factors"].append((float(np.squeeze(test.fvalue)), float(test.pvalue), float(test.df_num),
                               float(test.df_denom)))
    for n, t in enumerate(terms):
        if len(t) == 2 and t[0] != t[1]:
            out["interactions"][t] = (float(params[1 + n]), float(np.asarray(fit.tvalues)[1 + n]),
                                      float(np.asarray(fit.pvalues)[1 + n]), float(fit.df_resid))
    return out


def surface(table: "pd.DataFrame", coded: "pd.DataFrame", factors: list[str], coding: dict[str, dict],
            blocks: "pd.Series | None" = None) -> dict[str, Any]:
    """The response-surface analysis (see the module docstring).

    Returns:
        ``{"coefficients": {term: {"estimate", "p"}}, "r_squared", "lack_of_fit":
        {"F", "p", "df"} | None, "stationary_point": {factor: natural},
        "stationary_coded": {factor: coded}, "eigenvalues", "kind", "inside",
        "predicted", "predicted_ci": [low, high], "strongest": [f1, f2]}``.

    Raises:
        InputError: fewer runs than model terms.
    """
    import statsmodels.api as sm
    from statsmodels.stats.anova import anova_lm

    from xdoe.errors import InputError

    x = coded[factors].to_numpy(float)
    y = table["y"].to_numpy(float)
    block = None if blocks is None or blocks.nunique() < 2 else blocks.to_numpy()
    xm = _matrix(x, block)
    if len(y) <= xm.shape[1]:
        raise InputError(f"a second-order model of {len(factors)} factors has {xm.shape[1]} terms: it needs more "
                         f"than {xm.shape[1]} runs, got {len(y)}")
    names = ["1"] + ["*".join(factors[i] for i in t) if len(t) == 1 or t[0] != t[1] else f"{factors[t[0]]}^2"
                     for t in _terms(len(factors))]
    names += [f"block[{b}]" for b in sorted(set(block))[1:]] if block is not None else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.OLS(y, xm).fit()
    k = len(factors)
    params = np.asarray(fit.params)
    b, bq = params[1:k + 1], params[k + 1:2 * k + 1]
    bij = {t: params[1 + i] for i, t in enumerate(_terms(k)) if len(t) == 2 and t[0] != t[1]}
    out: dict[str, Any] = {
        "coefficients": {n: {"estimate": float(v), "p": float(p)} for n, v, p in zip(names, params, fit.pvalues)},
        "r_squared": float(fit.rsquared), "runs": int(len(y)),
    }
    out["_fit"] = (fit, block is not None, xm.shape[1])
    keys = [tuple(r) for r in x] if block is None else [(*r, b) for r, b in zip(x, block)]  # nested in the blocks
    distinct = len(set(keys))
    out["lack_of_fit"] = None
    if len(y) - distinct > 0 and distinct > xm.shape[1]:
        cells = np.zeros((len(y), distinct))
        for i, key in enumerate(keys):
            cells[i, list(dict.fromkeys(keys)).index(key)] = 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = sm.OLS(y, cells).fit()
            table_ = anova_lm(fit, full)
        out["lack_of_fit"] = {"F": float(table_["F"].iloc[1]), "p": float(table_["Pr(>F)"].iloc[1]),
                              "df": [float(table_["df_diff"].iloc[1]), float(table_["df_resid"].iloc[1])]}
    try:
        can = canonical(b, bq, bij)
    except np.linalg.LinAlgError:
        out.update(stationary_point=None, kind=None, inside=None, predicted=None, predicted_ci=None)
        return out
    xs = can["point"]
    low, high = x.min(axis=0), x.max(axis=0)
    inside = bool(np.all((xs >= low - 1e-9) & (xs <= high + 1e-9)))
    row = _matrix(xs[None, :], None)
    if block is not None:  # predicted in the first block
        row = np.column_stack([row, np.zeros((1, xm.shape[1] - row.shape[1]))])
    pred = fit.get_prediction(row).summary_frame(alpha=0.05)
    strength = [abs(b[i]) + abs(bq[i]) + sum(abs(v) for t, v in bij.items() if i in t) for i in range(k)]
    out.update(
        stationary_point={f: float(natural(float(c), coding[f])) for f, c in zip(factors, xs)},
        stationary_coded={f: float(c) for f, c in zip(factors, xs)},
        eigenvalues=[float(e) for e in can["eigenvalues"]], kind=can["kind"], inside=inside,
        predicted=float(pred["mean"].iloc[0]),
        predicted_ci=[float(pred["mean_ci_lower"].iloc[0]), float(pred["mean_ci_upper"].iloc[0])],
        strongest=[factors[i] for i in np.argsort(strength)[::-1][:2]],
    )
    return out


def plot_contour(result: dict[str, Any], coded: "pd.DataFrame", factors: list[str], coding: dict[str, dict],
                 path: Any, *, title: str) -> Any:
    """Contour plot of the fitted surface over the two strongest factors
    (natural units; the other factors at the stationary point when it is
    inside the region, else at the centre), the design points drawn and the
    stationary point marked."""
    from xdoe.analysis._figure import PALETTE, new_figure, save

    fit, blocked, p = result["_fit"]
    f1, f2 = result["strongest"]
    i1, i2 = factors.index(f1), factors.index(f2)
    x = coded[factors].to_numpy(float)
    base = np.array([result["stationary_coded"][f] if result.get("inside") else 0.0 for f in factors])
    pad1, pad2 = 0.05 * np.ptp(x[:, i1]), 0.05 * np.ptp(x[:, i2])  # the outermost design points stay visible
    g1 = np.linspace(x[:, i1].min() - pad1, x[:, i1].max() + pad1, 80)
    g2 = np.linspace(x[:, i2].min() - pad2, x[:, i2].max() + pad2, 80)
    a, b = np.meshgrid(g1, g2)
    pts = np.tile(base, (a.size, 1))
    pts[:, i1], pts[:, i2] = a.ravel(), b.ravel()
    xm = _matrix(pts, None)
    if blocked:
        xm = np.column_stack([xm, np.zeros((len(xm), p - xm.shape[1]))])
    z = (xm @ np.asarray(fit.params)).reshape(a.shape)
    n1 = np.vectorize(lambda c: natural(c, coding[f1]))
    n2 = np.vectorize(lambda c: natural(c, coding[f2]))
    fig = new_figure(7, 5.5, svg=str(path).lower().endswith(".svg"))
    ax = fig.add_subplot()
    cs = ax.contourf(n1(a), n2(b), z, levels=14, cmap="viridis")
    ax.contour(n1(a), n2(b), z, levels=14, colors="white", linewidths=0.4)
    fig.colorbar(cs, ax=ax, label="fitted response")
    ax.scatter(n1(x[:, i1]), n2(x[:, i2]), color="black", s=22, label="design points", zorder=3)
    if result.get("stationary_point") is not None:
        sp = result["stationary_point"]
        ax.scatter([sp[f1]], [sp[f2]], marker="*", s=220, color=PALETTE[1], edgecolor="white", zorder=4,
                   label=f"stationary point ({result['kind']}{'' if result['inside'] else ', outside'})")
    ax.set_xlabel(f1)
    ax.set_ylabel(f2)
    if coding[f1].get("scale") == "log":
        ax.set_xscale("log")
    if coding[f2].get("scale") == "log":
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    return save(fig, path)

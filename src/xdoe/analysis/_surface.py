"""Response-surface designs: the second-order model, lack of fit, canonical
analysis and the contour plot.

* Model (coded units): ``y = b0 + sum b_i x_i + sum b_ii x_i^2 + sum b_ij x_i x_j``
  fitted by OLS (statsmodels), plus a block term ``C(block)`` when the design
  was augmented in blocks.
* Lack of fit: the second-order model against the cell-means model of the
  distinct points (the extra-sum-of-squares F test, as statsmodels ``anova_lm``
  of the two fits); needs replicated points (centre points, or repetitions).
* A noise-free response (a deterministic simulation): coefficients, sums of
  squares and errors of rounding residue are 0 (:mod:`xdoe.analysis._exact`),
  so a term with no effect has p 1, a planted one p 0, an exact quadratic no
  lack of fit (F 0, p 1).
* Canonical analysis (Box & Wilson 1951; Montgomery 2012, 11.3; Myers,
  Montgomery & Anderson-Cook 2016, 6.3): with ``b`` the linear coefficients and
  ``B`` the symmetric matrix of ``b_ii`` (diagonal) and ``b_ij / 2``, the
  stationary point is ``x_s = -B^-1 b / 2``; its kind from the eigenvalues of
  ``B``: all negative a maximum, all positive a minimum, mixed signs a saddle.
  ``inside``: ``x_s`` lies in the design region, the convex hull of the
  design points in coded units (the region the contour plot colours). ``predicted``: the fitted mean at ``x_s`` with its 95 % confidence
  interval (statsmodels ``get_prediction``).
"""

from __future__ import annotations

import itertools
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._design_info import natural
from xdoe.analysis._exact import f_test, snap, snap_ss, t_test

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
    params, errors = exact_estimates(fit)
    out: dict[str, Any] = {"factors": [], "interactions": {}}
    t_all, p_all = t_test(params, errors, float(fit.df_resid))
    for i in range(k):
        cols = [1 + n for n, t in enumerate(terms) if i in t]
        if not errors.any():  # a noise-free response (xdoe.analysis._exact): the terms are zero or certain
            F, p = (float("inf"), 0.0) if params[cols].any() else (0.0, 1.0)
            out["factors"].append((F, p, float(len(cols)), float(fit.df_resid)))
            continue
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
            out["interactions"][t] = (float(params[1 + n]), float(t_all[1 + n]), float(p_all[1 + n]),
                                      float(fit.df_resid))
    return out


def exact_estimates(fit: Any) -> tuple[np.ndarray, np.ndarray]:
    """The OLS ``fit``'s coefficients and standard errors (each shape ``(p,)``)
    with rounding residue of a noise-free response set to 0
    (:mod:`xdoe.analysis._exact`): coefficients within ``ROUNDING`` of the
    largest |response|, and every error when the residual sum of squares is."""
    y = np.asarray(fit.model.endog, float)
    scale = float(np.abs(y).max()) if len(y) else 0.0
    params = snap(fit.params, scale)
    noise = float(snap_ss(np.array([fit.ssr]), scale, len(y))[0]) > 0
    errors = np.asarray(fit.bse, float) if noise else np.zeros(len(params))
    return params, errors


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
    params, errors = exact_estimates(fit)
    b, bq = params[1:k + 1], params[k + 1:2 * k + 1]
    bij = {t: params[1 + i] for i, t in enumerate(_terms(k)) if len(t) == 2 and t[0] != t[1]}
    out: dict[str, Any] = {
        "coefficients": {n: {"estimate": float(v), "p": float(p)}
                         for n, v, p in zip(names, params, t_test(params, errors, float(fit.df_resid))[1])},
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
        df_lof, df_pe = float(fit.df_resid - full.df_resid), float(full.df_resid)
        scale = float(np.abs(y).max())
        ss_lof, ss_pe = snap_ss(np.array([fit.ssr - full.ssr, full.ssr]), scale, len(y))
        F, p, _ = f_test(float(ss_lof), df_lof, float(ss_pe), df_pe)  # the extra-sum-of-squares F test
        out["lack_of_fit"] = {"F": F, "p": p, "df": [df_lof, df_pe]}
    try:
        can = canonical(b, bq, bij)
    except np.linalg.LinAlgError:
        out.update(stationary_point=None, kind=None, inside=None, predicted=None, predicted_ci=None)
        out["predicted_pi"] = None  # 95 % prediction interval of a new run at the stationary point
        return out
    xs = can["point"]
    inside = _in_hull(x, xs)  # the design region: the convex hull of the design points, as the contour plot draws it
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
        predicted_pi=[float(pred["obs_ci_lower"].iloc[0]), float(pred["obs_ci_upper"].iloc[0])],  # a new run
        strongest=[factors[i] for i in np.argsort(strength)[::-1][:2]],
    )
    return out


def plot_contour(result: dict[str, Any], coded: "pd.DataFrame", factors: list[str], coding: dict[str, dict],
                 path: Any, *, title: str) -> Any:
    """Contour plot of the fitted surface over the two strongest factors
    (natural units; the other factors at the stationary point when it is
    inside the region, else at the centre), the design points drawn and the
    stationary point marked; written to ``path`` (.png or .svg).

    The design region is the convex hull of the design points (coded units,
    every factor: ``scipy.spatial.ConvexHull``), drawn as its slice through
    the plotted plane (for two factors: the hull of the design points; a
    central composite design's octagon, a face-centred one's square), not
    their bounding box, whose corners a central composite or Box-Behnken
    design never ran. Only the region is coloured: the colour scale (contour
    levels) spans the fitted response's minimum and maximum over it (a
    200 x 200 grid, the region's boundary and the stationary point when it
    lies inside); outside it the picture is grey and hatched, extrapolation,
    never coloured by the extrapolated fit. The stationary point (``*``)
    carries its predicted mean with the 95 % confidence interval of the mean
    (``result["predicted_ci"]``) and the 95 % prediction interval of a new
    run (``result["predicted_pi"]``); outside the region it is an ``X``
    labelled "outside the design region: extrapolation" (beyond three times
    the design's extent it sits on the frame's edge, its coordinates in the
    label). With more than two factors the design points are drawn
    projected onto the plane (some may fall outside its slice of the
    region). A design whose points span less than the space (a degenerate
    hull) keeps their bounding box in the two factors as the region.

    Args:
        result: :func:`surface`'s answer (``_fit``, ``strongest``,
            ``stationary_coded``, ``stationary_point``, ``inside``,
            ``predicted``, ``predicted_ci``, ``predicted_pi``).
        coded: ``(runs, k)`` coded design points, a column per factor.
        factors: the ``k`` factor names; coding: per factor its coding
            (``scale`` ``log`` draws a log axis).

    Returns:
        the written path.

    Raises:
        InputError: a suffix other than .png / .svg.
    """
    from xdoe.analysis._figure import PALETTE, import_matplotlib, new_figure, save

    import_matplotlib()  # matplotlib's first import under its lock (threads draw at once)
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath

    fit, blocked, p = result["_fit"]
    f1, f2 = result["strongest"]
    i1, i2 = factors.index(f1), factors.index(f2)
    x = coded[factors].to_numpy(float)
    sc = result.get("stationary_coded")
    xs = np.array([sc[f] for f in factors]) if sc is not None else None
    base = xs.copy() if xs is not None and result.get("inside") else np.zeros(len(factors))

    def fitted(u: np.ndarray, v: np.ndarray) -> np.ndarray:  # the model on the plotted plane (coded)
        pts = np.tile(base, (u.size, 1))
        pts[:, i1], pts[:, i2] = np.ravel(u), np.ravel(v)
        xm = _matrix(pts, None)
        if blocked:  # the first block
            xm = np.column_stack([xm, np.zeros((len(xm), p - xm.shape[1]))])
        return (xm @ np.asarray(fit.params)).reshape(np.shape(u))

    region = _region_slice(x, base, i1, i2)  # (m, 2) polygon, counter-clockwise, coded
    lo, hi = x[:, [i1, i2]].min(axis=0), x[:, [i1, i2]].max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    lo, hi = lo - 0.05 * span, hi + 0.05 * span  # the outermost design points stay visible
    sp2 = None if xs is None else xs[[i1, i2]]
    beyond = False
    if sp2 is not None:
        reach = 3.0 * np.maximum(np.abs(x[:, [i1, i2]]).max(axis=0), 1e-9)
        beyond = bool(np.any(np.abs(sp2) > reach))
        shown = np.clip(sp2, -reach, reach)
        lo, hi = np.minimum(lo, shown - 0.05 * span), np.maximum(hi, shown + 0.05 * span)
    g1, g2 = np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200)
    a, b = np.meshgrid(g1, g2)
    z = fitted(a, b)
    inside_grid = MplPath(region).contains_points(np.column_stack([a.ravel(), b.ravel()]), radius=1e-9)
    edge = _densify(region, 400)
    samples = [z.ravel()[inside_grid], fitted(edge[:, 0], edge[:, 1])]
    sp_inside = sp2 is not None and bool(result.get("inside"))
    if sp_inside:
        samples.append(fitted(sp2[:1], sp2[1:]))
    values = np.concatenate(samples)
    zmin, zmax = float(values.min()), float(values.max())
    if not zmax > zmin:  # a flat fit: one colour
        zmin, zmax = zmin - 0.5, zmax + 0.5
    levels = np.linspace(zmin, zmax, 15)

    n1 = np.vectorize(lambda c: natural(c, coding[f1]), otypes=[float])
    n2 = np.vectorize(lambda c: natural(c, coding[f2]), otypes=[float])
    na, nb = n1(a), n2(b)
    fig = new_figure(7.4, 6.6, svg=str(path).lower().endswith(".svg"))
    ax = fig.add_subplot()
    clipped = np.clip(z, zmin, zmax)  # outside the region only (hidden below the hatching)
    cs = ax.contourf(na, nb, clipped, levels=levels, cmap="viridis")
    ax.contour(na, nb, clipped, levels=levels[1:-1], colors="white", linewidths=0.4)
    fig.colorbar(cs, ax=ax, ticks=levels[::2], format="{x:.4g}", label="fitted response over the design region")
    # everything outside the region: grey, hatched (a frame with the region as its hole)
    frame = np.array([[lo[0], lo[1]], [lo[0], hi[1]], [hi[0], hi[1]], [hi[0], lo[1]]])  # clockwise
    pad = 0.02 * (hi - lo)
    frame = frame + np.array([[-1, -1], [-1, 1], [1, 1], [1, -1]]) * pad
    outer = np.column_stack([n1(frame[:, 0]), n2(frame[:, 1])])
    hole = np.column_stack([n1(region[:, 0]), n2(region[:, 1])])
    verts = np.concatenate([outer, outer[:1], hole, hole[:1]])
    codes = ([MplPath.MOVETO] + [MplPath.LINETO] * (len(outer) - 1) + [MplPath.CLOSEPOLY]
             + [MplPath.MOVETO] + [MplPath.LINETO] * (len(hole) - 1) + [MplPath.CLOSEPOLY])
    ax.add_patch(PathPatch(MplPath(verts, codes), facecolor="0.87", edgecolor="0.6", hatch="///", lw=0,
                           zorder=2, label="outside the design region: extrapolation (not coloured)"))
    ax.plot(np.append(hole[:, 0], hole[0, 0]), np.append(hole[:, 1], hole[0, 1]), color="0.25", lw=1.1,
            ls="--", zorder=2.5, label="design region: convex hull of the design points")
    ax.scatter(n1(x[:, i1]), n2(x[:, i2]), color="black", s=22, zorder=3,
               label="design points" + (" (projected onto this plane)" if len(factors) > 2 else ""))
    if result.get("stationary_point") is not None:
        sp = result["stationary_point"]
        ci, pi = result.get("predicted_ci"), result.get("predicted_pi")
        what = f"predicted {_num(result['predicted'])}"
        what += f"; 95 % CI of the mean [{_num(ci[0])}, {_num(ci[1])}]" if ci else ""
        what += f"; 95 % PI of a new run [{_num(pi[0])}, {_num(pi[1])}]" if pi else ""
        if sp_inside:
            ax.scatter([sp[f1]], [sp[f2]], marker="*", s=240, color=PALETTE[1], edgecolor="white", zorder=4,
                       label=f"stationary point ({result['kind']})\n{what}")
        else:
            at = f"\nat {f1}={_num(sp[f1])}, {f2}={_num(sp[f2])}: beyond the plotted area" if beyond else ""
            ax.scatter([n1(shown[0])], [n2(shown[1])], marker="X", s=150, color="white", edgecolor=PALETTE[1],
                       linewidths=1.8, zorder=4, clip_on=False,
                       label=f"stationary point ({result['kind']}) outside the design region: extrapolation\n"
                             f"{what}{at}")
    ax.set_xlabel(f1)
    ax.set_ylabel(f2)
    if coding[f1].get("scale") == "log":
        ax.set_xscale("log")
    if coding[f2].get("scale") == "log":
        ax.set_yscale("log")
    ax.set_xlim(outer[:, 0].min(), outer[:, 0].max())
    ax.set_ylim(outer[:, 1].min(), outer[:, 1].max())
    others = [f for f in factors if f not in (f1, f2)]
    held = ", ".join(f"{f}={_num(natural(float(base[factors.index(f)]), coding[f]))}" for f in others)
    ax.set_title(title + (f"\n(other factors held at {held})" if held else ""), fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", fontsize=8, framealpha=0.9)
    return save(fig, path)


def _num(value: float) -> str:
    return f"{value:.4g}"


def _in_hull(points: np.ndarray, point: np.ndarray) -> bool:
    """``point`` (``(k,)``) lies in the convex hull of ``points`` (``(n, k)``);
    a degenerate hull: within their bounding box."""
    from scipy.spatial import Delaunay, QhullError

    try:
        return bool(Delaunay(points).find_simplex(point[None, :], tol=1e-9)[0] >= 0)
    except (QhullError, ValueError):
        return bool(np.all((point >= points.min(axis=0) - 1e-9) & (point <= points.max(axis=0) + 1e-9)))


def _region_slice(points: np.ndarray, base: np.ndarray, i1: int, i2: int) -> np.ndarray:
    """The convex hull of ``points`` (``(n, k)``, coded) cut by the plane of
    factors ``i1`` and ``i2`` through ``base`` (``(k,)``): its polygon,
    ``(m, 2)`` counter-clockwise; for ``k = 2`` the hull itself. A
    degenerate hull (or a plane missing it): the bounding box of the points
    in the two factors."""
    from scipy.optimize import linprog
    from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError

    box = points[:, [i1, i2]]
    fallback = np.array([[box[:, 0].min(), box[:, 1].min()], [box[:, 0].max(), box[:, 1].min()],
                         [box[:, 0].max(), box[:, 1].max()], [box[:, 0].min(), box[:, 1].max()]])
    try:
        eq = ConvexHull(points).equations  # normal . x + offset <= 0 inside
        others = [j for j in range(points.shape[1]) if j not in (i1, i2)]
        planes = np.column_stack([eq[:, [i1, i2]], eq[:, -1] + eq[:, others] @ base[others]])
        norm = np.linalg.norm(planes[:, :2], axis=1)
        keep = norm > 1e-12
        if not np.all(planes[~keep, 2] <= 1e-9):
            return fallback  # the plane misses the hull
        planes = planes[keep]
        # a point deepest inside (Chebyshev centre): max r with A u + r |A| <= -c
        found = linprog([0, 0, -1], A_ub=np.column_stack([planes[:, :2], norm[keep]]), b_ub=-planes[:, 2],
                        bounds=[(None, None), (None, None), (0, None)])
        if not found.success or found.x[2] <= 1e-9:
            return fallback
        corners = HalfspaceIntersection(planes, found.x[:2]).intersections
        hull = ConvexHull(corners)
        return corners[hull.vertices]  # counter-clockwise for 2-D input
    except (QhullError, ValueError):
        return fallback


def _densify(polygon: np.ndarray, per_edge: int) -> np.ndarray:
    """``per_edge`` points along each edge of the closed ``polygon`` (its corners included)."""
    t = np.linspace(0.0, 1.0, per_edge, endpoint=False)[:, None]
    ends = np.roll(polygon, -1, axis=0)
    return np.concatenate([polygon[i] + t * (ends[i] - polygon[i]) for i in range(len(polygon))])

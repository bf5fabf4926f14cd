"""Two-level designs: signed effects with their aliases, Lenth's pseudo
standard error without replication, a t test on the pure error with it, and
the half-normal (Daniel) plot.

* Effect of a contrast column ``c`` (±1): ``mean(y | c = +1) - mean(y | c = -1)``
  over the design points' mean responses (centre points left out).
* Contrasts: the main effects, then the products of two, three ... factors
  that are neither constant nor (up to sign) a contrast already taken, until
  ``m = points - 1`` contrasts (a regular fraction: one per alias chain); a
  non-regular design (Plackett-Burman) is completed by the orthonormal
  complement of its main effects (QR), each scaled to the variance of an
  effect, ``2 q'y / sqrt(n)``.
* Without replication, Lenth (1989, "Quick and easy analysis of unreplicated
  factorials", Technometrics 31, 469-473): ``s0 = 1.5 median|c_j|``,
  ``PSE = 1.5 median{|c_j| : |c_j| < 2.5 s0}``, ``t_j = c_j / PSE`` referred
  to Student's t with ``m / 3`` degrees of freedom (scipy.stats.t):
  ``p``, the margin of error ``ME = t_{0.975, m/3} PSE`` and the simultaneous
  one ``SME = t_{gamma, m/3} PSE``, ``gamma = (1 + 0.95^(1/m)) / 2``.
  ``active``: ``p < 0.05`` (``|effect| > ME``).
* With replication (two or more runs at some point): an OLS fit
  (statsmodels) of the runs on the contrasts; ``effect = 2 * coefficient``,
  ``p`` its t test on the residual (pure error) degrees of freedom.

Checked against Montgomery (2012), Example 6.2 (filtration rate, a 2^4
design): effects, PSE 2.625, ME 6.75 (tests/analysis/test_screening.py).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["lenth", "contrasts", "screening"]

ALPHA = 0.05


def lenth(effects: np.ndarray) -> dict[str, Any]:
    """Lenth's PSE of ``effects`` (``m`` contrasts) with its t values, p values,
    margin of error and simultaneous margin of error (see the module docstring)."""
    from scipy import stats

    c = np.abs(np.asarray(effects, float))
    m = len(c)
    s0 = 1.5 * float(np.median(c))
    trimmed = c[c < 2.5 * s0]
    pse = 1.5 * float(np.median(trimmed)) if len(trimmed) else float("nan")
    df = m / 3.0
    t = np.asarray(effects, float) / pse if pse > 0 else np.full(m, np.nan)
    p = 2 * stats.t.sf(np.abs(t), df)
    gamma = (1 + 0.95 ** (1.0 / m)) / 2
    return {"s0": s0, "pse": pse, "df": df, "t": t, "p": p, "me": float(stats.t.ppf(1 - ALPHA / 2, df) * pse),
            "sme": float(stats.t.ppf(gamma, df) * pse)}


def contrasts(x: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str], list[list[str]]]:
    """``(columns, labels, aliases)``: the ``(n, m)`` contrast columns of the
    ``(n, k)`` ±1 matrix ``x`` of distinct design points (main effects first),
    each column's label and, per column, the other products of at most two
    factors equal to it (``-a*b`` when negated)."""
    n, k = x.shape
    cols: list[np.ndarray] = []
    labels: list[str] = []
    aliases: list[list[str]] = []
    index: dict[bytes, int] = {}

    def key(c: np.ndarray) -> bytes:
        return np.sign(c * c[0]).astype(np.int8).tobytes()

    for size in range(1, k + 1):
        if len(cols) >= n - 1 and size > 2:
            break
        for combo in itertools.combinations(range(k), size):
            c = np.prod(x[:, combo], axis=1)
            label = "*".join(names[j] for j in combo)
            if np.all(c == c[0]):
                continue  # a word of the defining relation
            hit = index.get(key(c))
            if hit is not None and abs(abs(float(c @ cols[hit])) - n) < 1e-9:
                if size <= 2:
                    sign = "" if float(c @ cols[hit]) > 0 else "-"
                    aliases[hit].append(sign + label)
                continue
            if len(cols) >= n - 1:
                continue
            if cols and np.max(np.abs(np.column_stack(cols).T @ c)) > 1e-9:
                continue  # not orthogonal: a non-regular design, completed below
            index[key(c)] = len(cols)
            cols.append(c.astype(float))
            labels.append(label)
            aliases.append([])
    if len(cols) < n - 1:  # non-regular: the orthonormal complement, scaled like an effect
        basis = np.column_stack([np.ones(n), *cols])
        q, _ = np.linalg.qr(np.column_stack([basis, np.eye(n)]))
        extra = q[:, basis.shape[1]:n]
        for i in range(extra.shape[1]):
            cols.append(extra[:, i] * np.sqrt(n))
            labels.append(f"(error {i + 1})")
            aliases.append([])
    return np.column_stack(cols), labels, aliases


def _effects(cols: np.ndarray, y: np.ndarray) -> np.ndarray:
    n = len(y)
    return 2 * (cols.T @ y) / n


def screening(table: "pd.DataFrame", coded: "pd.DataFrame", factors: list[str],
              design_aliases: dict[str, list[Any]] | None = None, blocks: "pd.Series | None" = None
              ) -> dict[str, Any]:
    """The screening analysis of a two-level design.

    Args:
        table: :func:`~xdoe.analysis._response.run_table` rows (``y``, ``design_point``).
        coded: the runs' coded values (:func:`~xdoe.analysis._design_info.coded_frame`).
        factors: the two-level factors.
        design_aliases: the manifest's aliases (``design.doe.diagnostics.aliases``).
        blocks: the runs' blocks (an augmented design); two blocks of equal
            size enter as one more ±1 column ``block`` (its effect: block 1
            minus block 0), which the contrasts then keep apart from the factors.

    Returns:
        ``{"method": "lenth" | "pure error", "effects": [{"name", "effect",
        "p", "active", "aliases", "t"}] (every contrast, main effects first),
        "pse", "me", "sme", "df", "centre_points", "curvature": {"effect", "t",
        "df", "p", "centre_runs"} | None}``.
    """
    cube = np.all(np.isin(coded[factors].to_numpy(), (-1.0, 1.0)), axis=1)
    columns = list(factors)
    values = coded[factors].to_numpy()
    if blocks is not None and blocks.nunique() == 2:
        b = blocks.to_numpy()
        first = sorted(set(b))[0]
        values = np.column_stack([values, np.where(b == first, -1.0, 1.0)])
        columns.append("block")
    runs = table[cube]
    x_runs = values[cube]
    keys = [tuple(r) for r in x_runs]
    order = list(dict.fromkeys(keys))
    means = np.array([runs["y"].to_numpy()[[k == o for k in keys]].mean() for o in order])
    x = np.array(order, float)
    cols, labels, aliases = contrasts(x, columns)
    effects = _effects(cols, means)
    counts = np.array([sum(k == o for k in keys) for o in order])
    out: dict[str, Any] = {"centre_points": int((~cube).sum()), "points": len(order), "runs": int(cube.sum())}
    rows = []
    if counts.max() >= 2 and len(runs) > len(order):
        import statsmodels.api as sm

        full = np.column_stack([np.ones(len(order)), cols])[[order.index(k) for k in keys]]
        fit = sm.OLS(runs["y"].to_numpy(float), full).fit()
        p = np.asarray(fit.pvalues)[1:]
        effects = 2 * np.asarray(fit.params)[1:]
        out.update(method="pure error", df=float(fit.df_resid))
        t = np.asarray(fit.tvalues)[1:]
    else:
        stats = lenth(effects)
        p, t = stats["p"], stats["t"]
        out.update(method="lenth", pse=stats["pse"], me=stats["me"], sme=stats["sme"], df=stats["df"])
    for i, label in enumerate(labels):
        names = list(aliases[i])  # read off the runs analysed (the manifest's names follow the design's order)
        rows.append({"name": label, "effect": float(effects[i]), "t": float(t[i]), "p": float(p[i]),
                     "active": bool(p[i] < ALPHA), "aliases": names})
    out["effects"] = rows
    out["curvature"] = _curvature(table, cube)
    return out


def _curvature(table: "pd.DataFrame", cube: np.ndarray) -> dict[str, Any] | None:
    """Centre points against the cube (Montgomery 2012, 6.8): ``effect`` =
    mean(cube) - mean(centre), its t test on the centre points' pure error
    (``n_c - 1`` degrees of freedom, scipy.stats.t); ``None`` with fewer than
    two centre runs."""
    from scipy import stats

    y = table["y"].to_numpy(float)
    yc, yf = y[~cube], y[cube]
    if len(yc) < 2:
        return None
    s2 = float(np.var(yc, ddof=1))
    diff = float(yf.mean() - yc.mean())
    se = float(np.sqrt(s2 * (1 / len(yf) + 1 / len(yc))))
    t = diff / se if se > 0 else float("inf") * np.sign(diff)
    return {"effect": diff, "t": t, "df": len(yc) - 1, "p": float(2 * stats.t.sf(abs(t), len(yc) - 1)),
            "centre_runs": int(len(yc))}


def plot_half_normal(result: dict[str, Any], path: Any, *, title: str) -> Any:
    """Half-normal (Daniel 1959) plot: ``|effect|`` against half-normal
    quantiles ``Phi^-1(0.5 + 0.5 (i - 0.5) / m)`` (scipy.stats.norm), active
    effects labelled and drawn in colour, the line through the origin of
    slope PSE (Lenth) and the margin of error."""
    from scipy import stats

    from xdoe.analysis._figure import PALETTE, new_figure, save

    rows = sorted(result["effects"], key=lambda r: abs(r["effect"]))
    m = len(rows)
    q = stats.norm.ppf(0.5 + 0.5 * (np.arange(1, m + 1) - 0.5) / m)
    fig = new_figure(7, 5, svg=str(path).lower().endswith(".svg"))
    ax = fig.add_subplot()
    size = np.array([abs(r["effect"]) for r in rows])
    active = np.array([r["active"] for r in rows])
    ax.scatter(q[~active], size[~active], color="#777777", label="inactive", zorder=3)
    ax.scatter(q[active], size[active], color=PALETTE[1], label="active (p < 0.05)", zorder=3)
    shown = 0
    for qi, s, r in reversed(list(zip(q, size, rows))):  # largest first, labels alternately lower and higher
        if r["active"]:
            sign = "+" if r["effect"] > 0 else "-"
            ax.annotate(f"{r['name']} ({sign})", (qi, s), textcoords="offset points",
                        xytext=(6, -10 if shown % 2 else 4), fontsize=9)
            shown += 1
    if result.get("pse"):
        grid = np.linspace(0, q.max() * 1.3, 10)
        ax.plot(grid, grid * result["pse"], color=PALETTE[0], lw=1, label=f"slope PSE = {result['pse']:.3g}")
        ax.axhline(result["me"], color=PALETTE[2], lw=1, ls="--", label=f"ME = {result['me']:.3g}")
    ax.set_xlim(0, float(q.max()) * 1.3)  # room for the labels of the largest effects
    ax.set_xlabel("half-normal quantile")
    ax.set_ylabel("|effect| (high - low)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return save(fig, path)

"""Two-level designs: signed effects with their aliases, Lenth's pseudo
standard error without replication, a t test on the pure error with it, and
the half-normal (Daniel) plot.

* Effect of a contrast column ``c`` (±1): ``mean(y | c = +1) - mean(y | c = -1)``
  over the design points' mean responses (centre points left out).
* Contrasts: the main effects, then the products of two, three ... factors
  that are neither constant nor (up to sign) a contrast already taken, until
  ``m = points - 1`` contrasts (a regular fraction: one per alias chain); once
  a product is only partly correlated with them (a non-regular design) no
  product of more than three factors is searched, and a Plackett-Burman
  design keeps its main effects alone, completed by the unused columns of
  the published design (the "dummy" columns of the textbook analysis, so
  Lenth's PSE is the one over all ``n - 1`` columns), or when its points are
  not such a design by the orthonormal complement of its main effects (QR of
  the sorted points), each scaled to the variance of an effect, ``2 q'y / sqrt(n)``.
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
* A noise-free response (a deterministic simulation): effects, Lenth's PSE
  and the pure-error standard deviation within ``_exact.ROUNDING`` times the
  largest |response| of zero are floating-point residue and taken as 0; a
  non-zero effect over a zero error then has ``t = ±inf``, ``p = 0``, a zero
  one ``t = 0``, ``p = 1`` (never a test of rounding noise).

Checked against Montgomery (2012), Example 6.2 (filtration rate, a 2^4
design): effects, PSE 2.625, ME 6.75 (tests/analysis/test_screening.py).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._exact import snap, t_test

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["lenth", "contrasts", "screening"]

ALPHA = 0.05


def lenth(effects: np.ndarray, scale: float = 0.0) -> dict[str, Any]:
    """Lenth's PSE of ``effects`` (``m`` contrasts) with its t values, p values,
    margin of error and simultaneous margin of error (see the module docstring).
    A PSE within ``_exact.ROUNDING * scale`` of zero (``scale``: the largest |response|)
    is 0: a noise-free response (:func:`t_test`)."""
    from scipy import stats

    c = np.abs(np.asarray(effects, float))
    m = len(c)
    s0 = 1.5 * float(np.median(c))
    trimmed = c[c < 2.5 * s0]
    pse = 1.5 * float(np.median(trimmed)) if len(trimmed) else 0.0
    pse = float(snap(np.array([pse]), scale)[0])
    df = m / 3.0
    t, p = t_test(np.asarray(effects, float), np.full(m, pse), df)
    gamma = (1 + 0.95 ** (1.0 / m)) / 2
    return {"s0": s0, "pse": pse, "df": df, "t": t, "p": p, "me": float(stats.t.ppf(1 - ALPHA / 2, df) * pse),
            "sme": float(stats.t.ppf(gamma, df) * pse)}


#: members of an alias chain listed, by order (block counted as a factor): main effects,
#: two- and three-factor interactions (Montgomery 2012, 8.2: interactions of four or more are ignored)
LIST_ORDER = 3
BLOCK = "block"


def _label(combo: tuple[int, ...], names: list[str]) -> str:
    """``alpha*gamma``; the block column, when part of ``combo``, first (``block*epsilon``)."""
    parts = [names[j] for j in combo]
    blocks = [p for p in parts if p == BLOCK]
    return "*".join(blocks + [p for p in parts if p != BLOCK])


def _member_key(combo: tuple[int, ...], names: list[str]) -> tuple[int, int, tuple[int, ...]]:
    """Order of the members of a chain: the block effect first, then factor-only terms
    by order, then terms with the block by order (a factor x block column is named by
    the factors' interaction it equals)."""
    has_block = any(names[j] == BLOCK for j in combo)
    if has_block and len(combo) == 1:
        return (-1, 0, combo)
    return (int(has_block), len(combo), combo)


def contrasts(x: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str], list[list[str]]]:
    """``(columns, labels, aliases)``: the ``(n, m)`` contrast columns of the
    ``(n, k)`` ±1 matrix ``x`` of distinct design points (``m = n - 1``, main
    effects first), each column's label and its alias chain: the other
    products of at most :data:`LIST_ORDER` columns equal to it (``-a*b`` when
    negated). A column named ``block`` (two blocks, ±1) is a column like the
    factors, so a factor x block product lands in the chain of the factors'
    interaction it equals; a chain is named by its lowest-order member without
    the block (the block effect itself: ``block``). In a regular fraction
    every product is constant (a word), equal to a chain up to sign, or
    orthogonal to every chain; a non-regular design (a product partly
    correlated with a chain) is searched up to :data:`LIST_ORDER` factors
    only. A Plackett-Burman design (its rows those of the published design's
    first ``k`` columns) keeps its main effects, completed by the design's
    unused columns; another non-regular one is completed by the orthonormal
    complement of its contrasts (QR of the sorted rows), each column scaled
    to the variance of an effect; both labelled ``(error i)``.

    Source: alias chains of a regular 2^(k-p) fraction and of a fold-over
    run as a second block, Montgomery (2012), *Design and Analysis of
    Experiments*, 8th ed., 8.2 and 8.5.
    """
    n, k = x.shape
    chains: list[tuple[np.ndarray, list[tuple[int, tuple[int, ...]]]]] = []  # column, [(sign, combo)]
    index: dict[bytes, int] = {}

    def key(c: np.ndarray) -> bytes:
        return np.sign(c * c[0]).astype(np.int8).tobytes()

    regular, unused = True, None
    for size in range(1, k + 1):
        if size > LIST_ORDER and (len(chains) >= n - 1 or not regular):
            break  # (a non-regular design never fills its n - 1 chains: no search through all 2^k products)
        for combo in itertools.combinations(range(k), size):
            c = np.prod(x[:, combo], axis=1)
            if np.all(c == c[0]):
                continue  # a word of the defining relation
            hit = index.get(key(c))
            if hit is not None and abs(abs(float(c @ chains[hit][0])) - n) < 1e-9:
                if size <= LIST_ORDER:
                    chains[hit][1].append((1 if float(c @ chains[hit][0]) > 0 else -1, combo))
                continue
            if len(chains) >= n - 1 or unused is not None:
                continue
            if chains and np.max(np.abs(np.column_stack([ch[0] for ch in chains]).T @ c)) > 1e-9:
                if regular:  # not orthogonal: a non-regular design, completed below
                    regular, unused = False, _unused_plackett_burman_columns(x)
                continue
            index[key(c)] = len(chains)
            chains.append((c.astype(float), [(1, combo)]))
    if unused is not None:  # a Plackett-Burman design: its main effects, then its unused columns
        chains = [ch for ch in chains if len(ch[1][0][1]) == 1]
    cols, labels, aliases = [], [], []
    for column, members in chains:
        members.sort(key=lambda m: _member_key(m[1], names))
        sign0, first = members[0]
        cols.append(column * sign0)  # the chain's column is its name's (a sign flips with it)
        labels.append(_label(first, names))
        aliases.append([("" if s * sign0 > 0 else "-") + _label(c, names) for s, c in members[1:]])
    order = sorted(range(len(cols)), key=lambda i: (_member_key(chains[i][1][0][1], names)[0] != 0,
                                                    len(chains[i][1][0][1]), i))
    mains = [i for i in order if len(chains[i][1][0][1]) == 1 and names[chains[i][1][0][1][0]] != BLOCK]
    rest = [i for i in order if i not in mains]
    order = mains + rest
    cols, labels, aliases = [cols[i] for i in order], [labels[i] for i in order], [aliases[i] for i in order]
    if len(cols) < n - 1:  # non-regular: the design's unused columns, else the orthonormal complement
        extra = unused
        if extra is None or len(cols) + extra.shape[1] != n - 1:
            extra = _complement(np.column_stack([np.ones(n), *cols])) * np.sqrt(n)  # scaled like an effect
        for i in range(extra.shape[1]):
            cols.append(extra[:, i])
            labels.append(f"(error {i + 1})")
            aliases.append([])
    return np.column_stack(cols), labels, aliases


def _unused_plackett_burman_columns(x: np.ndarray) -> np.ndarray | None:
    """``(n, n - 1 - k)`` ±1: the columns ``k + 1 .. n - 1`` of the published ``n``-run
    Plackett-Burman design (:func:`xdoe.design.plackett_burman`) whose first ``k`` columns
    are the rows of the ``(n, k)`` matrix ``x`` in some order (a column of ``x`` may be
    reversed: a factor coded the other way round), rows in ``x``'s order; ``None``
    when ``x`` is not such a design. These are the "dummy" columns whose effects estimate the
    error in the textbook analysis of a saturated design (Lenth 1989 over all ``n - 1``
    columns): Lenth's PSE is not invariant to a rotation of the error space, so an
    arbitrary basis of it would give another PSE, and one that changes with the run order."""
    from xdoe.design import Factor, plackett_burman
    from xdoe.errors import DesignError

    n, k = x.shape
    try:
        full = plackett_burman([Factor(f"c{j}", levels=(0, 1)) for j in range(n - 1)]).coded()
    except DesignError:
        return None
    rows = {tuple(r): i for i, r in enumerate(full[:, :k])}
    if len(full) != n or len(rows) != n:
        return None
    for low in x:  # the run taken as the design's all-low last run: columns coded the other way round match too
        index = [rows.get(tuple(r)) for r in x * -low]
        if None not in index and len(set(index)) == n:
            return full[index, k:]
    return None


def _complement(basis: np.ndarray) -> np.ndarray:
    """An orthonormal basis ``(n, n - p)`` of the complement of the ``(n, p)`` full-rank
    ``basis``, by QR of the rows in sorted order (so it does not depend on the runs' order)."""
    n = len(basis)
    order = np.lexsort(basis.T[::-1])
    q, _ = np.linalg.qr(np.column_stack([basis[order], np.eye(n)]))
    out = np.empty((n, n - basis.shape[1]))
    out[order] = q[:, basis.shape[1]:n]
    return out


def _kind(label: str, aliases: list[str], factors: list[str]) -> str:
    """``main`` (a factor's main effect), ``block``, ``interaction`` (a chain
    with a two-factor interaction of the factors), ``other``."""
    if label in factors:
        return "main"
    if label == BLOCK:
        return "block"
    terms = [label] + [a.lstrip("-") for a in aliases]
    if any(t.count("*") == 1 and BLOCK not in t.split("*") for t in terms):
        return "interaction"
    return "other"


def screening(table: "pd.DataFrame", coded: "pd.DataFrame", factors: list[str],
              blocks: "pd.Series | None" = None) -> dict[str, Any]:
    """The screening analysis of a two-level design: one model, one method.

    The model: per distinct cube point (and block) a cell; the runs are fitted
    by OLS (statsmodels) on an intercept, the ``m = cells - 1`` contrast
    columns (:func:`contrasts`, zero at centre points) and, with centre runs,
    a centre indicator. ``effect = 2 * coefficient`` (high - low, the
    contrast's difference of means). With replication anywhere (replicated
    cube points, two or more centre runs) the residual is pure error and
    ``t``, ``p`` are the model's t tests on its ``df`` (``method: pure
    error``; Montgomery 2012, 6.8: the centre points' pure error for an
    unreplicated cube); ``F = t^2`` and partial eta² ``= t^2 / (t^2 + df)``.
    Without any replication: Lenth's PSE (``method: lenth``, ``df = m / 3``,
    no F). Curvature (cube mean - centre mean) is the centre indicator's test
    in the same model.

    Args:
        table: :func:`~xdoe.analysis._response.run_table` rows (``y``, ``design_point``).
        coded: the runs' coded values (:func:`~xdoe.analysis._design_info.coded_frame`),
            each factor at -1, +1, or 0 (a centre run: every factor 0).
        factors: the two-level factors.
        blocks: the runs' blocks (an augmented design); two blocks enter as
            one more ±1 column ``block`` (its effect: block 1 minus block 0),
            whose products with the factors land in the factors' chains;
            three or more as a fixed effect (one indicator per block after the first).

    Returns:
        ``{"method": "lenth" | "pure error", "effects": [{"name", "kind",
        "effect", "t", "F", "p", "eta_sq", "active", "aliases"}] (every
        contrast, main effects first), "pse", "me", "sme" (Lenth), "df",
        "runs", "points", "centre_points", "blocks", "curvature": {"effect",
        "t", "df", "p", "centre_runs"} | None, "_fit": (the statsmodels fit, {coded
        setting: its model row in the first block})}``.
    """
    import statsmodels.api as sm

    values = coded[factors].to_numpy(float)
    cube = np.all(np.isin(values, (-1.0, 1.0)), axis=1)
    centre = np.all(values == 0.0, axis=1)
    columns = list(factors)
    n_blocks = 1 if blocks is None else int(blocks.nunique())
    if n_blocks == 2:
        b = blocks.to_numpy()  # type: ignore[union-attr]
        first = sorted(set(b))[0]
        values = np.column_stack([values, np.where(b == first, -1.0, 1.0)])
        columns.append(BLOCK)
    keys = [tuple(r) for r in values[cube]]
    order = list(dict.fromkeys(keys))
    x = np.array(order, float)
    cols, labels, aliases = contrasts(x, columns)
    where = {o: i for i, o in enumerate(order)}
    design = np.zeros((len(table), cols.shape[1]))
    design[cube] = cols[[where[k] for k in keys]]
    if BLOCK in columns and centre.any():  # the block column also splits the centre runs
        j = labels.index(BLOCK) if BLOCK in labels else None
        if j is not None:
            design[centre, j] = values[centre, -1]
    parts = [np.ones(len(table)), design] + ([centre.astype(float)] if centre.any() else [])
    if n_blocks >= 3:  # three or more blocks: a fixed block effect, one indicator per block after the first
        b = blocks.to_numpy()  # type: ignore[union-attr]
        parts += [(b == level).astype(float) for level in sorted(set(b))[1:]]
    used = cube | centre
    full = np.column_stack(parts)
    xm = full[used]
    y = table["y"].to_numpy(float)[used]
    fit = sm.OLS(y, xm).fit()
    scale = float(np.abs(y).max()) if len(y) else 0.0
    coef = snap(fit.params, scale)  # noise-free: residues of rounding are 0 (module docstring)
    effects = 2 * coef[1:1 + len(labels)]
    out: dict[str, Any] = {"centre_points": int(centre.sum()), "points": len(order), "runs": int(cube.sum()),
                           "blocks": n_blocks}
    df = float(fit.df_resid)
    if df >= 1:
        sigma = float(snap(np.array([np.sqrt(fit.scale)]), scale)[0])
        errors = np.asarray(fit.bse) / np.sqrt(fit.scale) * sigma if sigma > 0 else np.zeros(len(coef))
        t_all, p_all = t_test(coef, errors, df)
        t, p = t_all[1:1 + len(labels)], p_all[1:1 + len(labels)]
        with np.errstate(invalid="ignore", divide="ignore"):  # an exact fit: t is infinite, eta² 1
            F, eta = t ** 2, np.where(np.isinf(t), 1.0, t ** 2 / (t ** 2 + df))
        out.update(method="pure error", df=df)
    else:
        stats = lenth(effects, scale)
        t, p = stats["t"], stats["p"]
        F = eta = np.full(len(labels), np.nan)
        out.update(method="lenth", pse=stats["pse"], me=stats["me"], sme=stats["sme"], df=stats["df"])
    out["effects"] = [{"name": label, "kind": _kind(label, aliases[i], factors), "effect": float(effects[i]),
                       "t": float(t[i]), "F": float(F[i]), "p": float(p[i]), "eta_sq": float(eta[i]),
                       "active": bool(p[i] < ALPHA), "aliases": list(aliases[i])}
                      for i, label in enumerate(labels)]
    if np.linalg.matrix_rank(xm) < xm.shape[1]:
        out["warning"] = ("some contrasts are confounded with the blocks: their estimates are not identifiable "
                          "(the blocks absorb them)")
    # the model's row of each setting (its first block's), for predictions at a design point (confirmation runs)
    first_block = None if blocks is None else sorted(set(blocks.to_numpy()))[0]
    rows: dict[tuple[float, ...], np.ndarray] = {}
    for i in np.flatnonzero(used):
        if first_block is None or blocks.to_numpy()[i] == first_block:  # type: ignore[union-attr]
            rows.setdefault(tuple(float(v) for v in values[i, :len(factors)]), full[i])
    out["_fit"] = (fit, rows)
    out["curvature"] = None
    if centre.any() and df >= 1:
        g = 1 + len(labels)
        out["curvature"] = {"effect": -float(coef[g]), "t": -float(t_all[g]), "df": df, "p": float(p_all[g]),
                            "centre_runs": int(centre.sum())}
    return out


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

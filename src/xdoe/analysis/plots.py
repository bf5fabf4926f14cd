"""Pictures of a campaign (matplotlib, no pyplot state): learning curves,
main effects and interactions, the design's pairwise projections, and the
lay-down diagram of a run (:func:`plot_laydown`).

Each function writes a PNG (100 dpi) or SVG chosen by the output's suffix and
returns the path; sizes are fixed so pictures are readable at 100 % zoom.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._figure import PALETTE, metric_label, new_figure, response_label, save
from xdoe.analysis._laydown import plot_laydown
from xdoe.errors import InputError
from xdoe.results import experiment_label

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._response import Response
    from xdoe.analysis._result import Analysis

__all__ = ["plot_curves", "plot_effects", "plot_design", "plot_laydown"]


def _label(levels: dict[str, Any]) -> str:
    from xdoe.analysis._format import fmt_levels

    return fmt_levels(levels)


def plot_curves(frame: "pd.DataFrame", output: str | Path, *, by: str | None = None, phase: str | None = None,
                metric: str = "objective", window: int | None = None) -> Path:
    """Learning curves: ``metric`` per episode of ``phase`` (default: the
    first phase), smoothed by a moving average of ``window`` episodes (default
    ~2 % of the episodes), one line per level of factor ``by`` (default: per
    design point, labelled with its levels) with the mean over runs and a
    95 % t band (``scipy.stats.t``) over runs.

    Raises:
        InputError: an unknown phase or factor.
    """
    from scipy import stats

    from xdoe.analysis._response import Response, display_name, factor_columns, phase_rows

    rows, phase = phase_rows(frame, Response(phase=phase or str(frame["phase"].iloc[0])))
    names = {display_name(c): c for c in factor_columns(frame)}
    if by is not None and by not in names:
        raise InputError(f"no factor {by!r} (factors: {', '.join(names) or 'none'})")
    per_run = rows.groupby(["run", "episode"], sort=True)[metric].mean().unstack("episode")
    n_episodes = per_run.shape[1]
    window = window or max(1, round(n_episodes / 50))
    smooth = per_run.T.rolling(window, min_periods=1).mean().T
    first = rows.groupby("run", sort=True).first()
    branch = first["branch"] if "branch" in first.columns else None  # include_branches: own curves
    if by is None:
        keys = {run: (int(first.loc[run, "design_point"]), _label(
            {n: first.loc[run, c] for n, c in names.items() if first.loc[run, c] is not None
             and first.loc[run, c] == first.loc[run, c]})) for run in smooth.index}
        title_by = "design point"
    else:
        keys = {run: (0, f"{by}={first.loc[run, names[by]]}" if first.loc[run, names[by]] is not None
                      else f"{by} n/a") for run in smooth.index}
        title_by = by
    if branch is not None:
        for run in smooth.index:
            if isinstance(branch.get(run), str):
                keys[run] = (1 << 30, f"branch {run}")
    groups: dict[Any, list] = {}
    for run, key in keys.items():
        groups.setdefault(key, []).append(run)
    fig = new_figure(9, 5.2)
    ax = fig.add_subplot()
    x = np.arange(1, n_episodes + 1)
    for i, (key, runs) in enumerate(sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))):
        values = smooth.loc[runs].to_numpy(float)
        mean = np.nanmean(values, axis=0)
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(x, mean, color=colour, lw=1.8, label=f"{key[1]}  (n={len(runs)})")
        if len(runs) > 1:
            sem = stats.sem(values, axis=0, nan_policy="omit")
            half = np.asarray(sem) * stats.t.ppf(0.975, len(runs) - 1)
            ax.fill_between(x, mean - half, mean + half, color=colour, alpha=0.2, lw=0)
    ax.set_xlabel(f"episode (phase {phase!r})")
    ax.set_ylabel(f"{metric_label(metric)} (moving average of {window})")
    ax.set_title(f"{experiment_label(frame)} · {metric_label(metric)}, phase {phase!r} · {len(smooth)} runs\n"
                 f"learning curves by {title_by}: mean over repetitions with 95 % band")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=9, frameon=True)
    return save(fig, output)


def plot_effects(analysis: "Analysis", frame: "pd.DataFrame", output: str | Path, *,
                 response: "Response | None" = None) -> Path:
    """Main-effects plot: one panel per factor (strongest first) with each
    level's mean response and its 95 % bootstrap interval over runs (a continuous factor: the
    runs and a least-squares line), plus the interaction plot of the two
    strongest unconditional categorical factors when there are two."""
    from xdoe.analysis._branches import split_branches
    from xdoe.analysis._response import Response, run_table

    response = response or Response()
    table, _ = run_table(split_branches(frame)[0], response, analysis.agent)  # the design's runs
    factors = analysis.factors
    cats = [f for f in factors if f.kind == "categorical"]
    panels = len(factors) + (1 if len(cats) >= 2 else 0)
    if panels == 0:
        raise InputError("no factor varies: nothing to plot")
    cols = min(panels, 3)
    rows_ = math.ceil(panels / cols)
    fig = new_figure(4.2 * cols + 0.4, 3.6 * rows_ + 0.6)
    axes = fig.subplots(rows_, cols, squeeze=False).ravel()
    ylabel = response_label(analysis.response)
    for ax, f in zip(axes, factors):
        if f.kind == "continuous":
            sub = table[table[f.name].notna()]
            xs, ys = sub[f.name].astype(float).to_numpy(), sub["y"].to_numpy(float)
            ax.scatter(xs, ys, s=18, color=PALETTE[0], alpha=0.7)
            if len(xs) > 1 and np.ptp(xs) > 0:
                k, b = np.polyfit(xs, ys, 1)
                grid = np.linspace(xs.min(), xs.max(), 50)
                ax.plot(grid, k * grid + b, color=PALETTE[1])
            ax.set_xlabel(f"{f.name} (standardised coefficient {f.effect:.3g})")
        else:
            pos = np.arange(len(f.levels))
            means = np.array([lv.mean for lv in f.levels])
            err = np.array([[lv.mean - lv.ci_low, lv.ci_high - lv.mean] for lv in f.levels]).T
            err = np.nan_to_num(err, nan=0.0)
            ax.errorbar(pos, means, yerr=err, fmt="o-", color=PALETTE[0], capsize=5, lw=1.6, ms=6)
            ax.set_xticks(pos, [str(lv.level) for lv in f.levels])
            ax.set_xlim(-0.5, len(pos) - 0.5)
            ax.set_xlabel(f.name + (f" (within {f.within})" if f.within else ""))
        p = "-" if f.p != f.p else ("p<0.0001" if f.p < 1e-4 else f"p={f.p:.3g}")
        eta = "-" if f.eta_sq != f.eta_sq else f"{f.eta_sq:.2f}"
        ax.set_title(f"{f.name}: {p}, partial η²={eta}", fontsize=10)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(True, alpha=0.3)
    used = len(factors)
    if len(cats) >= 2:
        ax = axes[used]
        a, b = cats[0].name, cats[1].name
        sub = table[table[a].notna() & table[b].notna()]
        a_levels = [lv.level for lv in cats[0].levels]
        for i, lb in enumerate(lv.level for lv in cats[1].levels):
            means = [sub[(sub[a] == la) & (sub[b] == lb)]["y"].mean() for la in a_levels]
            ax.plot(range(len(a_levels)), means, "o-", color=PALETTE[i % len(PALETTE)], label=f"{b}={lb}")
        ax.set_xticks(range(len(a_levels)), [str(v) for v in a_levels])
        ax.set_xlabel(a)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.set_title(f"interaction {a} x {b}", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        used += 1
    for ax in axes[used:]:
        ax.set_visible(False)
    fig.suptitle(f"{analysis.title()}\nmain effects: level means with 95 % bootstrap CI over runs", fontsize=10)
    return save(fig, output)


def plot_design(design: Any, output: str | Path, *, title: str = "") -> Path:
    """Pairwise projections of a :class:`~xdoe.design.Design`: every pair of
    factors as a scatter of the design points (categorical factors on their
    level positions, continuous ones on their value, log-scaled when so
    sampled), each factor's level counts on the diagonal; a conditional
    factor's inactive points sit at ``n/a``."""
    from matplotlib.ticker import MaxNLocator, NullFormatter

    factors = list(design.factors)
    d = len(factors)
    if d == 0:
        raise InputError("the design has no factors: nothing to plot")
    pts, active = np.asarray(design.points), np.asarray(design.active)

    def coords(j: int) -> np.ndarray:
        f = factors[j]
        if f.levels is not None:
            c = pts[:, j].astype(float)
        else:
            c = np.array([f.value(u) for u in pts[:, j]], dtype=float)
        return np.where(active[:, j], c, np.nan)

    def axis(ax: Any, j: int, which: str) -> None:
        f = factors[j]
        setter = ax.set_xticks if which == "x" else ax.set_yticks
        if f.levels is not None:
            labels = [_short(v) for v in f.levels] + (["n/a"] if not active[:, j].all() else [])
            has_na = labels[-1] == "n/a"
            setter(range(len(labels)) if not has_na else [*range(len(f.levels)), -1], labels)
            (ax.set_xlim if which == "x" else ax.set_ylim)(-1.5 if has_na else -0.5, len(f.levels) - 0.5)
        elif f.scale == "log":
            (ax.set_xscale if which == "x" else ax.set_yscale)("log")
            (ax.xaxis if which == "x" else ax.yaxis).set_minor_formatter(NullFormatter())

    size = min(2.6 * d + 0.8, 13)
    fig = new_figure(size, size if d > 1 else 2.8)
    axes = fig.subplots(d, d, squeeze=False)
    for i in range(d):
        for j in range(d):
            ax = axes[i][j]
            if j > i:  # the upper triangle mirrors the lower one
                ax.set_visible(False)
                continue
            if i == j:
                f = factors[j]
                c = coords(j)
                if f.levels is not None:
                    counts = [int(np.sum(c == k)) for k in range(len(f.levels))]
                    ax.bar(range(len(f.levels)), counts, color=PALETTE[0])
                    if not active[:, j].all():
                        ax.bar([-1], [int(np.sum(np.isnan(c)))], color="#999999")
                else:
                    v = c[~np.isnan(c)]
                    k = min(10, max(3, len(v) // 2))
                    bins = np.geomspace(f.low, f.high, k + 1) if f.scale == "log" else np.linspace(f.low, f.high, k + 1)
                    ax.hist(v, bins=bins, color=PALETTE[0], edgecolor="white")
                    if np.isnan(c).any():
                        ax.set_title(f"{int(np.isnan(c).sum())} point(s) n/a", fontsize=8)
                ax.set_ylabel("points" if j == 0 else "")
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
                axis(ax, j, "x")
            else:
                x, y = coords(j), coords(i)
                xs = np.where(np.isnan(x), -1, x) if factors[j].levels is not None else x
                ys = np.where(np.isnan(y), -1, y) if factors[i].levels is not None else y
                ax.margins(0.12)
                ax.scatter(xs, ys, s=28, color=PALETTE[0], alpha=0.75, edgecolor="white", linewidth=0.5)
                axis(ax, j, "x")
                axis(ax, i, "y")
            if i == d - 1:
                ax.set_xlabel(factors[j].name)
            if j == 0 and i != j:
                ax.set_ylabel(factors[i].name)
            ax.tick_params(labelsize=8)
            ax.grid(True, alpha=0.3)
    fig.suptitle(title or f"Design: {design.method}, {len(design)} points, pairwise projections")
    return save(fig, output)


def _short(value: Any, width: int = 14) -> str:
    from xdoe.results import readable

    text = str(readable(value))
    return text if len(text) <= width else text[: width - 1] + "…"

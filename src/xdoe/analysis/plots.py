"""Pictures of a campaign (matplotlib, no pyplot state): learning curves,
main effects and interactions, the design's pairwise projections, the
picture of a design's analysis (:func:`plot_doe`: half-normal, contour or
mu*-sigma plot) and the lay-down diagram of a run (:func:`plot_laydown`;
:func:`write_laydown` puts ``laydown.svg`` into a results folder, drawn once
per run structure).

Each function writes a PNG (100 dpi) or SVG chosen by the output's suffix and
returns the path; sizes are fixed so pictures are readable at 100 % zoom
(the curves grow by a legend row per two groups beyond three).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._figure import PALETTE, import_matplotlib, metric_label, new_figure, response_label, save
from xdoe.analysis._doe import doe_plot_title, plot_doe
from xdoe.analysis._laydown import plot_laydown, write_laydown
from xdoe.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._response import Response
    from xdoe.analysis._result import Analysis

__all__ = ["plot_curves", "plot_effects", "plot_design", "plot_doe", "doe_plot_title", "plot_laydown", "write_laydown"]


_X_LABELS = {"steps": "environment steps", "episodes": "episodes", "wall": "wall time of the episodes [s]"}


def plot_curves(store: Any, output: str | Path, *, experiment: str | None = None, include_branches: bool = False,
                by: str | None = None, phase: str | None = None, metric: str = "objective", x: str = "steps",
                stat: str = "mean", window: int | None = None, seed: int = 0, keep_cut: bool = False,
                strongest: Any = None, agent: str | None = None) -> Path:
    """Learning curves of one phase (default: the first) and, beside them,
    the last test phase after it as points. An episode's ``metric`` is the
    mean over its agents, or with ``agent`` that agent's alone (as the
    dashboard's run page draws a line per agent).

    Curves: ``metric`` per episode, smoothed per run by a trailing moving
    average of ``window`` episodes (default ~5 % of the shortest run's
    episodes), against environment steps (``x="steps"``, default),
    episodes or wall time; every run interpolated onto a common grid over
    the range all runs of a group cover, so each point aggregates the same
    ``n`` runs; the line is ``stat`` (mean, iqm, median) over runs, the band
    its 95 % percentile bootstrap interval over runs (seeded by ``seed``).
    See :mod:`xdoe.analysis._curves` for the method and its sources
    (rliable, rl-baselines3-zoo's ``plot_train.py``, OpenAI baselines'
    ``plot_util``). Episodes cut short by a step budget or a stop are left
    out unless ``keep_cut``.

    Test panel: per run the mean ``metric`` of its test episodes (a dot
    each) and ``stat`` over runs with its bootstrap interval.

    Groups (one colour each, never repeated): ``by`` a factor's name, or
    ``"point"`` per design point; default per design point when there are
    at most 8, else by the strongest factor (``strongest()``; default the
    first of :func:`xdoe.analysis.analyze`'s ranking for the default response).
    With ``include_branches`` each branched or grown session is a curve of its own.

    Read from ``store`` (a :class:`~xdoe.store.Store`), ``experiment``'s
    runs (needed when the store holds several experiments; the title
    names it), without loading their episodes: the database pools each
    episode's agents, a few runs per query, in one pass
    (:func:`xdoe.analysis._curve_sets.store_curves`); memory grows with
    runs x grid points. ``xrun plot curves``, ``xrun report`` and the
    dashboard draw with it.

    Raises:
        AmbiguousExperimentError: no ``experiment`` and the store holds runs
            of several (as :func:`xdoe.results.load`).
        InputError: no episodes, an unknown phase, factor, x axis or
            statistic, or runs that share no range of x.
        StoreError: the store cannot be read.
    """
    from xdoe.analysis._curve_sets import store_curves

    if not hasattr(store, "database"):
        raise TypeError(f"plot_curves reads a Store (xdoe.store.Store), not {type(store).__name__}")
    curves = store_curves(store, experiment, include_branches=include_branches, by=by, phase=phase, metric=metric,
                          x=x, stat=stat, window=window, seed=seed, keep_cut=keep_cut, strongest=strongest,
                          agent=agent)
    return _draw_curves(curves, output, metric=metric, x=x, stat=stat, seed=seed, keep_cut=keep_cut)


def _draw_curves(curves: Any, output: str | Path, *, metric: str, x: str, stat: str, seed: int,
                 keep_cut: bool) -> Path:
    """The picture of a :class:`~xdoe.analysis._curve_sets.CurveSet`."""
    from xdoe.analysis._curves import describe, stat_label

    groups = curves.curves
    test = curves.test_phase
    fig = new_figure(12 if test is not None else 9, 5.2 + 0.18 * math.ceil(len(groups) / (2 if len(groups) > 3 else 1)))
    if test is not None:
        ax, tax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3.2, 1]})
    else:
        ax, tax = fig.add_subplot(), None
    colours = _colours(len(groups))
    for i, (label, band) in enumerate(groups):
        if band is None:
            continue
        ax.plot(band.x, band.center, color=colours[i], lw=1.8, label=f"{label}  (n={band.n})")
        if band.n > 1:
            ax.fill_between(band.x, band.low, band.high, color=colours[i], alpha=0.2, lw=0)
        if tax is not None:
            _test_points(tax, curves.test_scores[i], stat, seed, i, colours[i])
    note = "" if keep_cut or not curves.cut else f"; {curves.cut} episode row(s) cut by a step budget or stop left out"
    ax.set_xlabel(f"{_X_LABELS[x]} (phase {curves.phase!r}){note}")
    ax.set_ylabel(f"{metric_label(metric)} (moving average of {curves.window})")
    who = "" if curves.agent is None else f" of agent {curves.agent!r}"
    ax.set_title(f"{curves.experiment} · {metric_label(metric)}{who}, phase {curves.phase!r} · {curves.runs} runs\n"
                 f"learning curves by {curves.by}", fontsize=11)
    ax.grid(True, alpha=0.3)
    # below the axes, never over the curves
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2 if len(groups) > 3 else 1,
               fontsize=8, frameon=True, title=describe(stat, seed), title_fontsize=8)
    if tax is not None:
        tax.set_title(f"phase {test!r} (test): per run,\n{stat_label(stat)} with 95 % "
                      "bootstrap CI", fontsize=9)
        tax.set_ylabel(f"mean {metric_label(metric)}", fontsize=9)
        tax.set_xticks(range(len(groups)), [str(g[0]).split(":")[0] for g in groups], fontsize=8,
                       rotation=30 if len(groups) > 4 else 0)
        tax.set_xlim(-0.6, len(groups) - 0.4)
        tax.grid(True, alpha=0.3)
    return save(fig, output)


def _colours(k: int) -> list[Any]:
    """``k`` distinct colours: the Okabe-Ito palette up to 8, else viridis samples."""
    if k <= len(PALETTE):
        return list(PALETTE[:k])
    import_matplotlib()  # matplotlib's first import under its lock (threads draw at once)
    from matplotlib import colormaps

    return [colormaps["viridis"](v) for v in np.linspace(0.0, 0.95, k)]


def _test_points(ax: Any, scores: np.ndarray, stat: str, seed: int, i: int, colour: Any) -> None:
    from xdoe.analysis._curves import aggregate_band

    if scores.size == 0:
        return
    offsets = np.linspace(-0.15, 0.15, scores.size) if scores.size > 1 else np.zeros(1)
    ax.scatter(i + offsets, scores, s=16, color=colour, alpha=0.6, edgecolor="none")
    center, low, high = aggregate_band(scores[:, None], stat, seed=seed, key=(3, i))
    err = None if np.isnan(low[0]) else [[center[0] - low[0]], [high[0] - center[0]]]
    ax.errorbar([i], center, yerr=err, fmt="_", color=colour, ms=18, mew=2.2, capsize=6, lw=1.6)


def plot_effects(analysis: "Analysis", frame: "pd.DataFrame", output: str | Path, *,
                 response: "Response | None" = None) -> Path:
    """Main-effects plot: one panel per factor (strongest first) with each
    level's mean response and its 95 % bootstrap interval over runs (a continuous factor: the
    runs and a least-squares line), plus the interaction plot of the two
    strongest unconditional categorical factors when there are two.
    ``frame`` holds the runs ``analysis`` answers (one experiment).

    Raises:
        AmbiguousExperimentError: ``frame`` holds several experiments.
        InputError: ``frame`` is of another experiment than ``analysis``, or
            no factor varies.
    """
    from xdoe.analysis._branches import split_branches
    from xdoe.analysis._response import Response, run_table
    from xdoe.results import experiment_label, frame_experiment

    frame_experiment(frame)  # one experiment's runs, never several pooled
    if analysis.experiment is not None and experiment_label(frame) != analysis.experiment:
        raise InputError(f"the frame holds experiment {experiment_label(frame)}, the analysis answers "
                         f"{analysis.experiment}: plot an analysis with the frame it was made of")
    response = response or Response()
    table, _ = run_table(split_branches(frame)[0], response, analysis.agent)  # the design's runs
    factors = analysis.factors
    cats = [f for f in factors if f.kind in ("categorical", "two-level")]
    panels = len(factors) + (1 if len(cats) >= 2 else 0)
    if panels == 0:
        raise InputError("no factor varies: nothing to plot")
    cols = min(panels, 3)
    rows_ = math.ceil(panels / cols)
    fig = new_figure(4.2 * cols + 0.4, 3.6 * rows_ + 0.6)
    axes = fig.subplots(rows_, cols, squeeze=False).ravel()
    ylabel = response_label(analysis.response)
    for ax, f in zip(axes, factors):
        if f.kind in ("continuous", "sensitivity") and not f.levels:
            sub = table[table[f.name].notna()]
            xs, ys = sub[f.name].astype(float).to_numpy(), sub["y"].to_numpy(float)
            ax.scatter(xs, ys, s=18, color=PALETTE[0], alpha=0.7)
            if len(xs) > 1 and np.ptp(xs) > 0:
                k, b = np.polyfit(xs, ys, 1)
                grid = np.linspace(xs.min(), xs.max(), 50)
                ax.plot(grid, k * grid + b, color=PALETTE[1])
            what = "standardised coefficient" if f.method == "anova" else "effect"
            ax.set_xlabel(f"{f.name} ({what} {f.effect:.3g})")
        else:
            pos = np.arange(len(f.levels))
            means = np.array([lv.mean for lv in f.levels])
            err = np.array([[lv.mean - lv.ci_low, lv.ci_high - lv.mean] for lv in f.levels]).T
            err = np.nan_to_num(err, nan=0.0)
            ax.errorbar(pos, means, yerr=err, fmt="o-", color=PALETTE[0], capsize=5, lw=1.6, ms=6)
            ax.set_xticks(pos, _tick_texts([lv.level for lv in f.levels]))
            ax.set_xlim(-0.5, len(pos) - 0.5)
            ax.set_xlabel(f.name + (f" (within {f.within})" if f.within else ""))
        p = "-" if f.p != f.p else ("p<0.0001" if f.p < 1e-4 else f"p={f.p:.3g}")
        if f.kind == "two-level":  # the screening model's signed effect and its method
            ax.set_title(f"{f.name}: effect {f.effect:+.3g}, {p} ({f.method})", fontsize=10)
        else:  # the effect the tables give (a surface's twice coded slope, largest minus smallest mean...)
            eta = "-" if f.eta_sq != f.eta_sq else f"{f.eta_sq:.2f}"
            effect = f"effect {f.effect:.3g}, " if f.levels and f.effect == f.effect else ""
            ax.set_title(f"{f.name}: {effect}{p}, partial η²={eta}", fontsize=10)
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
        ax.set_xticks(range(len(a_levels)), _tick_texts(a_levels))
        ax.set_xlabel(a)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.set_title(f"interaction {a} x {b}", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        used += 1
    for ax in axes[used:]:
        ax.set_visible(False)
    # the model the panels' p and partial eta² come from (its name: the method's text up to its details)
    model = _model_name(analysis.methods.get("factors") or "")
    fig.suptitle(f"{analysis.title()}\nmain effects: level means with 95 % bootstrap CI over runs"
                 + (f"\n{'p' if all(f.kind == 'two-level' for f in factors) else 'p and partial η²'} from {model}"
                    if model else ""), fontsize=10)
    return save(fig, output)


def _model_name(method: str) -> str:
    """A table's method text up to its details: up to the first ``:`` or ``;``
    outside parentheses (``second-order model in coded units (OLS; residual df
    16)`` keeps its parenthesis whole)."""
    depth = 0
    for i, ch in enumerate(method):
        depth += (ch == "(") - (ch == ")")
        if ch in ":;" and depth == 0:
            return method[:i].strip()
    return method.strip()


def plot_design(design: Any, output: str | Path, *, title: str = "") -> Path:
    """Pairwise projections of a :class:`~xdoe.design.Design`: every pair of
    factors as a scatter of the design points (categorical factors on their
    level positions, continuous ones on their value, log-scaled when so
    sampled), each factor's level counts on the diagonal; a conditional
    factor's inactive points sit at ``n/a``."""
    import_matplotlib()  # matplotlib's first import under its lock (threads draw at once)
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


def _tick_texts(levels: list[Any]) -> list[str]:
    """The levels as tick labels: numbers with the fewest significant digits
    (4 to 12) that keep them apart (an axial point 0.171572875254 reads
    ``0.1716``: twelve digits beside its neighbour's ``1.0`` overlapped),
    anything else as written."""
    if not all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in levels):
        return [str(v) for v in levels]
    for digits in range(4, 13):
        texts = [f"{float(v):.{digits}g}" for v in levels]
        if len(set(texts)) == len(set(levels)):
            return texts
    return [str(v) for v in levels]


def _short(value: Any, width: int = 14) -> str:
    from xdoe.results import readable

    text = str(readable(value))
    return text if len(text) <= width else text[: width - 1] + "…"

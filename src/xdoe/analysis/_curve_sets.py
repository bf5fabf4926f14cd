"""What a learning-curve picture shows (:func:`xdoe.analysis.plots.plot_curves`),
read from the store (:func:`store_curves`; issue 26: ``xrun plot curves``,
``xrun report`` and the dashboard's curves all draw from it).

The method is :mod:`xdoe.analysis._curves`: the database gives each run's
episodes pooled over agents, or one agent's (:mod:`xdoe.store.views._curves`, a few runs per
query) in ONE pass; each run's kept episodes (x and the metric) wait in a
temporary file until every run's episode count (the default window) and
range of x (its group's grid) are known; then each run is smoothed with
:func:`~xdoe.analysis._curves.smooth_run` and only its ``GRID`` values on
its group's grid stay in memory. Memory grows with runs x grid points, not
with the episodes. ``tests/analysis/test_curve_sets.py`` checks the numbers
against pandas and :func:`scipy.stats.bootstrap` on episode tables of real
stores (SQLite and PostgreSQL).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from xdoe.analysis._curves import X_AXES, Band, aggregate_band, curve_grid, episode_x, smooth_run
from xdoe.analysis._figure import PALETTE
from xdoe.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CurveSet", "store_curves"]


@dataclass
class CurveSet:
    """A curve picture's numbers: ``experiment`` (label), ``phase`` drawn,
    ``window`` (episodes per moving average), ``runs`` with episodes in the
    phase, ``cut`` (episode rows cut by a budget there), ``by`` (what the
    groups are, for the title), ``curves`` (per group its label and
    :class:`~xdoe.analysis._curves.Band`, ``None`` without a curve),
    ``test_phase`` (the last test phase after it, or ``None``) and
    ``test_scores`` (per group, each run's mean metric there, runs sorted);
    ``agent`` whose rows are drawn (``None``: pooled over the agents)."""

    experiment: str
    phase: str
    window: int
    runs: int
    cut: int
    by: str
    curves: list[tuple[str, Band | None]]
    test_phase: str | None
    test_scores: list[np.ndarray]
    agent: str | None = None


def _label(levels: dict[str, Any]) -> str:
    from xdoe.analysis._format import fmt_levels

    return fmt_levels(levels)


def _groups(first: "pd.DataFrame", names: dict[str, str], by: str | None,
            strongest: Callable[[], str | None]) -> list[tuple[str, list[str]]]:
    """``[(label, runs)]`` from one row per run (index: run; ``design_point``,
    the factor columns, ``branch`` with branches), in design-point or level
    order; branch runs last, each its own curve, never pooled."""
    branch_runs: list[str] = []
    if "branch" in first.columns:
        is_branch = first["branch"].map(lambda v: isinstance(v, str))
        branch_runs = sorted(first.index[is_branch])
        first = first[~is_branch]
    branches = [(f"branch {run}", [run]) for run in branch_runs]
    points = sorted(first["design_point"].unique())
    if by is None and len(points) > len(PALETTE) and names:
        by = strongest()
    if by is None or by == "point" or by not in names:
        out = []
        for point in points:
            runs = sorted(first.index[first["design_point"] == point])
            one = first.loc[runs[0]]
            levels = {n: one[c] for n, c in names.items() if one[c] is not None and one[c] == one[c]}
            out.append((f"point {int(point)}: {_label(levels)}" if levels else f"point {int(point)}", runs))
        return out + branches
    column = names[by]
    levels = first[column].map(lambda v: "n/a" if v is None or v != v else v)
    ordered = sorted(levels.unique(), key=lambda v: (isinstance(v, str), v if not isinstance(v, str) else str(v)))
    return [(f"{by}={v}", sorted(levels.index[levels == v])) for v in ordered] + branches


def _by_text(by: str | None, groups: list[tuple[str, list[str]]]) -> str:
    if by is None:
        return "design point" if groups and groups[0][0].startswith("point ") else "strongest factor"
    return "design point" if by == "point" else by


def _strongest(store: Any, experiment: str | None) -> str | None:
    """The first factor of :func:`xdoe.analysis.analyze`'s ranking of the
    runs' scores for the default response, if any."""
    from xdoe.analysis._effects import analyze
    from xdoe.analysis._response import Response, load_scores

    try:
        ranked = analyze(load_scores(store, Response(), experiment)).factors
    except InputError:
        return None
    return ranked[0].name if ranked else None


def _check(x: str, by: str | None, names: dict[str, str]) -> None:
    if x not in X_AXES:
        raise InputError(f"unknown x axis {x!r}; expected one of {', '.join(X_AXES)}")
    if by is not None and by != "point" and by not in names:
        raise InputError(f"no factor {by!r} (factors: {', '.join(names) or 'none'}; or 'point')")


def store_curves(store: Any, experiment: str | None = None, *, include_branches: bool = False,
                 by: str | None = None, phase: str | None = None, metric: str = "objective", x: str = "steps",
                 stat: str = "mean", window: int | None = None, seed: int = 0, keep_cut: bool = False,
                 strongest: Callable[[], str | None] | None = None, agent: str | None = None) -> CurveSet:
    """The :class:`CurveSet` of ``experiment``'s runs in ``store`` (a
    :class:`~xdoe.store.Store`), read as :func:`xdoe.results.load` would read
    them (``include_branches`` too) without loading the episodes (see the
    module docstring). ``strongest``: the factor that groups the curves of
    more than 8 design points when ``by`` is not given (default: the first
    of :func:`xdoe.analysis.analyze`'s ranking for the default response;
    ``xrun report`` passes its own analysis's). ``agent``: read that agent's
    episode rows alone (default: each episode pooled over its agents).

    Raises:
        AmbiguousExperimentError: no ``experiment`` and the store holds runs
            of several (as :func:`xdoe.results.load`).
        InputError: no episodes, an unknown phase, factor, x axis,
            statistic or agent, or runs that share no range of x.
        StoreError: the store cannot be read.
    """
    import pandas as pd

    from xdoe.analysis._response import _own_points, display_name
    from xdoe.results import readable, single_experiment
    from xdoe.store import curve_phases, phase_means, run_episodes

    if x not in X_AXES:
        raise InputError(f"unknown x axis {x!r}; expected one of {', '.join(X_AXES)}")
    experiment = single_experiment(store, experiment)  # one experiment's runs, never several pooled
    found = curve_phases(store.database, experiment, include_branches=include_branches)
    used, factors, columns = list(found.phases), list(found.factors), list(found.columns)
    if not used:
        raise InputError("no episodes recorded: nothing to analyse (run the campaign first)")
    phases = list(dict.fromkeys(p.name for p in used))
    from xdoe._phases import phase_named

    chosen = phase_named(phase or phases[0], phases)
    if chosen is None:
        raise InputError(f"--response: no phase {phase!r} in the results (phases: {', '.join(map(str, phases))})")
    names = {display_name(c): c for c in columns}
    _check(x, by, names)
    mine = [p for p in used if p.name == chosen]
    run_of = {p.phase_id: p.run for p in mine}
    first = pd.DataFrame.from_records(
        [(p.run, p.design_point, p.repetition, *(readable(p.levels.get(f)) for f in factors))
         + ((p.branch,) if include_branches else ()) for p in mine],
        columns=["run", "design_point", "repetition", *columns] + (["branch"] if include_branches else []))
    first = _own_points(first).drop_duplicates("run").set_index("run").sort_index()

    groups = _groups(first, names, by, strongest or (lambda: _strongest(store, experiment)))
    # one pass over the episodes: each run's kept x and metric wait in a temporary file (not in
    # memory) with its episode count (the default window) and the x of its first ~5 % of kept
    # episodes and its last (its range, once the window is known); then each run's values on its
    # group's grid. Memory: runs x grid points.
    ids = [p.phase_id for p in mine]
    episodes, cut_rows, heads, lasts, where = {}, 0, {}, {}, {}
    with tempfile.TemporaryFile(prefix="xdoe-curves-") as spill:
        for pid, y, steps, wall, cut, cut_here in run_episodes(store.database, ids, metric, wall=x == "wall",
                                                                      agent=agent):
            keep = slice(None) if keep_cut else ~cut
            xs, ys = episode_x(steps, wall, x)[keep], y[keep]
            run = run_of[pid]
            episodes[run], cut_rows = len(y), cut_rows + cut_here
            heads[run] = xs[:window or max(1, round(0.05 * len(y)))].copy()  # not a view of every episode
            lasts[run] = (len(xs), float(xs[-1]) if len(xs) else float("nan"))
            where[run] = (spill.tell(), len(xs))
            spill.write(np.ascontiguousarray(xs, dtype=float).tobytes())
            spill.write(np.ascontiguousarray(ys, dtype=float).tobytes())
        if not episodes:
            raise InputError(f"--agent: no episodes of agent {agent!r} in phase {chosen!r}")
        window = window or max(1, round(0.05 * min(episodes.values())))
        ranges = {run: (float(heads[run][window - 1]), last) for run, (kept, last) in lasts.items() if kept >= window}
        grids = {}
        for label, runs in groups:
            have = [r for r in runs if r in ranges]
            if have:
                grid = curve_grid([ranges[r] for r in have], have)
                grids.update({r: grid for r in have})
        values = {}
        for run in sorted(grids):
            offset, n = where[run]
            spill.seek(offset)
            both = np.fromfile(spill, dtype=float, count=2 * n)
            values[run] = np.interp(grids[run], *smooth_run(both[:n], both[n:], window))
    curves = []
    for i, (label, runs) in enumerate(groups):
        have = [r for r in runs if r in values]
        if not have:
            curves.append((label, None))
            continue
        stacked = np.stack([values[r] for r in have])
        center, low, high = aggregate_band(stacked, stat, seed=seed, key=(2, i))
        curves.append((label, Band(grids[have[0]], center, low, high, stacked, tuple(have))))
    after = phases[phases.index(chosen) + 1:]
    tests = [name for name in after if all(p.mode == "test" for p in used if p.name == name)]
    scores = []
    if tests:
        test = [p for p in used if p.name == tests[-1]]
        means = phase_means(store.database, [p.phase_id for p in test], metric, keep_cut=keep_cut, agent=agent)
        by_run = {p.run: means[p.phase_id] for p in test if p.phase_id in means}
        scores = [np.array([by_run[r] for r in sorted(runs) if r in by_run], dtype=float) for _, runs in groups]
    label = " + ".join(sorted({str(p.experiment) for p in used if p.experiment is not None})) or "(no experiment)"
    return CurveSet(label, chosen, window, len(first), cut_rows,
                    _by_text(by, groups), curves, tests[-1] if tests else None, scores, agent)


"""What ``xrun analyze`` adds for an adaptive design (``design: {method:
optuna}``, :mod:`xdoe.design._optuna`): the best trial (its levels, its
response aggregated over its runs by the design's ``stat``, its runs), the
trials in order with the best so far, Optuna's parameter importances, and,
for several responses, the Pareto front; ``xrun plot optimization`` draws
the best response against trials.

Everything is computed from the runs in the store (one row per run,
:func:`xdoe.analysis.run_table`) and the manifest's points: the read commands
never open the study's journal. The importances come from a study rebuilt in
memory from the same trials (``optuna.trial.create_trial``; a conditional
factor is a parameter of the trials where it applies only, and the
importances are over the factors every trial has, then per branch,
:func:`_importances`): fANOVA
(Hutter et al. 2014, Optuna's default evaluator, which needs scikit-learn)
when scikit-learn is installed, else PED-ANOVA (Watanabe et al. 2023,
Optuna's ``PedAnovaImportanceEvaluator``, no extra dependency); the output
names the one used.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Collection

    import pandas as pd

__all__ = ["adaptive_answer", "frame_answer", "optuna_summary", "optuna_text", "pareto_front", "plot_optimization"]


def _settings(design: dict[str, Any]) -> tuple[list[str], str]:
    info = design.get("info") or {}
    directions = info.get("direction") or ["maximize"]
    directions = directions if isinstance(directions, list) else [directions]
    from xdoe.analysis._aggregates import resolve_statistic

    return directions, resolve_statistic(design=design)


def trial_values(table: "pd.DataFrame", stat: str) -> dict[int, tuple[float, int]]:
    """Trial (= design point) -> (its runs' scores aggregated by ``stat``, runs)."""
    from xdoe.analysis._aggregates import aggregate

    out = {}
    for point, group in table.groupby("design_point"):
        ys = group["y"].to_numpy(float)
        ys = ys[np.isfinite(ys)]
        if len(ys):
            out[int(point)] = (aggregate(ys, stat), len(ys))
    return out


def _evaluate(optuna: Any, trials: list[Any], params: list[str], direction: str) -> tuple[str, dict | None, str | None]:
    """``(method, importances over params, why not)`` of a study of ``trials``."""
    if len(trials) < 2 or len(params) < 2:
        return "", None, "needs two factors and two trials"
    study = optuna.create_study(direction=direction)
    study.add_trials(trials)
    try:
        import sklearn  # noqa: F401  (fANOVA's random forest)

        method, evaluator = "fANOVA", optuna.importance.FanovaImportanceEvaluator(seed=0)
    except ImportError:
        method, evaluator = "PED-ANOVA", optuna.importance.PedAnovaImportanceEvaluator()
    try:
        found = optuna.importance.get_param_importances(study, evaluator=evaluator, params=params)
    except (RuntimeError, ValueError) as exc:
        return method, None, f"{method}: {exc}"
    return method, {k: float(v) for k, v in found.items()}, None


def _importances(design: dict[str, Any], values: dict[int, tuple[float, int]], direction: str
                 ) -> dict[str, Any]:
    """Optuna's importances of a study rebuilt from the trials:
    ``importance_method``, ``importances`` (``None`` and ``importance_note``
    when there are none) and, with conditional factors, ``importance_scope``
    (the factors every trial has: Optuna's evaluators need one parameter
    set, so ``importances`` are over those, on every trial) and
    ``importances_by_branch``: per set of active factors that holds a
    conditional factor, ``{"factors", "trials", "importances", "note"}``
    over that branch's trials and the factors that vary among them."""
    try:
        import optuna
    except ImportError:
        from xdoe._extras import install_command

        return {"importance_method": None, "importances": None,
                "importance_note": f"Optuna is not installed ({install_command('optuna')})"}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    d = optuna.distributions
    points = design.get("points") or []
    coding = design.get("coding") or {}
    names = list(design.get("factors") or coding)
    dists: dict[str, Any] = {}
    for name in names:
        rule = coding.get(name) or {}
        if "scale" in rule:
            dists[name] = d.FloatDistribution(float(rule["minus"]), float(rule["plus"]), log=rule["scale"] == "log")
        else:  # levels: as text (any level, lists included, is one choice)
            dists[name] = d.CategoricalDistribution(
                sorted({str(p["natural"][name]) for p in points if name in p["natural"]}) or ["-"])
    trials, branches = [], {}
    for t, (value, _) in sorted(values.items()):
        if t >= len(points):
            continue
        natural = points[t]["natural"]
        params = {}
        for name, dist in dists.items():
            if name not in natural:  # a conditional factor inactive at this trial: not one of its parameters
                continue
            v = natural[name]
            params[name] = (min(max(float(v), dist.low), dist.high) if isinstance(dist, d.FloatDistribution)
                            else str(v))
        trial = optuna.trial.create_trial(params=params, distributions={k: dists[k] for k in params}, value=value)
        trials.append(trial)
        branches.setdefault(tuple(params), []).append(trial)
    common = [n for n in names if all(n in t.params for t in trials)]
    method, found, why = _evaluate(optuna, trials, common, direction)
    out: dict[str, Any] = {"importance_method": method or None, "importances": found}
    if why:
        out["importance_note"] = why
    if len(common) == len(names) or not trials:
        return out
    out["importance_scope"] = common
    out["importances_by_branch"] = []
    for keys, group in sorted(branches.items(), key=lambda kv: kv[0]):
        if len(keys) == len(common):
            continue
        varying = [k for k in keys if len({repr(t.params[k]) for t in group}) > 1]
        m, found, why = _evaluate(optuna, group, varying, direction)
        row = {"factors": list(keys), "trials": len(group), "importances": found}
        if why:
            row["note"] = why
        out["importances_by_branch"].append(row)
        out["importance_method"] = out["importance_method"] or m or None
    return out


def pareto_front(values: np.ndarray, directions: list[str]) -> list[int]:
    """Indices of the rows of ``values`` (trials x objectives) no other row
    dominates (at least as good in every objective, better in one)."""
    signed = np.asarray(values, float) * np.array([1.0 if d == "maximize" else -1.0 for d in directions])
    out = []
    for i, row in enumerate(signed):
        if not np.all(np.isfinite(row)):
            continue
        others = np.delete(signed, i, axis=0)
        if not np.any(np.all(others >= row, axis=1) & np.any(others > row, axis=1)):
            out.append(i)
    return out


def _trials_with(design: dict[str, Any], runs: Any) -> list[int]:
    """The trials with one of ``runs`` among theirs (the manifest's ``trial_runs``), sorted."""
    cut = set(runs or ())
    trial_runs = (design.get("info") or {}).get("trial_runs") or {}
    return sorted(int(t) for t, uids in trial_runs.items() if cut.intersection(uids))


def spent(frame: "pd.DataFrame", pruned: "Collection[str] | None" = None) -> dict[str, int]:
    """What a campaign spent: ``runs`` (with episodes in ``frame``),
    ``pruned`` (of them, ended early) and ``steps``, the environment steps of
    every episode of every run (pruned runs' included; one row per episode,
    whatever the agents), from the episodes frame (:func:`xdoe.results.load`)."""
    keys = [c for c in ("run", "phase", "worker", "episode") if c in frame.columns]
    episodes = frame.drop_duplicates(keys) if keys else frame
    runs = set(frame["run"].astype(str)) if "run" in frame.columns else set()
    return {"runs": len(runs), "pruned": len(runs & set(pruned or ())),
            "steps": int(episodes["steps"].sum()) if "steps" in episodes.columns else 0}


def adaptive_answer(frame: "pd.DataFrame", design: dict[str, Any] | None, store: Any, *,
                    experiment: str | None = None, response: Any = None, agent: str | None = None,
                    episodes: "pd.DataFrame | None" = None) -> dict[str, Any] | None:
    """The adaptive design's answer as every output gives it (``xrun analyze``,
    ``xrun report``, the dashboard's analysis JSON): :func:`optuna_summary`
    of ``frame``'s runs (the episodes, :func:`xdoe.results.load`, or the
    scores, :func:`xdoe.analysis.load_scores`) for ``response`` (default:
    the test phase's mean objective) and ``agent``, with the Pareto front
    over every response of the design (each one's scores read from
    ``store``, an open :class:`xdoe.store.Store`), the steps spent (from
    ``episodes``, read from ``store`` when ``None``), the runs ``frame``
    leaves out and the design's direction. ``None`` when ``design`` is not
    an optuna design.

    Raises:
        InputError: a response of the design cannot be read.
    """
    if not design or design.get("method") != "optuna":
        return None
    from xdoe.analysis._branches import split_branches
    from xdoe.analysis._goal import resolve_goal
    from xdoe.analysis._response import Response, load_scores, parse_response, run_table
    from xdoe.results import LEFT_OUT_ATTR, load

    response = response or Response()
    if experiment is None and "experiment" in frame.columns:
        names = sorted({str(e) for e in frame["experiment"].dropna().unique()})
        experiment = names[0] if len(names) == 1 else None
    table, phase = run_table(split_branches(frame)[0], response, agent)
    direction = resolve_goal(design=design, response=response, frame=frame).direction
    objectives = []  # several responses: each one's runs, in the design's order, for the Pareto front
    responses = (design.get("info") or {}).get("response") or []
    for text in responses if isinstance(responses, list) and len(responses) > 1 else []:
        other = parse_response(text or None)
        objectives.append(run_table(split_branches(load_scores(store, other, experiment))[0], other, agent)[0])
    if episodes is None:
        episodes = load(store, experiment)
    return optuna_summary(table, design, response=response.label(phase), objectives=objectives,
                          left_out=dict(frame.attrs.get(LEFT_OUT_ATTR) or {}), frame=episodes,
                          direction=direction)


def frame_answer(frame: "pd.DataFrame", design: dict[str, Any] | None, store: Any, *, response: Any = None,
                 agent: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """``(answer, why not)`` of :func:`xdoe.analysis.analyze`: the
    :func:`adaptive_answer` of ``frame`` (the episodes or the scores of one
    experiment), the steps spent counted on ``frame`` when it holds the
    episodes; ``(None, None)`` when ``design`` is not an optuna design;
    ``(None, why)`` when the answer needs ``store`` (``None``): for the
    Pareto front of several responses, or the episodes of a frame of scores.

    Raises:
        InputError: a response of the design cannot be read.
    """
    if not design or design.get("method") != "optuna":
        return None, None
    from xdoe.analysis._branches import split_branches

    responses = (design.get("info") or {}).get("response") or []
    several = isinstance(responses, list) and len(responses) > 1
    episodes = split_branches(frame)[0] if {"episode", "steps"} <= set(frame.columns) else None
    if store is None and (several or episodes is None):
        needs = "every response's scores for the Pareto front" if several else "the episodes for the steps spent"
        return None, (f"an optuna design: its answer (best trial, importances; xrun analyze's \"optuna\") reads "
                      f"{needs} from the store: analyze(frame, store=...) gives it")
    return adaptive_answer(frame, design, store, response=response, agent=agent, episodes=episodes), None


def optuna_summary(table: "pd.DataFrame", design: dict[str, Any] | None, *, response: str = "",
                   objectives: list["pd.DataFrame"] | None = None, left_out: dict[str, str] | None = None,
                   frame: "pd.DataFrame | None" = None, direction: str | None = None) -> dict[str, Any] | None:
    """The adaptive design's answer (see the module docstring), or ``None``
    when ``design`` (the manifest's, :func:`xdoe.analysis.read_design`) is
    not an optuna design. ``table``: :func:`xdoe.analysis.run_table` of the
    response analysed; ``objectives``: the run tables of every response
    of the design, in the design's order (its ``direction`` list's), from
    which the Pareto front is computed when there are several, whichever
    of them is analysed; ``left_out``: run -> status of the runs the responses
    leave out (the frame's ``attrs["xdoe_left_out"]``,
    :data:`xdoe.results.LEFT_OUT_ATTR`). A trial with a ``pruned`` run is left
    out of the best trial, the history, the importances and the Pareto front,
    as ``xrun optimize`` told it to the study as pruned; ``pruned_trials``
    lists them; a trial with a ``failed`` run was told ``FAIL`` and one with a
    run interrupted or running waits for it: both are left out the same way
    (``failed_trials``, ``waiting_trials``), never scored on the runs that
    finished. ``best.spread`` gives the best
    trial's runs' values (``values``, ``min``, ``max``, ``sd`` with ddof 1,
    NaN for one run); ``frame`` (the episodes, :func:`xdoe.results.load`), when
    given, adds ``spent`` (:func:`spent`). ``direction``: the design's
    direction for the analysed response, as :func:`xdoe.analysis.resolve_goal`
    reads it from ``design`` and the analysed frame (the design points
    table's goal when no ``--goal`` overrides it); ``None``: resolved from
    ``design`` and ``response`` alone."""
    if not design or design.get("method") != "optuna":
        return None
    directions, stat = _settings(design)
    if direction is None:
        from xdoe.analysis._goal import resolve_goal
        from xdoe.analysis._response import parse_response

        direction = resolve_goal(design=design, response=parse_response(response or None)).direction
    left_out = left_out or {}
    pruned = {u for u, s in left_out.items() if s == "pruned"}
    cut = _trials_with(design, pruned)
    failed = [t for t in _trials_with(design, [u for u, s in left_out.items() if s == "failed"]) if t not in cut]
    waiting = [t for t in _trials_with(design, [u for u, s in left_out.items() if s not in ("pruned", "failed")])
               if t not in cut and t not in failed]
    cut_all = set(cut) | set(failed) | set(waiting)
    values = {t: v for t, v in trial_values(table, stat).items() if t not in cut_all}
    points = design.get("points") or []
    history, best_so_far, best = [], None, None
    sign = 1.0 if direction == "maximize" else -1.0
    for t in sorted(values):
        value, n = values[t]
        if best_so_far is None or sign * value > sign * best_so_far:
            best_so_far, best = value, t
        history.append({"trial": t, "value": value, "best": best_so_far, "runs": n})
    out: dict[str, Any] = {"response": response, "stat": stat, "direction": direction, "trials": len(values),
                           "sampler": (design.get("info") or {}).get("sampler"), "history": history,
                           "pruned_trials": cut, "failed_trials": failed, "waiting_trials": waiting}
    if best is not None:
        ys = table.loc[table["design_point"] == best, "y"].to_numpy(float)
        ys = ys[np.isfinite(ys)]
        out["best"] = {"trial": best, "levels": points[best]["natural"] if best < len(points) else {},
                       "value": values[best][0], "runs": values[best][1],
                       "spread": {"values": ys.tolist(), "min": float(ys.min()), "max": float(ys.max()),
                                  "sd": float(np.std(ys, ddof=1)) if len(ys) > 1 else None}}
    if frame is not None:
        out["spent"] = spent(frame, pruned)
    out.update(_importances(design, values, direction))
    if objectives and len(directions) > 1 and len(objectives) == len(directions):
        per = [{k: v for k, v in trial_values(t, stat).items() if k not in cut_all} for t in objectives]
        trials = sorted(set.intersection(*(set(v) for v in per)))
        matrix = np.array([[v[t][0] for v in per] for t in trials], float).reshape(-1, len(per))
        out["pareto"] = [{"trial": trials[i], "values": matrix[i].tolist(),
                          "levels": points[trials[i]]["natural"] if trials[i] < len(points) else {}}
                         for i in pareto_front(matrix, directions)]
    return out


def _num(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _levels(levels: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_num(v)}" for k, v in levels.items())


def optuna_text(summary: dict[str, Any], fmt: str = "table") -> str:
    """The summary as lines (``markdown``: a section with a table)."""
    head = "## " if fmt == "markdown" else ""
    cut = summary.get("pruned_trials") or []
    left = [f"{len(trials)} {what}, left out: trial(s) {', '.join(map(str, trials))}" for what, trials in (
        ("pruned", cut), ("failed", summary.get("failed_trials") or []),
        ("waiting for a run", summary.get("waiting_trials") or [])) if trials]
    pruned = f" (and {'; '.join(left)})" if left else ""
    lines = [f"{head}adaptive design: optuna {summary.get('sampler')}, {summary['trials']} complete trials told"
             f"{pruned}, {summary['direction']} {summary['stat']} over each trial's runs"]
    best = summary.get("best")
    if summary.get("spent"):
        used = summary["spent"]
        lines.append(f"spent: {used['runs']} run(s) ({used['pruned']} pruned early), {used['steps']:,} environment "
                     "steps")
    if best:
        spread = best.get("spread") or {}
        runs = (f" (runs {_num(spread['min'])} .. {_num(spread['max'])}, sd {_num(spread['sd'])})"
                if best["runs"] > 1 and spread else "")
        lines.append(f"best trial {best['trial']}: {_levels(best['levels'])} -> {_num(best['value'])} "
                     f"over {best['runs']} run(s){runs}")
    scope = summary.get("importance_scope")
    over = f", over the factors every trial has: {', '.join(scope)}" if scope is not None else ""
    if summary.get("importances"):
        ranked = sorted(summary["importances"].items(), key=lambda kv: -kv[1])
        lines.append(f"parameter importances ({summary['importance_method']}, Optuna{over}): "
                     + ", ".join(f"{k} {v:.3f}" for k, v in ranked))
    elif summary.get("importance_note"):
        lines.append(f"parameter importances{over}: none ({summary['importance_note']})")
    for row in summary.get("importances_by_branch") or []:
        where = f"trials with {', '.join(row['factors'])} ({row['trials']} trials)"
        if row.get("importances"):
            ranked = sorted(row["importances"].items(), key=lambda kv: -kv[1])
            lines.append(f"  within the {where}: " + ", ".join(f"{k} {v:.3f}" for k, v in ranked))
        else:
            lines.append(f"  within the {where}: none ({row.get('note')})")
    for row in summary.get("pareto", []):
        lines.append(f"Pareto front: trial {row['trial']}: {_levels(row['levels'])} -> "
                     + ", ".join(_num(v) for v in row["values"]))
    return "\n".join(lines) + "\n"


def plot_optimization(summary: dict[str, Any], output: str | Path, *, title: str = "") -> Path:
    """Each trial's response (dots) and the best so far (a step line)
    against the trial number; pruned trials as crosses along the bottom."""
    from xdoe.analysis._figure import check_suffix, new_figure, PALETTE, response_label, save

    target = check_suffix(output)
    fig = new_figure(7.0, 4.2, svg=target.suffix.lower() == ".svg")
    ax = fig.add_subplot(1, 1, 1)
    history = summary["history"]
    x = [h["trial"] for h in history]
    ax.plot(x, [h["value"] for h in history], "o", color=PALETTE[0], alpha=0.6, label="trial (its runs' "
            f"{summary['stat']})")
    lower = summary.get("direction") == "minimize"
    ax.step(x, [h["best"] for h in history], where="post", color=PALETTE[1], lw=2,
            label="best so far (lowest: minimize)" if lower else "best so far (highest: maximize)")
    cut = summary.get("pruned_trials") or []
    if cut:  # no value of their own: ticks along the bottom
        ax.plot(cut, [0.03] * len(cut), "x", color="0.45", transform=ax.get_xaxis_transform(),
                label="pruned trial (left out)")
    best = summary.get("best")
    if best:
        ax.annotate(f"best: trial {best['trial']}", (best["trial"], best["value"]), textcoords="offset points",
                    xytext=(6, -14), fontsize=8)
    ax.set_xlabel("trial (order asked)")
    ax.set_ylabel(response_label(summary.get("response") or "") or "response")
    ax.set_title(title or f"optuna {summary.get('sampler')}: best response against trials", fontsize=10)
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, target)

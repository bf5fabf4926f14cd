"""Factor effects: level means with bootstrap intervals over runs, ANOVA with
partial eta², standardised coefficients for continuous factors, nested
conditional factors; design points ranked by one statistic over runs.

The model is an ordinary least-squares fit (``statsmodels.formula.api.ols``)
of the per-run response on every factor that varies (categorical factors as
``C(...)``, continuous ones linear), plus the two-way interactions of
categorical factors whose every level combination was run and whose columns
are not aliased with the model's (in a fraction with ``c = ab``, ``a x b``
is ``c``: a rank-deficient model gave negative sums of squares), as long as
residual degrees of freedom remain; :func:`statsmodels.stats.anova.anova_lm`
(type II sums of squares) gives F and p per term, and partial eta² is
``SS_term / (SS_term + SS_residual)`` (Cohen 1973). A conditional factor (one
that is absent where its ``when`` fails) is analysed *nested*: on the runs
where it applies, with the other factors that vary there.

Every interval here is over *runs* (the unit of replication): a design
point's estimate (``iqm``, ``mean`` or ``median`` of its runs' scores,
:mod:`xdoe.analysis._aggregates`) and a level's mean come with 95 %
bootstrap percentile intervals, which never leave the observed range.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._aggregates import (
    DEFAULT_STATISTIC,
    MIN_REPETITIONS,
    interval_estimates,
    probabilities_of_improvement,
    resolve_statistic,
)
from xdoe.analysis._exact import f_test, snap_ss
from xdoe.analysis._format import STAT_NAMES
from xdoe.analysis._goal import Goal, resolve_goal
from xdoe.analysis._result import Analysis, FactorEffect, Interaction, LevelStat, PointAggregate
from xdoe.analysis._response import Response, left_out_notes, run_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["analyze", "design_points", "points_method", "points_notes", "CONTINUOUS_MIN_LEVELS"]

#: a numeric factor with more distinct values than this is treated as continuous
CONTINUOUS_MIN_LEVELS = 6


def _coded_order(values: "pd.Series", rule: dict[str, Any] | None) -> list[Any] | None:
    """The levels of a factor present in ``values``, low to high by the
    design's coding ``rule`` (``None``: sorted)."""
    present = list(values.dropna().unique())
    if not rule:
        return None
    if "levels" in rule:
        known = [v for v in rule["levels"] if v in present]
        return known + [v for v in present if v not in known]
    if "scale" not in rule:  # two-level: minus, whatever lies between (a centre), plus
        ends = [rule["minus"], rule["plus"]]
        middle = sorted((v for v in present if v not in ends), key=lambda v: (str(type(v)), v))
        return [e for e in ends[:1] if e in present] + middle + [e for e in ends[1:] if e in present]
    reverse = float(rule["minus"]) > float(rule["plus"])
    return sorted(present, key=float, reverse=reverse)


def _is_continuous(values: "pd.Series") -> bool:
    present = values.dropna()
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
    return numeric and present.nunique() >= CONTINUOUS_MIN_LEVELS


def _parent(table: "pd.DataFrame", name: str, factors: list[str]) -> str:
    """``factor=level`` text of the condition under which ``name`` applies,
    read off the data: factors whose levels where ``name`` applies never
    occur where it does not."""
    on = table[name].notna()
    parts = []
    for other in factors:
        if other == name or table[other].isna().any():
            continue
        inside, outside = set(table.loc[on, other]), set(table.loc[~on, other])
        if inside and not inside & outside:
            parts.append(f"{other}={'|'.join(map(str, sorted(inside, key=str)))}")
    return ", ".join(parts)


def _nesting(table: "pd.DataFrame", conditional: list[str], plain: list[str]) -> dict[str, set[str]]:
    """Each conditional factor -> the plain factors it is nested in (those
    whose levels where it applies never occur where it does not, as
    :func:`_parent` reads them); a conditional factor with none is left out."""
    out = {}
    for name in conditional:
        on = table[name].notna()
        parents = {g for g in plain if (inside := set(table.loc[on, g])) and not inside & set(table.loc[~on, g])}
        if parents:
            out[name] = parents
    return out


def _fit(table: "pd.DataFrame", factors: list[str], kinds: dict[str, str], interactions: bool,
         nested: dict[str, set[str]] | None = None):
    """OLS + type II ANOVA; returns (fit, anova frame, {term: factor names},
    safe names, {confounded factor: the factors it is aliased with}).

    A factor the runs confound with the factors before it (the columns of
    its levels add no rank to theirs: its levels move with theirs) is left
    out of the model, as ``car::Anova`` refuses an aliased model: the type II
    sums of squares of a rank-deficient fit are not the factors' (two factors
    whose levels always move together each got a large F of its own). Its
    term stays in the returned terms, with no ANOVA row.

    ``nested``: conditional factors -> the factors they are nested in (their
    condition): each is a term of the model too (its levels where it applies,
    one level where it does not), so that its variation is not the plain
    factors' residual; type II as ``anova_lm`` computes it, a term adjusted
    for every other term that does not contain it (a nested factor contains
    its parents), by statsmodels OLS fits (rank-aware: the nested term and
    its parent overlap). The terms returned are the plain factors' only."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    safe = {f: f"f{i}" for i, f in enumerate(factors)}
    data = table.rename(columns=safe)
    for f in factors:
        data[safe[f]] = data[safe[f]].astype(float) if kinds[f] == "continuous" else data[safe[f]].astype(str)
    terms: dict[str, tuple[str, ...]] = {}
    for f in factors:
        terms[f"C({safe[f]})" if kinds[f] == "categorical" else safe[f]] = (f,)
    n = len(data)

    def n_params(ts: dict[str, tuple[str, ...]]) -> int:
        count = 1
        for names in ts.values():
            k = 1
            for f in names:
                k *= (data[safe[f]].nunique() - 1) if kinds[f] == "categorical" else 1
            count += k
        return count

    def rank(ts: dict[str, tuple[str, ...]]) -> int:
        from patsy import dmatrix

        x = np.asarray(dmatrix(" + ".join(ts) or "1", data))
        norms = np.linalg.norm(x, axis=0)  # columns of unit length: a factor on a tiny scale (a learning
        return int(np.linalg.matrix_rank(x / np.where(norms > 0, norms, 1.0)))  # rate) is not taken for none

    # a factor whose columns the runs tie to the factors before it (its levels move with theirs: confounded)
    # cannot be told apart from them: left out of the model (a rank-deficient model's type II sums of squares
    # are meaningless), its row without F or p, its aliases the factors it moves with
    confounded: dict[str, list[str]] = {}
    if len(terms) > 1:
        kept: dict[str, tuple[str, ...]] = {}
        base = 1
        for term, names in terms.items():
            trial = {**kept, term: names}
            if (r := rank(trial)) == base + n_params(trial) - n_params(kept):
                kept, base = trial, r
                continue
            own = n_params({term: names}) - 1
            confounded[names[0]] = [g[0] for t_, g in kept.items() if rank({t_: g, term: names}) < rank({t_: g}) + own] \
                or [g[0] for g in kept.values()]
        every, terms = terms, kept
    if interactions:
        cats = [f for f in factors if kinds[f] == "categorical" and f not in confounded]
        base = rank(terms) if len(cats) > 1 else 0
        for i, a in enumerate(cats):
            for b in cats[i + 1:]:
                cells = data.groupby([safe[a], safe[b]]).size()
                if len(cells) < data[safe[a]].nunique() * data[safe[b]].nunique():
                    continue  # not every combination was run
                trial = {**terms, f"C({safe[a]}):C({safe[b]})": (a, b)}
                # estimable: every one of its columns new to the model (not aliased with its terms, as a*b is
                # with c = ab in a fraction), and a residual degree of freedom left (n - rank, as statsmodels)
                if n - n_params(trial) >= 1 and (r := rank(trial)) == base + n_params(trial) - n_params(terms) \
                        and n - r >= 1:
                    terms, base = trial, r
    if confounded:  # their rows too (no model term: no F, p or coefficient)
        terms = {**{t_: g for t_, g in every.items() if g[0] in confounded}, **terms}
    model = {t_: g for t_, g in terms.items() if not (len(g) == 1 and g[0] in confounded)}
    if not model or n - n_params(model) < 1:
        return None, None, terms, safe, confounded
    table_ = fit = None
    if nested:
        fit, table_ = _nested_anova(table, data, model, safe, nested)
    if table_ is None:
        formula = "y ~ " + " + ".join(model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = smf.ols(formula, data=data).fit()
            table_ = anova_lm(fit, typ=2)
    # a noise-free response: sums of squares of rounding residue are 0 (xdoe.analysis._exact), and F, p and
    # partial eta² come from the snapped sums of squares
    table_["sum_sq"] = snap_ss(table_["sum_sq"].to_numpy(float), float(data["y"].abs().max()), n)
    resid, df_resid = float(table_.loc["Residual", "sum_sq"]), float(table_.loc["Residual", "df"])
    tests = {term: f_test(float(table_.loc[term, "sum_sq"]), float(table_.loc[term, "df"]), resid, df_resid)
             for term in table_.index if term != "Residual"}
    for column, at in (("F", 0), ("PR(>F)", 1), ("eta_sq", 2)):
        table_[column] = [tests[term][at] if term in tests else float("nan") for term in table_.index]
    return fit, table_, terms, safe, confounded


def _nested_anova(table: "pd.DataFrame", data: "pd.DataFrame", terms: dict[str, tuple[str, ...]],
                  safe: dict[str, str], nested: dict[str, set[str]]) -> tuple[Any, Any]:
    """``(fit, anova frame)`` of :func:`_fit`'s model with the ``nested`` terms
    (``(None, None)`` without a residual degree of freedom)."""
    import pandas as pd
    import statsmodels.formula.api as smf

    cover = {term: set(names) for term, names in terms.items()}
    for i, (name, parents) in enumerate(sorted(nested.items())):
        column = f"n{i}"
        data[column] = [str(v) if v == v and v is not None else "(inactive)" for v in table[name]]
        cover[f"C({column})"] = {name, *parents}
    every = list(cover)

    def fitted(ts: list[str]) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return smf.ols("y ~ " + (" + ".join(ts) if ts else "1"), data=data).fit()

    full = fitted(every)
    if full.df_resid < 1:
        return None, None
    rows = {}
    for term in every:
        reduced = [u for u in every if u != term and not cover[term] <= cover[u]]
        without, with_ = fitted(reduced), fitted([*reduced, term])
        rows[term] = (max(0.0, float(without.ssr - with_.ssr)), float(without.df_resid - with_.df_resid))
    rows["Residual"] = (float(full.ssr), float(full.df_resid))
    return full, pd.DataFrame.from_dict(rows, orient="index", columns=["sum_sq", "df"])


def _eta(anova: Any, term: str) -> tuple[float, float, float]:
    """``(F, p, partial eta²)`` of ``term`` in the ANOVA table (NaN without it)."""
    if anova is None or term not in anova.index:
        return float("nan"), float("nan"), float("nan")
    return float(anova.loc[term, "F"]), float(anova.loc[term, "PR(>F)"]), float(anova.loc[term, "eta_sq"])


def _df(anova: Any, term: str) -> list[float | None] | None:
    """``[df_term, df_residual]`` of the ANOVA's F test of ``term``."""
    if anova is None or term not in anova.index:
        return None
    return [float(anova.loc[term, "df"]), float(anova.loc["Residual", "df"])]


def _levels(table: "pd.DataFrame", name: str, seed: int, order: list[Any] | None = None) -> list[LevelStat]:
    """Level means of ``name`` with bootstrap intervals over runs, in ``order``
    (default: sorted; a design's coding gives low to high)."""
    out = []
    present = table[table[name].notna()]
    if order is None:
        try:
            order = sorted(present[name].unique())
        except TypeError:
            order = sorted(present[name].unique(), key=str)
    ys = [present.loc[present[name] == level, "y"].to_numpy(float) for level in order]
    estimates = interval_estimates(ys, "mean", seed=seed, keys=[(2, i) for i in range(len(order))])
    for level, y, (mean, low, high) in zip(order, ys, estimates):
        out.append(LevelStat(level, mean, low, high, int(y.size)))
    return out


def _standardised(fit: Any, table: "pd.DataFrame", name: str, column: str) -> float:
    if fit is None:
        return float("nan")
    sx, sy = float(table[name].astype(float).std()), float(table["y"].std())
    return float(fit.params[column]) * sx / sy if sy > 0 else float("nan")


def _effects(table: "pd.DataFrame", factors: list[str], kinds: dict[str, str], within: str = "",
             interactions: bool = True, seed: int = 0, coding: dict[str, Any] | None = None,
             nested: dict[str, set[str]] | None = None) -> tuple[list[FactorEffect], list[Interaction]]:
    """Type II ANOVA rows of ``factors`` and their two-way interactions; level
    means listed low to high by the design's ``coding`` (the manifest's or the
    store's; without it sorted); ``nested``: conditional factors in the model
    besides (:func:`_fit`), without rows of their own here."""
    varying = [f for f in factors if table[f].nunique() > 1]
    fit, anova, terms, safe, confounded = _fit(table, varying, kinds, interactions, nested)
    effects = []
    for term, names in terms.items():
        if len(names) != 1:
            continue
        f = names[0]
        F, p, eta = _eta(anova, term)
        if f in confounded:  # not in the model: its effect cannot be told apart from its aliases'
            F = p = eta = float("nan")
        if kinds[f] == "continuous":
            effect = float("nan") if f in confounded else _standardised(fit, table, f, safe[f])
            effects.append(FactorEffect(f, "continuous", [], effect, F, p, eta, within,
                                        aliases=confounded.get(f), df=None if f in confounded else _df(anova, term)))
        else:
            levels = _levels(table, f, seed, _coded_order(table[f], (coding or {}).get(f)))
            means = [lv.mean for lv in levels]
            # two levels: the second's mean minus the first's (the design's level order, the sign a
            # two-level design gives); more: the largest minus the smallest, which has no sign
            effect = means[1] - means[0] if len(means) == 2 else max(means) - min(means)
            effects.append(FactorEffect(f, "nested" if within else "categorical", levels, effect, F, p, eta, within,
                                        aliases=confounded.get(f), df=None if f in confounded else _df(anova, term)))
    inter = [Interaction(names, *_eta(anova, term), name=" x ".join(names), df=_df(anova, term))
             for term, names in terms.items() if len(names) == 2]
    return effects, inter


def _signed_two_level(table: "pd.DataFrame", effects: list[FactorEffect],
                      kinds: dict[str, str]) -> list[FactorEffect]:
    """``effects`` of a two-level design answered by the ANOVA (a corner lost):
    each factor at two levels gets ``kind`` ``two-level`` and its signed effect,
    high - low in the design's level order (``levels`` is low to high), from the
    main-effects least-squares model of every factor (statsmodels OLS, each
    two-level factor an indicator of its high level): the difference of its
    estimated marginal means, which unbalanced runs do not bias as they bias
    the gap between the level means. NaN when the runs leave the model without
    full rank (a factor's effect not separable)."""
    import statsmodels.formula.api as smf

    two = {e.name: e for e in effects if e.kind == "categorical" and len(e.levels) == 2}
    if not two:
        return effects
    safe = {e.name: f"f{i}" for i, e in enumerate(effects)}
    data = {"y": table["y"].to_numpy(float)}
    terms = []
    for e in effects:
        column = table[e.name]
        if e.name in two:
            data[safe[e.name]] = (column == e.levels[1].level).to_numpy(float)
            terms.append(safe[e.name])
        elif kinds[e.name] == "continuous":
            data[safe[e.name]] = column.astype(float).to_numpy()
            terms.append(safe[e.name])
        else:
            data[safe[e.name]] = column.astype(str).to_numpy()
            terms.append(f"C({safe[e.name]})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.ols("y ~ " + " + ".join(terms), data=data).fit()
    exog = fit.model.exog
    full = np.linalg.matrix_rank(exog) == exog.shape[1]
    return [replace(e, kind="two-level", effect=float(fit.params[safe[e.name]]) if full else float("nan"))
            if e.name in two else e for e in effects]


def analyze(frame: "pd.DataFrame", response: Response | None = None, *, statistic: str | None = None,
            agent: str | None = None, seed: int = 0, design: dict[str, Any] | None = None,
            goal: "Goal | str | None" = None, store: Any = None) -> Analysis:
    """Answer the design: which factors matter, how much, which setting is best.

    Args:
        frame: the episode table (:func:`xdoe.results.load`).
        response: which number per run (default: last phase, objective, mean).
        statistic: the point estimate over a design point's runs that ranks
            the points and picks the best: ``iqm``, ``mean`` or ``median``;
            ``None``: the ``stat`` an optuna design told its trials by (from
            ``design`` or the frame's design record), else ``iqm``
            (:func:`~xdoe.analysis.resolve_statistic`).
        agent: whose objective, for runs of several agents
            (:func:`~xdoe.analysis.response_agents`).
        seed: root of the bootstrap resampling (``SeedSequence(seed, spawn_key=...)``).
        design: the manifest's design (:func:`~xdoe.analysis._design_info.read_design`);
            ``None``: inferred from the runs. A two-level, response-surface or
            sensitivity design adds its own analysis (:mod:`xdoe.analysis._doe`).
        goal: ``maximize`` or ``minimize``: which estimate is best and what the
            probability of improvement compares; ``None``: the direction
            the design declared for the response (an optuna design's, from
            ``design`` or the frame's design record), else ``maximize``
            (:func:`~xdoe.analysis.resolve_goal`).
        store: the store ``frame`` was read from (a :class:`~xdoe.store.Store`
            or its URL), for an optuna design's answer (``Analysis.adaptive``,
            :func:`~xdoe.analysis.adaptive_answer`, as ``xrun analyze`` gives
            it): it reads the design's other responses (the Pareto front of
            several) and, for a frame of scores
            (:func:`~xdoe.analysis.load_scores`), the steps spent. An episode
            table of a design of one response needs none; else, without
            ``store``, ``Analysis.adaptive`` is ``None`` and a warning says so.

    Returns:
        an :class:`~xdoe.analysis.Analysis`: factors ranked by partial eta²
        (strongest first, level means with bootstrap intervals over runs),
        two-way interactions, per design point the estimate by ``statistic``
        with its stratified-bootstrap interval over runs and the
        probability that the best point beats it (Agarwal et al. 2021), best
        first by the goal (``Analysis.goal``), and warnings (fewer than 5
        repetitions...); an optuna design's best trial, history, importances
        and Pareto front in ``Analysis.adaptive``.
        Branch rows of a frame loaded with ``include_branches`` stay out of
        the factor analysis and of "best"; each is an extra point (index -1,
        -2, ..., ``levels`` ``{"branch": ...}``, one run) after the design points.

    Raises:
        AmbiguousExperimentError: the frame holds rows of several experiments
            (an ``InputError``: load one with ``xdoe.results.load(store,
            experiment="UID")``); the answer names its one experiment in
            ``Analysis.experiment``.
        InputError: no episodes, an unknown phase or agent, several agents
            and no ``agent``, a ``goal`` other than ``maximize`` or ``minimize``.
        ValueError: an unknown ``statistic``.
    """
    from xdoe.analysis._branches import branch_points, split_branches
    from xdoe.results import DESIGN_ATTR, frame_experiment

    frame_experiment(frame)  # one experiment's runs, never several pooled
    whole = frame  # with its branch rows: the adaptive answer splits them off itself
    stored = frame.attrs.get(DESIGN_ATTR)  # the store's record of the design (xdoe.results.load)
    response = response or Response()
    frame, branches = split_branches(frame)  # branches: own rows, never in the factor analysis
    table, phase = run_table(frame, response, agent)
    factors = [c for c in table.columns if c not in ("run", "design_point", "repetition", "y")]
    kinds = {f: "continuous" if _is_continuous(table[f]) else "categorical" for f in factors}
    conditional = [f for f in factors if table[f].isna().any()]
    plain = [f for f in factors if f not in conditional]
    if design is None and stored:
        design = {**stored, "source": "store"}
    goal = resolve_goal(goal, design=design, response=response, frame=frame)
    statistic = resolve_statistic(statistic, design=design)
    from xdoe.analysis._doe import design_tables, doe_analysis

    from xdoe.errors import IncompleteDesignError

    incomplete = None
    confounded_notes: list[str] = []  # the ANOVA's: factors the runs confound with others
    try:
        doe = doe_analysis(table, factors, design, seed) if factors and not conditional else None
    except IncompleteDesignError as exc:  # a two-level design with a corner lost: the ANOVA answers, and says so
        doe, incomplete = None, str(exc)
    if doe is not None:
        from xdoe.analysis._sequential import split_sequential

        coding = doe.get("coding") or {}
        own = split_sequential(table, design)[0]  # the model's runs: not a steepest-ascent or confirmation block's
        effects, interactions, methods = design_tables(
            doe, factors, lambda f: _levels(own, f, seed, _coded_order(own[f], coding.get(f))))
        if len(own) < len(table):  # the title's n counts every run: say which the model has
            apart = (f"fitted on {len(own)} of the {len(table)} runs (the design's own blocks; the "
                     f"{len(table) - len(own)} steepest-ascent or confirmation runs are answered apart)")
            methods = {k: f"{v}; {apart}" if k in ("factors", "interactions") else v for k, v in methods.items()}
    else:
        coding = (design or {}).get("coding") or {}
        nesting = _nesting(table, conditional, plain)
        effects, interactions = _effects(table, plain, kinds, seed=seed, coding=coding, nested=nesting)
        for f in conditional:
            sub = table[table[f].notna()]
            others = ([g for g in plain if sub[g].nunique() > 1]
                      + [g for g in conditional if g != f and sub[g].notna().all()])
            nested, _ = _effects(sub, [f, *others], kinds, within=_parent(table, f, plain), interactions=False,
                                 seed=seed, coding=coding)
            effects += [e for e in nested if e.name == f]
        effects.sort(key=lambda e: (-(e.eta_sq if not math.isnan(e.eta_sq) else -1), e.name))
        confounded_notes = [f"{e.name} is confounded with {', '.join(e.aliases)} in these runs (its levels move with "
                            f"theirs): the ANOVA cannot tell their effects apart, so {e.name} is left out of the "
                            "model (no F or p; its level means are the runs' own); vary it apart from them to "
                            "test it" + (f" (within {e.within})" if e.within else "") for e in effects if e.aliases]
        # what the effect column is: the level means' difference, or (a two-level design that lost a
        # corner) the signed effect of the main-effects model, which unbalanced runs do not bias
        effect_rule = ("effect = second minus first level mean for two levels (the design's level order), "
                       "largest minus smallest for more")
        if incomplete:
            effects = _signed_two_level(table, effects, kinds)
            effect_rule = ("a two-level factor's effect = high - low (the design's level order) of the estimated "
                           "marginal means of the main-effects OLS model, which unbalanced runs do not bias (the "
                           "level means shown are the runs' own), other categorical factors' = largest minus "
                           "smallest level mean")
        model = ("type II ANOVA (statsmodels OLS + anova_lm): categorical factors as C(...), continuous ones "
                 f"linear, two-way interactions of fully crossed categorical factors; {effect_rule} "
                 "(continuous: standardised coefficient)")
        if nesting:  # the others' residual is not the conditional factors' variation
            model += (f"; conditional factors ({', '.join(sorted(nesting))}) are terms of this model nested "
                      "within their condition, so that the others' residual is not their variation; their own "
                      "rows: the ANOVA of the runs where they apply")
        methods = {"factors": model, "interactions": model}

    points = design_points(table, statistic, seed=seed, goal=goal)
    notes = left_out_notes(frame)  # runs pruned early or not finished: left out of the responses, and said so
    if incomplete:
        notes.append(incomplete)
    notes += confounded_notes
    if doe is not None and doe.get("warning"):
        notes.append(doe["warning"])
    if doe is not None and doe.get("source") == "inferred" and doe["analysis"] != "sensitivity":
        notes.append("no manifest and no design recorded in the store: the coding was read off the runs "
                     "(a two-level factor's smaller value is low); give the output folder for the design's own")
    notes += points_notes(points)
    if not effects:
        notes.append("no factor varies across these runs: nothing to rank")
        # no model was fitted: no table names one (the design points keep theirs)
        methods = {k: v for k, v in methods.items() if k not in ("factors", "interactions")}
    elif not any(e.p == e.p for e in effects) and (doe is None or doe["analysis"] != "sensitivity"):
        notes.append("no residual degrees of freedom: F and p need repetitions")
    extra, branch_notes = branch_points(branches, response, phase, points[0] if points else None,
                                        statistic=statistic, agent=agent, seed=seed, goal=goal)
    points += extra
    notes += branch_notes
    from xdoe.analysis._optuna import frame_answer
    from xdoe.results import experiment_label

    adaptive, missing = frame_answer(whole, design, store, response=response, agent=agent)
    notes += [missing] if missing else []

    methods["points"] = points_method(statistic, goal)
    return Analysis(response=response.label(phase), factors=effects, interactions=interactions, points=points,
                    runs=len(table), warnings=notes, statistic=statistic,
                    experiment=experiment_label(frame), agent=agent, doe=doe, methods=methods, goal=goal,
                    adaptive=adaptive)


def points_notes(points: list[PointAggregate]) -> list[str]:
    """What the design points table says of its own numbers wherever it is
    shown (``xrun analyze``, ``xrun results``, the report, the dashboard):
    below :data:`MIN_REPETITIONS` runs at a point, its interval and the
    probability of improvement mean little; else ``[]``."""
    reps = min((p.n for p in points), default=0)
    if reps >= MIN_REPETITIONS:
        return []
    return [f"only {reps} repetition(s) per design point: confidence intervals and the probability "
            f"of improvement mean little below {MIN_REPETITIONS} (Agarwal et al. 2021)"]


def points_method(statistic: str, goal: Goal) -> str:
    """The design points table's method as ``Analysis.methods["points"]`` names it (with the goal when lower is
    better)."""
    note = goal.note()
    return (f"{STAT_NAMES.get(statistic, statistic)} over the runs of each setting, 95 % stratified-bootstrap CI "
            f"over runs (Agarwal et al. 2021)" + (f"; {note}" if note else ""))


def design_points(table: "pd.DataFrame", statistic: str = DEFAULT_STATISTIC, *, seed: int = 0,
                  goal: "Goal | str | None" = None) -> list[PointAggregate]:
    """Per setting of the factors in a :func:`run_table` (runs with the same
    levels -- centre points, replicates, a point copied into a later block --
    are one design point with ``n`` runs; ``index`` is the first of their
    design points, ``design_points`` all of them; without factors, per design
    point): levels (inactive factors left out), runs, the estimate by
    ``statistic`` over its runs' scores with a 95 % stratified-bootstrap
    percentile interval, and the probability that the best point's run
    beats this point's, with its interval; best first (ties: lower point
    index). ``goal`` (:func:`~xdoe.analysis.resolve_goal`; ``None``:
    maximize) says which is best: ``maximize`` ranks the highest estimate
    first and gives P(best > point); ``minimize`` the lowest first and P(best
    < point), computed as P(-best > -point) on the same resampling.

    Raises:
        ValueError: an unknown ``statistic``.
        InputError: a ``goal`` other than ``maximize`` or ``minimize``.
    """
    import pandas as pd

    sign = resolve_goal(goal).sign
    factors = [c for c in table.columns if c not in ("run", "design_point", "repetition", "y")]
    if factors:  # one key per setting: a readable text of the levels (NaN: inactive), in run order
        key = table[factors].astype(object).where(table[factors].notna(), None).apply(
            lambda r: repr(tuple(r)), axis=1)
    else:
        key = table["design_point"]
    codes, uniques = pd.factorize(key, sort=False, use_na_sentinel=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    ys, repetitions = table["y"].to_numpy(float), table["repetition"].to_numpy()
    indices = table["design_point"].to_numpy()
    columns = [table[f].to_numpy() for f in factors]
    present = table[factors].notna().to_numpy()
    points, scores = [], []
    for members in np.split(order, bounds) if len(order) else []:
        known = sorted({int(i) for i in indices[members] if i == i})
        index = known[0] if known else -1
        # the runs of the first design point first, each point's in repetition order
        ranked = sorted(members, key=lambda m: (indices[m] if indices[m] == indices[m] else -1, repetitions[m]))
        scores.append(ys[np.asarray(ranked, dtype=int)])
        first, active = members[0], present[members].all(axis=0)
        points.append((index, known, {f: column[first] for f, column, on in zip(factors, columns, active) if on}))
    estimates = interval_estimates(scores, statistic, seed=seed,
                                   keys=[(0, index & 0xFFFFFFFF) for index, _, _ in points])
    out = [PointAggregate(index, levels, int(y.size), statistic, *estimate, y, design_points=known)
           for (index, known, levels), y, estimate in zip(points, scores, estimates)]
    out.sort(key=lambda p: (math.isnan(p.estimate), -sign * p.estimate if not math.isnan(p.estimate) else 0.0,
                            p.index))
    if len(out) > 1:  # P(best better than point): on the sign-adjusted scores, higher is better
        improvements = probabilities_of_improvement(sign * out[0].values, [sign * p.values for p in out[1:]],
                                                    seed=seed, keys=[(1, p.index & 0xFFFFFFFF) for p in out[1:]])
        for p, improvement in zip(out[1:], improvements):
            p.improvement = improvement
    return out

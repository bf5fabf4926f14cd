"""Refusing designs too large for the machine before anything is built.

A full factorial grows as the product of the level counts (30 two-level
factors: 2^30 points, 240 GiB as a design matrix) and repetitions multiply
the runs again. :func:`check_design_size` counts the runs a design would have
from the level counts alone (Python integers: no overflow, no allocation) and
refuses more than a limit (``max_total_runs``, default
:data:`~xdoe.documents.DEFAULT_MAX_TOTAL_RUNS` = 10^6) with the count and
what to change.
"""

from __future__ import annotations

from typing import Any, Sequence

from xdoe.design._common import full_size
from xdoe.design._factors import Factor
from xdoe.errors import DesignTooLarge

__all__ = ["design_points_bound", "check_design_size", "check_doe_size", "doe_points_bound", "refuse_too_large",
           "DesignTooLarge"]


def _product_text(ks: list[int]) -> str:
    """``[2, 2, 2, 3]`` as ``2^3 x 3`` (level counts, largest power first)."""
    counts: dict[int, int] = {}
    for k in ks:
        counts[k] = counts.get(k, 0) + 1
    parts = [f"{k}^{m}" if m > 1 else str(k) for k, m in sorted(counts.items(), key=lambda km: (-km[1], km[0]))]
    return " x ".join(parts)


def design_points_bound(factors: Sequence[Factor], max_runs: int | None) -> int | None:
    """The most design points :func:`~xdoe.design.make_design` can return
    for ``factors`` and the budget ``max_runs`` (``None`` or ``-1``: no
    budget): the full factorial size, capped by ``max_runs``; ``max_runs``
    with a continuous factor; ``None`` when that is unbounded (a continuous
    factor without ``max_runs``, which ``make_design`` refuses itself)."""
    budget = None if max_runs is None or max_runs == -1 else int(max_runs)
    if any(f.levels is None for f in factors):
        return budget
    size = full_size(factors)
    return size if budget is None else min(size, budget)


def check_design_size(factors: Sequence[Factor], *, max_runs: int | None, repetitions: int, limit: int) -> None:
    """Refuse a design of more than ``limit`` runs (design points x repetitions).

    Raises:
        DesignTooLarge: the count, the limit and what to change.
    """
    points = design_points_bound(factors, max_runs)
    if points is None:
        return
    total = points * repetitions
    if total <= limit:
        return
    if points > limit:
        levels = _product_text([len(f.levels) for f in factors if f.levels is not None and len(f.levels) > 1])
        what = f"a full factorial of {levels} = {points} design points" if max_runs in (None, -1) else f"{points} design points"
        raise DesignTooLarge(
            f"{what} x {repetitions} repetition(s) = {total} runs is more than max_total_runs {limit}; "
            "give max_runs (a budget of design points, e.g. max_runs: 100, for a space-filling subset) "
            "or fewer levels, or raise max_total_runs (xgen --max-total-runs) if you mean it",
            "points",
        )
    raise DesignTooLarge(
        f"{points} design points x {repetitions} repetitions = {total} runs is more than max_total_runs "
        f"{limit}; lower repetitions or max_runs, or raise max_total_runs (xgen --max-total-runs) if you mean it",
        "repetitions",
    )


def _fraction_runs(d: int, spec: Any) -> int:
    """Runs of a fractional factorial before centre points: ``2^r`` for ``r``
    basic (one-letter) generators, else the catalogue's fraction for the
    resolution (the full factorial when none needs fewer runs); 0 where the
    method refuses the factors itself."""
    generators = spec.get("generators")
    if generators is not None:
        return 2 ** len([w for w in generators.split() if len(w.lstrip("+-")) == 1])
    if d < 2:
        return 0
    from xdoe.design import _catalogue

    try:
        found = _catalogue.minimum_aberration(d, spec.get("resolution", 4))
    except ValueError:
        return 0
    return 2**d if found is None else found.runs


def doe_points_bound(factors: Sequence[Factor], spec: Any, budget: int | None) -> tuple[int, str | None, bool]:
    """The most design points the ``design:`` mapping ``spec`` (a
    :class:`~xdoe.documents.DesignSpec` of a method beyond today's four) can
    make for ``factors``, from its options alone (Python integers: nothing is
    allocated, nothing is drawn).

    Returns:
        ``(points, option, exact)``: the bound; the option that sets most of
        it (``"center"``, ``"n"``, ``"trajectories"``...; ``None``: the
        method and the factors); whether the method makes exactly that many
        points (a method that refuses the factors counts 0).
    """
    method, d = spec.method, len(factors)
    center_default = {"central_composite": 4, "box_behnken": 3}.get(method, 0)
    center = int(spec.get("center", center_default))
    if method in ("fractional_factorial", "plackett_burman", "central_composite", "box_behnken"):
        if method == "fractional_factorial":
            base = _fraction_runs(d, spec)
        elif method == "plackett_burman":
            base = 4 * (d // 4 + 1) if d else 0
        elif method == "central_composite":
            base = 2**d + 2 * d if d >= 2 else 0
        else:
            from xdoe.design._classic import BOX_BEHNKEN

            blocks = BOX_BEHNKEN.get(d)
            base = len(blocks) * 2 ** len(blocks[0]) if blocks else 0
        if not base:
            return 0, None, False
        option = "center" if "center" in spec.options and center >= base else None
        return base + center, option, True
    if method in ("sobol", "halton", "d_optimal"):
        key = "runs" if method == "d_optimal" else "n"
        n = spec.get(key, budget)
        return (0, None, False) if n is None else (int(n), key if key in spec.options else None, True)
    if method in ("lhs", "maximin") and "n" in spec.options:  # n points, at most the full factorial
        return design_points_bound(factors, spec.options["n"]) or 0, "n", False
    if method == "morris":
        trajectories = int(spec.get("trajectories", 10))
        return trajectories * (d + 1), "trajectories" if "trajectories" in spec.options else None, d >= 2
    if method == "optuna":  # every trial, not only the first batch xgen writes
        return int(spec.get("trials", 1)), "trials", False
    if method == "saltelli":
        n = int(spec.get("n", 64))
        per = 2 * d + 2 if spec.get("second_order", False) else d + 2
        return n * per, "n" if "n" in spec.options else None, d >= 2
    return 0, None, False


def check_doe_size(factors: Sequence[Factor], spec: Any, *, budget: int | None, repetitions: int,
                   limit: int) -> None:
    """Refuse a ``design:`` mapping whose points (:func:`doe_points_bound`)
    x ``repetitions`` exceed ``limit`` runs, before it is built.

    Raises:
        DesignTooLarge: the count, the limit and what to change; ``cause``
            is the option that sets the size (``None``: the method).
    """
    points, option, _ = doe_points_bound(factors, spec, budget)
    repetitions = int(spec.get("repetitions_per_trial", repetitions)) if spec.method == "optuna" else repetitions
    total = points * repetitions
    if total <= limit:
        return
    if spec.method == "optuna":  # every trial it will ask, not the first batch
        raise DesignTooLarge(f"trials {points}: design optuna has {points} trials x {repetitions} repetition(s) per "
                             f"trial = {total} runs, which exceeds max_total_runs {limit}; lower trials or "
                             "repetitions_per_trial, or raise max_total_runs (xgen --max-total-runs) if you mean it",
                             "trials")
    if points <= limit:  # the design fits; its repetitions do not
        raise DesignTooLarge(
            f"design {spec.method} has {points} points x {repetitions} repetitions = {total} runs, which exceeds "
            f"max_total_runs {limit}; lower repetitions, or raise max_total_runs (xgen --max-total-runs) if you "
            "mean it", "repetitions")
    what = f"{option} {spec.get(option)}: " if option else ""
    fix = f"lower {option}" if option else "use fewer factors or another method"
    raise DesignTooLarge(
        f"{what}design {spec.method} has {points} points x {repetitions} repetition(s) = {total} runs, which "
        f"exceeds max_total_runs {limit}; {fix}, or raise max_total_runs (xgen --max-total-runs) if you mean it",
        option or "points",
    )


def refuse_too_large(experiment: Any, factors: list, max_total_runs: int | None) -> None:
    """A located :class:`~xdoe.errors.DocumentError` when the design of the
    :class:`~xdoe.documents.Experiment` would have more runs than
    ``max_total_runs`` (default: the document's ``max_total_runs``), counted
    from its options alone: nothing is built."""
    model = experiment.model
    limit = model.max_total_runs if max_total_runs is None else max_total_runs
    data = experiment.data
    from xdoe.documents import PLAIN_METHODS, parse_design

    spec = parse_design(model.design)
    try:
        if spec.method not in PLAIN_METHODS or "n" in spec.options:  # lhs/maximin: n is the budget of points
            budget = None if model.max_runs in (None, -1) else model.max_runs
            check_doe_size(factors, spec, budget=budget, repetitions=model.repetitions, limit=limit)
        else:
            check_design_size(factors, max_runs=model.max_runs, repetitions=model.repetitions, limit=limit)
    except DesignTooLarge as exc:
        key: tuple = ()
        if exc.cause == "repetitions" and "repetitions" in data:
            key = ("repetitions",)
        elif exc.cause in spec.options and isinstance(data.get("design"), dict):
            key = ("design", exc.cause)
        elif "n" in spec.options and isinstance(data.get("design"), dict):
            key = ("design", "n")
        elif spec.method not in PLAIN_METHODS and "design" in data:
            key = ("design",)
        else:
            key = ("max_runs",) if "max_runs" in data else (("factors",) if "factors" in data else ("schedule",))
        raise experiment.error(str(exc), key) from None

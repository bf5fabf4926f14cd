""":func:`make_design`: a document's ``design:`` and ``max_runs`` to a
:class:`~xdoe.design.Design`, by one of the methods of :mod:`xdoe.design._methods`."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Sequence

from xdoe.design._common import as_seed_sequence, check_factors, check_seed, full_size
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["make_design"]

#: the names ``design:`` took before mappings: ``auto`` picks one of the others
_PLAIN = ("auto", "full_factorial", "lhs", "maximin")


def _points(method: str, factors: tuple[Factor, ...], n: int, seed: np.random.SeedSequence) -> np.ndarray:
    """The points of ``n``-point design ``"lhs"`` or ``"maximin"``."""
    from xdoe.design._methods import design_method
    from xdoe.documents import DesignSpec

    return design_method(method)(factors, DesignSpec(method, {"n": n}), seed).points


def _budget(max_runs: int | None) -> int | None:
    if max_runs is None:
        return None
    if isinstance(max_runs, bool) or not isinstance(max_runs, numbers.Integral):
        raise DesignError(f"max_runs must be an integer (-1 for no limit), got {max_runs!r}")
    if max_runs == -1:
        return None
    if max_runs < 1:
        raise DesignError(f"max_runs must be a positive integer or -1 for no limit, got {max_runs}")
    return int(max_runs)


def make_design(
    factors: Sequence[Factor],
    *,
    method: str = "auto",
    max_runs: int | None = None,
    seed: int | np.random.SeedSequence = 0,
    spawn_key: tuple[int, ...] = (),
) -> Design:
    """Choose a method and size and build the design (see :func:`_make_design`;
    ``method`` may also be a ``design:`` mapping, :func:`~xdoe.design.parse_design`,
    built by :func:`~xdoe.design._doe.doe_design`);
    conditional factors (``Factor.when``) are then collapsed where inactive
    and duplicate points dropped (:func:`~xdoe.design._conditional.apply_conditions`;
    an optuna design keeps them: its point ``t`` is trial ``t``).
    An int ``seed`` stands for ``SeedSequence(seed, spawn_key=spawn_key)``,
    built only by the methods that draw (lhs, maximin).

    Raises:
        DesignError: as :func:`_make_design`, or a ``when`` naming an unknown
            or continuous factor, or a cycle of conditions.
    """
    factors = check_factors(factors)
    from xdoe.documents import PLAIN_METHODS, parse_design

    spec = parse_design(method)
    if spec.method in ("lhs", "maximin") and "n" in spec.options:
        max_runs = spec.options["n"]
    method = spec.method
    if method not in PLAIN_METHODS:
        from xdoe.design._doe import doe_design

        check_seed(seed)
        design = doe_design(factors, spec, _budget(max_runs), seed, spawn_key)
        if not any(f.when for f in design.factors):
            return design
        from xdoe.design._conditional import apply_conditions, check_conditions

        check_conditions(design.factors)
        # an optuna design keeps every point: design point t is trial t (two trials may ask one setting)
        points, active = apply_conditions(design.factors, design.points, drop_duplicates=method != "optuna")
        reason = design.reason
        if len(points) < len(design):
            reason += f"; {len(design) - len(points)} point(s) dropped as duplicates once conditional factors were collapsed"
        return Design(design.factors, design.method, reason, points, active, design.scale, design.info)
    if not any(f.when for f in factors):
        return _make_design(factors, method=method, max_runs=max_runs, seed=seed, spawn_key=spawn_key)
    from xdoe.design._conditional import apply_conditions, check_conditions
    from xdoe.design._factorial import full_factorial

    check_conditions(factors)
    budget = _budget(max_runs)
    if method in _PLAIN and all(f.levels is not None for f in factors):
        # the full factorial counts only valid combinations
        points, active = apply_conditions(factors, full_factorial(factors).points)
        if (budget is None and method in ("auto", "full_factorial")) or (budget is not None and len(points) <= budget):
            limit = "no max_runs" if budget is None else f"max_runs {budget}"
            return Design(factors, "full_factorial",
                          f"{method}: the full factorial of valid combinations (conditional factors) has "
                          f"{len(points)} of {full_size(factors)} points, within {limit}", points, active)
        if method == "full_factorial":
            raise DesignError(f"the full factorial of valid combinations has {len(points)} points > max_runs "
                              f"{budget}; raise max_runs or use design maximin")
    design = _make_design(factors, method=method, max_runs=max_runs, seed=seed, spawn_key=spawn_key)
    points, active = apply_conditions(design.factors, design.points)
    reason = design.reason
    if len(points) < len(design):
        reason += f"; {len(design) - len(points)} point(s) dropped as duplicates once conditional factors were collapsed"
    return Design(design.factors, design.method, reason, points, active)


def _make_design(
    factors: Sequence[Factor],
    *,
    method: str = "auto",
    max_runs: int | None = None,
    seed: int | np.random.SeedSequence = 0,
    spawn_key: tuple[int, ...] = (),
) -> Design:
    """Choose a method and size and build the design.

    Args:
        factors: the factors (unique names).
        method: ``"auto"`` (full factorial when every factor is categorical
            and the full factorial fits in ``max_runs``, else maximin with
            ``max_runs`` points), ``"full_factorial"``, ``"lhs"`` or
            ``"maximin"``.
        max_runs: budget of design points; ``None`` or ``-1``: no limit.
            ``lhs``/``maximin`` use ``n = max_runs``, capped at the full
            factorial size when every factor is categorical (a budget that
            covers the full factorial returns the full factorial).
        seed: int or ``SeedSequence`` driving every random choice.
        spawn_key: with an int ``seed``, the ``SeedSequence``'s ``spawn_key``.

    Returns:
        The :class:`Design`; zero factors give one design point with no columns.

    Raises:
        DesignError: unknown method, ``max_runs`` 0 or below -1, a continuous
            factor with ``full_factorial`` or without ``max_runs``, or a full
            factorial larger than ``max_runs``.
    """
    factors = check_factors(factors)
    budget = _budget(max_runs)
    check_seed(seed)
    if method not in _PLAIN:
        raise DesignError(f"unknown design method {method!r}; expected one of {', '.join(_PLAIN)}")
    limit = "no max_runs" if budget is None else f"max_runs {budget}"
    if not factors:
        used = "full_factorial" if method == "auto" else method
        return Design.grid((), used, "no factors: a single design point")
    continuous = [f.name for f in factors if f.levels is None]
    if method == "full_factorial" or (method == "auto" and not continuous):
        if continuous:
            raise DesignError(
                f"full_factorial needs levels, but factor {continuous[0]!r} is continuous; "
                "use design lhs or maximin with max_runs"
            )
        size = full_size(factors)
        if budget is not None and size > budget:
            if method == "full_factorial":
                raise DesignError(
                    f"full factorial has {size} points > max_runs {budget}; "
                    "raise max_runs or use design maximin"
                )
            return Design(
                factors,
                "maximin",
                f"full factorial has {size} points > max_runs {budget}: maximin subset of {budget} points",
                _points("maximin", factors, budget, as_seed_sequence(seed, spawn_key)),
            )
        why = "auto: all factors categorical" if method == "auto" else "full_factorial requested"
        return Design.grid(factors, "full_factorial", f"{why}; full factorial has {size} points, within {limit}")
    # lhs, maximin, or auto with continuous factors
    used = "maximin" if method == "auto" else method
    label = "maximin" if used == "maximin" else "Latin hypercube"
    if continuous:
        if budget is None:
            names = ", ".join(repr(c) for c in continuous)
            raise DesignError(
                f"continuous factor(s) {names} need max_runs (the number of design points) "
                f"for design {method}"
            )
        kind = "auto with continuous factor(s)" if method == "auto" else f"{used} requested"
        return Design(
            factors,
            used,
            f"{kind} {', '.join(continuous)}: {label} of {budget} points (max_runs)",
            _points(used, factors, budget, as_seed_sequence(seed, spawn_key)),
        )
    size = full_size(factors)
    if budget is None or budget >= size:
        return Design.grid(
            factors, "full_factorial",
            f"{used} requested but {limit} covers the full factorial of {size} points: full factorial",
        )
    return Design(
        factors,
        used,
        f"{used} requested: {label} of {budget} points (max_runs) from a full factorial of {size}",
        _points(used, factors, budget, as_seed_sequence(seed, spawn_key)),
    )


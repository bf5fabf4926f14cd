"""The designs named by a ``design:`` mapping beyond today's four names:
screening (fractional factorial, Plackett-Burman), response surface
(central composite, Box-Behnken), quasi-random (Sobol', Halton), D-optimal
and sensitivity (Morris, Saltelli) designs, as a :class:`~xdoe.design.Design`
whose :meth:`~xdoe.design.Design.coded` values and ``info`` say what the
method made (each by its method of :mod:`xdoe.design._methods`).
"""

from __future__ import annotations

from typing import Any, Sequence

from xdoe.design._common import as_seed_sequence
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.documents import DesignSpec
from xdoe.errors import DesignError

__all__ = ["doe_design", "DOE_MODEL", "coding", "summary"]

#: the model whose D-efficiency and correlations a method's dry run reports
DOE_MODEL = {"fractional_factorial": "linear", "plackett_burman": "linear", "central_composite": "quadratic",
             "box_behnken": "quadratic", "sobol": "linear", "halton": "linear", "morris": "linear",
             "saltelli": "linear"}


#: the option that gives a method its number of points, filled from ``max_runs`` when absent
SIZE_OPTION = {"sobol": "n", "halton": "n", "d_optimal": "runs"}


def doe_design(factors: Sequence[Factor], spec: DesignSpec, budget: int | None, seed: Any,
               spawn_key: tuple[int, ...]) -> Design:
    """The :class:`~xdoe.design.Design` of ``spec`` (before conditional
    factors are collapsed, which :func:`~xdoe.design.make_design` does): the
    method's design (:func:`~xdoe.design.design_method`), with ``info`` the
    model, the options given and what the method says, and ``reason`` the
    method's sentence and the budget.

    Raises:
        DesignError: the method's own refusals (see its module), or more
            design points than ``max_runs`` (``budget``).
    """
    method = spec.method
    info: dict[str, Any] = {"model": DOE_MODEL.get(method, spec.get("model", "linear")), **spec.to_dict()}
    if budget is not None and method not in ("sobol", "halton", "d_optimal", "optuna"):
        from xdoe.design._limits import doe_points_bound

        bound, _, exact = doe_points_bound(factors, spec, budget)
        if exact and bound > budget:  # refused from the options alone, before anything is built
            raise DesignError(f"design {method} has {bound} points > max_runs {budget}; raise max_runs or drop it")
    if method == "optuna":  # the first batch; xrun optimize asks the others (xdoe.design._optuna)
        from xdoe.design._optuna import first_batch

        points, extra = first_batch(factors, spec.options, seed)
        info.update(extra)
        reason = (f"optuna: the first {len(points)} of {extra['trials']} trials ({extra['sampler']} sampler, batches "
                  f"of {extra['batch']}); xrun optimize runs them and asks the others")
        made = Design(tuple(factors), method, reason, points)
    else:
        from xdoe.design._methods import design_method

        key = SIZE_OPTION.get(method)
        if key is not None and key not in spec.options:
            if budget is None:
                raise DesignError(f"design {method} needs {key} (or max_runs): the number of design points")
            spec = DesignSpec(method, {**spec.options, key: budget})
        made = design_method(method)(factors, spec, as_seed_sequence(seed, spawn_key))
        info.update(made.info or {})
    reason = made.reason
    if budget is not None and len(made) > budget and method not in ("sobol", "halton", "d_optimal", "optuna"):
        raise DesignError(f"design {method} has {len(made)} points > max_runs {budget}; raise max_runs or "
                          "drop it")
    if budget is not None:
        reason += f", within max_runs {budget}"
    return Design(made.factors, method, reason, made.points, made.active, made.scale, info)


def _num(x: float) -> float:
    return float(f"{float(x):.12g}")


def coding(design: Any, *, readable: bool = False) -> dict[str, dict[str, Any]]:
    """Per factor how coded values map to natural ones: a two-level factor
    ``{"minus": low level, "plus": high level}`` (the first and the second the
    document lists); a continuous one ``{"minus", "plus"}`` = its natural
    values at coded -1 and +1 (the factorial cube) and its ``scale`` (linear
    or log); a categorical factor of more levels its ``levels``. With
    ``readable``, levels as results tables show them
    (:func:`xdoe.documents.readable_level`: ``["learner"]`` reads ``learner``)."""
    from xdoe.design._factors import round_continuous
    from xdoe.documents import readable_level

    show = readable_level if readable else (lambda v: v)

    scale = design.scale or (1.0,) * len(design.factors)
    out: dict[str, dict[str, Any]] = {}
    for f, a in zip(design.factors, scale):
        if f.levels is None:
            out[f.name] = {"minus": round_continuous(f.value((1 - 1 / a) / 2)),
                           "plus": round_continuous(f.value((1 + 1 / a) / 2)), "scale": f.scale}
        elif len(f.levels) == 2:
            out[f.name] = {"minus": show(f.value(0)), "plus": show(f.value(1))}
        else:
            out[f.name] = {"levels": [show(f.value(i)) for i in range(len(f.levels))]}
    return out


def summary(design: Any, *, points: bool = True) -> dict[str, Any]:
    """What the dry run prints and the manifest stores of a design made from a
    ``design:`` mapping: its options and what the method made (``info``), the
    diagnostics (:attr:`~xdoe.design.Design.diagnostics`), the ``coding`` of
    every factor, the ``factors`` in design order and, with ``points``, every
    point's ``coded`` values (in that order: JSON sorts the ``coding`` keys)
    and ``natural`` values (an inactive conditional factor left out)."""
    info = {k: (_num(v) if isinstance(v, float) else v) for k, v in (design.info or {}).items()}
    out: dict[str, Any] = {"info": info, "diagnostics": design.diagnostics, "coding": coding(design),
                           "factors": [f.name for f in design.factors]}
    if points:
        coded = design.coded()
        from xdoe.design._factors import round_continuous

        out["points"] = [{"coded": [_num(c) if on else None for c, on in zip(coded[i], design.active[i])],
                          "natural": {k: round_continuous(v) for k, v in design.values(i).items()}}
                         for i in range(len(design))]
    return out

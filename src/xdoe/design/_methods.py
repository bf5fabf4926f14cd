"""The twelve design methods, one signature each.

Every method is ``method(factors, spec=None, seed=0) -> Design``:

* ``factors``: the :class:`~xdoe.design.Factor` columns (unique names);
* ``spec``: the method's options, a :class:`~xdoe.documents.DesignSpec` or a
  mapping of them (``{"n": 16}``), checked as a ``design:`` mapping is;
* ``seed``: an int or a :class:`numpy.random.SeedSequence` from which every
  random choice derives (the deterministic methods ignore it);
* the :class:`~xdoe.design.Design` it returns holds the points (level index /
  unit position per column), the method's name, one sentence of what it made,
  the widened factors and coded ``scale`` of a circumscribed central composite
  design, and the method's ``info``.

:func:`~xdoe.design.make_design` reads a document's ``design:`` and
``max_runs``, picks the method and its size, and collapses conditional factors;
a method itself knows nothing of budgets. Each module is imported when its
method is first used (the Latin hypercube and the QMC methods need scipy, the
sensitivity ones SALib): :data:`SOURCES` says where each comes from.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from xdoe.errors import DesignError

__all__ = ["METHODS", "SOURCES", "design_method"]

#: method name -> (module, function): where the method is implemented
_WHERE = {
    "full_factorial": ("xdoe.design._factorial", "full_factorial"),
    "lhs": ("xdoe.design._lhs", "latin_hypercube"),
    "maximin": ("xdoe.design._maximin", "maximin"),
    "fractional_factorial": ("xdoe.design._classic", "fractional_factorial"),
    "plackett_burman": ("xdoe.design._classic", "plackett_burman"),
    "central_composite": ("xdoe.design._classic", "central_composite"),
    "box_behnken": ("xdoe.design._classic", "box_behnken"),
    "sobol": ("xdoe.design._qmc", "sobol"),
    "halton": ("xdoe.design._qmc", "halton"),
    "d_optimal": ("xdoe.design._optimal", "d_optimal"),
    "morris": ("xdoe.design._sensitivity", "morris"),
    "saltelli": ("xdoe.design._sensitivity", "saltelli"),
}

#: the names of the twelve methods, as ``design:`` names them
METHODS: tuple[str, ...] = tuple(_WHERE)

#: method name -> where its design comes from (paper, published table, library)
SOURCES: dict[str, str] = {
    "full_factorial": "Montgomery 2012, ch. 5 (pyDOE fullfact's points, another row order)",
    "lhs": "McKay, Beckman & Conover 1979; scipy.stats.qmc.LatinHypercube",
    "maximin": "Johnson, Moore & Ylvisaker 1990; Z_k-linear codes (Conway & Sloane 1999, ch. 5) and "
               "min-conflicts search (Minton et al. 1992); ESE (Jin, Chen & Sudjianto 2005)",
    "fractional_factorial": "minimum-aberration catalogue (Chen, Sun & Wu 1993; Xu 2009; NIST/SEMATECH "
                            "e-Handbook 5.3.3.4.7); pyDOE fracfact for generators",
    "plackett_burman": "Plackett & Burman 1946; pyDOE pbdesign",
    "central_composite": "Box & Wilson 1951; Box & Hunter 1957 (orthogonal blocking); pyDOE ccdesign",
    "box_behnken": "Box & Behnken 1960, Technometrics 2, 455-475, their table",
    "sobol": "Sobol' 1967, Owen scrambling; scipy.stats.qmc.Sobol",
    "halton": "Halton 1960, scrambled; scipy.stats.qmc.Halton",
    "d_optimal": "Fedorov 1972; Atkinson, Donev & Tobias 2007, ch. 12 (exchange algorithm)",
    "morris": "Morris 1991; SALib sample.morris",
    "saltelli": "Saltelli 2002, Saltelli et al. 2010; SALib sample.sobol",
}


def design_method(name: str) -> Callable[..., Any]:
    """The function of design method ``name`` (one of :data:`METHODS`),
    imported on first use.

    Raises:
        DesignError: an unknown name.
    """
    try:
        module, function = _WHERE[name]
    except KeyError:
        raise DesignError(f"unknown design method {name!r}; expected one of {', '.join(METHODS)}") from None
    return getattr(importlib.import_module(module), function)

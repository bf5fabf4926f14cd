"""Designs of experiments: factors, the twelve design methods and the choice
between them (:func:`make_design`), and the adaptive (Optuna) design.

Every method has one signature, ``method(factors, spec=None, seed=0) ->
Design`` (:mod:`xdoe.design._methods`): ``spec`` holds the method's options
(a :class:`DesignSpec` or a mapping such as ``{"n": 16}``); every random
choice derives from ``seed``. :data:`METHODS` names them, :data:`SOURCES`
says where each comes from, :func:`design_method` returns one by name.

A design's ``points`` array has one row per design point and one column per
factor: the level index for a categorical factor, the unit position in
``[0, 1]`` for a continuous one (:meth:`Factor.value` maps either to the
value used in a run document).

Run documents, the manifest, the output folder and ``xgen augment``'s blocks
are the run-file writer's, :mod:`xdoe.design.runfiles`: it uses this package,
never the other way round (but the adaptive study, which writes its batches
through it).

Names are imported on first use (:mod:`xdoe._lazy`): a full-factorial
document never loads scipy (``xgen check`` starts in a fraction of the time
``import scipy.stats`` takes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.design._augment import from_coded, movable_levels, new_points
    from xdoe.design._classic import box_behnken, central_composite, fractional_factorial, plackett_burman
    from xdoe.design._design import Design
    from xdoe.design._doe import coding, summary
    from xdoe.design._factorial import full_factorial
    from xdoe.design._factors import Factor, round_continuous
    from xdoe.design._lhs import latin_hypercube
    from xdoe.design._limits import refuse_too_large
    from xdoe.design._make import make_design
    from xdoe.design._maximin import maximin
    from xdoe.design._methods import METHODS, SOURCES, design_method
    from xdoe.design._metrics import centred_l2_discrepancy, min_distance
    from xdoe.design._optimal import d_optimal
    from xdoe.design._optuna import PrunedTrial, record_study, trial_runs
    from xdoe.design._optuna_study import OptunaStudy
    from xdoe.design._qmc import halton, sobol
    from xdoe.design._sensitivity import morris, saltelli
    from xdoe.documents import DesignSpec, parse_design

__all__ = [
    "Factor",
    "Design",
    "make_design",
    "DesignSpec",
    "parse_design",
    # the twelve methods, one signature: method(factors, spec=None, seed=0) -> Design
    "METHODS",
    "SOURCES",
    "design_method",
    "full_factorial",
    "latin_hypercube",
    "maximin",
    "fractional_factorial",
    "plackett_burman",
    "central_composite",
    "box_behnken",
    "sobol",
    "halton",
    "d_optimal",
    "morris",
    "saltelli",
    # figures and what the dry run and the manifest say of a design
    "min_distance",
    "centred_l2_discrepancy",
    "summary",
    "coding",
    "round_continuous",
    "refuse_too_large",
    # the points of a block xgen augment adds
    "new_points",
    "from_coded",
    "movable_levels",
    # adaptive designs (method: optuna; xrun optimize)
    "OptunaStudy",
    "PrunedTrial",
    "trial_runs",
    "record_study",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.design._factors": ["Factor", "round_continuous"],
    "xdoe.design._design": ["Design"],
    "xdoe.design._make": ["make_design"],
    "xdoe.design._methods": ["METHODS", "SOURCES", "design_method"],
    "xdoe.design._factorial": ["full_factorial"],
    "xdoe.design._lhs": ["latin_hypercube"],
    "xdoe.design._maximin": ["maximin"],
    "xdoe.design._classic": ["fractional_factorial", "plackett_burman", "central_composite", "box_behnken"],
    "xdoe.design._qmc": ["sobol", "halton"],
    "xdoe.design._optimal": ["d_optimal"],
    "xdoe.design._sensitivity": ["morris", "saltelli"],
    "xdoe.design._metrics": ["min_distance", "centred_l2_discrepancy"],
    "xdoe.design._doe": ["summary", "coding"],
    "xdoe.design._limits": ["refuse_too_large"],
    "xdoe.design._augment": ["new_points", "from_coded", "movable_levels"],
    "xdoe.design._optuna_study": ["OptunaStudy"],
    "xdoe.design._optuna": ["PrunedTrial", "trial_runs", "record_study"],
    # the grammar of the `design:` key lives with the document that holds it
    "xdoe.documents": ["DesignSpec", "parse_design"],
})

"""The response's goal: whether a higher or a lower score is better.

Every ranking of the analysis -- the design points best first, "best", the
probability of improvement, ``xrun plan``'s better point -- reads one
:class:`Goal`, which :func:`resolve_goal` chooses, in this order:

1. an explicit ``goal`` (``--goal maximize|minimize`` on ``xrun results``,
   ``analyze``, ``report`` and ``plan``; ``goal=`` of the Python functions);
2. the goal the design declared for the analysed response: an optuna
   design's ``direction`` (``design: {method: optuna, direction: minimize}``),
   read from the design record the frame carries (``xdoe.results.load`` puts
   the store's record in ``frame.attrs["xdoe_design"]``) or from the
   manifest. With several responses of different directions, the direction
   of the design's response that is the analysed one (same phase, metric and
   statistic); an analysed response that is none of them takes the first
   direction, as the optuna section (:func:`xdoe.analysis.optuna_summary`)
   reads the analysed response as the study's first objective; else the
   goal of the design's last steepest-ascent or confirmation block
   (``xgen augment --steepest-ascent N --goal minimize``: the path descends,
   so the best point is the lowest);
3. else ``maximize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdoe.analysis._sequential import GOALS, _kind
from xdoe.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._response import Response

__all__ = ["GOALS", "Goal", "resolve_goal"]


@dataclass(frozen=True)
class Goal:
    """``direction``: ``maximize`` (higher is better) or ``minimize``;
    ``source``: where it came from, ``option`` (``--goal`` / ``goal=``),
    ``design`` (the design's declared direction), ``augment`` (the goal of
    its last steepest-ascent or confirmation block) or ``default``."""

    direction: str = "maximize"
    source: str = "default"

    @property
    def sign(self) -> float:
        """``+1.0`` for maximize, ``-1.0`` for minimize: ``sign * score`` is higher-is-better."""
        return 1.0 if self.direction == "maximize" else -1.0

    @property
    def minimize(self) -> bool:
        """Whether lower is better."""
        return self.direction == "minimize"

    @property
    def improvement(self) -> str:
        """The probability of improvement as the tables head it: ``P(best > point)`` or ``P(best < point)``."""
        return "P(best < point)" if self.minimize else "P(best > point)"

    def note(self) -> str:
        """What a caption says of a minimize goal (``""`` for maximize, the default):
        ``lower is better (goal: minimize, from the design's direction)`` or
        ``lower is better (--goal minimize)``."""
        if not self.minimize:
            return ""
        why = {"option": "--goal minimize", "design": "goal: minimize, from the design's direction",
               "augment": "goal: minimize, from xgen augment --goal"}.get(self.source, "goal: minimize")
        return f"lower is better ({why})"


def _phases(frame: "pd.DataFrame | None") -> list[str]:
    """The phases of a :func:`xdoe.results.load` or :func:`~xdoe.analysis.load_scores` frame, in order."""
    from xdoe.analysis._response import SCORES_ATTR

    if frame is None:
        return []
    scored = frame.attrs.get(SCORES_ATTR)
    if scored is not None:
        return list(scored["phases"])
    return list(frame["phase"].unique()) if "phase" in frame.columns else []  # in order of appearance


def _declared(design: dict[str, Any] | None, response: "Response | None",
              frame: "pd.DataFrame | None") -> str | None:
    """The direction ``design`` declared for ``response`` (see the module docstring), or ``None``."""
    from xdoe.analysis._response import Response, parse_response, resolve_phase

    info = (design or {}).get("info") or {}
    if (design or {}).get("method") != "optuna" or not info.get("direction"):
        return None
    directions = info["direction"] if isinstance(info["direction"], list) else [info["direction"]]
    if len(set(directions)) == 1:
        return directions[0]
    responses = info.get("response") or [""]
    responses = responses if isinstance(responses, list) else [responses]

    phases = _phases(frame)

    def key(r: Response) -> tuple[Any, ...]:
        return resolve_phase(r.phase, phases), r.metric, r.stat

    asked = key(response or Response())
    for text, direction in zip(responses, directions):
        if key(parse_response(text or None)) == asked:
            return direction
    return directions[0]


def resolve_goal(goal: "Goal | str | None" = None, *, design: dict[str, Any] | None = None,
                 response: "Response | None" = None, frame: "pd.DataFrame | None" = None) -> Goal:
    """The goal of the analysed ``response`` (see the module docstring for the order).

    Args:
        goal: ``maximize`` or ``minimize`` (``source`` ``option``), a
            :class:`Goal` (returned as it is), or ``None``: the design's, else maximize.
        design: the design record (the manifest's, :func:`xdoe.analysis.read_design`);
            ``None``: the one ``frame`` carries (``frame.attrs["xdoe_design"]``).
        response: the analysed response (default: last phase, objective, mean).
        frame: the episodes or scores analysed (their phases resolve the
            responses' phases; their design record is the fallback of ``design``).

    Raises:
        InputError: ``goal`` is neither ``maximize`` nor ``minimize``.
    """
    if isinstance(goal, Goal):
        return goal
    if goal is not None:
        if goal not in GOALS:
            raise InputError(f"--goal {goal!r}: expected one of {', '.join(GOALS)}")
        return Goal(goal, "option")
    if design is None and frame is not None:
        from xdoe.results import DESIGN_ATTR

        design = frame.attrs.get(DESIGN_ATTR)
    declared = _declared(design, response, frame)
    if declared in GOALS:
        return Goal(declared, "design")
    augmented = _augmented(design)
    if augmented in GOALS:
        return Goal(augmented, "augment")
    return Goal()


def _augmented(design: dict[str, Any] | None) -> str | None:
    """The ``goal`` of the design's last steepest-ascent or confirmation block, or ``None``."""
    goal = None
    for block in (design or {}).get("blocks") or []:
        kind = _kind(block) if isinstance(block, dict) else None
        spec = block["how"][kind] if kind else None
        if isinstance(spec, dict) and spec.get("goal"):
            goal = spec["goal"]
    return goal

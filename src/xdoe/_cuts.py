"""Why an episode ended, as the store records it in ``cut_by`` (episode and
step rows, ``xrun export``, :func:`xdoe.results.load`): shared by the
executor, which decides it, the store, which keeps it, and the analysis, which
leaves budget cuts out. No imports: the run path and the readers both load it.

``cut_by`` is ``None`` for an episode that *terminated* (reached a terminal
state of the task); otherwise the episode was *truncated* and ``cut_by`` says
by what:

* :data:`CUT_ENVIRONMENT`: the environment truncated it (e.g. gymnasium's
  ``TimeLimit``: CartPole-v1 at 500 steps);
* a termination condition's class name, e.g. ``MaxStepsTerminationCondition``:
  the condition answered ``RESET`` (an episode time limit of the document);
* :data:`CUT_STEP_BUDGET`: the phase's step budget
  (``MaxStepsTerminationCondition(phase_steps=...)``) ran out mid-episode:
  the budget the phase's workers share, in this worker or another; under
  ``--parallel-workers`` this worker's own budget (each worker counts its own
  steps; the others go on to theirs);
* :data:`CUT_STOP`: a condition stopped the phase or run (``STOP_PHASE``,
  ``STOP_RUN``) mid-episode.

The last two, :data:`BUDGET_CUTS`, say nothing about the task: the episode
did not end, its phase did. Learning curves and responses leave them out by
default (an SB3 run stopped at 40,000 steps would otherwise end every curve
in a fake collapse).
"""

from __future__ import annotations

__all__ = ["CUT_ENVIRONMENT", "CUT_STEP_BUDGET", "CUT_STOP", "CUT_CONDITION", "BUDGET_CUTS"]

CUT_ENVIRONMENT = "environment"
CUT_STEP_BUDGET = "step_budget"
CUT_STOP = "stop"
#: an episode ended by a step check whose deciding condition is unknown (a
#: custom loop that did not say); treated like a condition's RESET
CUT_CONDITION = "condition"
BUDGET_CUTS = (CUT_STEP_BUDGET, CUT_STOP)

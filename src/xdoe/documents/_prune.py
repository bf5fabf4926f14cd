"""``run_config: {prune: {...}}``: stop poor runs early (issue 37).

A run with a prune rule reports its intermediate response at every *rung*
of one phase (environment steps of that phase, all workers together) and
is ended there, recorded ``pruned``, when Optuna's pruner says so
(:mod:`xdoe.execution._pruning`). The document only carries the rule:

``method``
    ``successive_halving`` (``optuna.pruners.SuccessiveHalvingPruner``),
    ``hyperband`` (``HyperbandPruner``, needs ``max_steps``) or ``median``
    (``MedianPruner``).
``metric``
    the episode column the intermediate value is the mean of: ``objective``
    (the default, as the analysis's default response) or ``reward``.
``min_steps``
    the first rung, in environment steps of the phase. Successive halving
    and Hyperband place rung ``k`` at ``min_steps * reduction_factor**k``;
    the median rule every ``interval_steps`` (default ``min_steps``).
``reduction_factor`` (3), ``min_early_stopping_rate`` (0), ``bootstrap_count`` (0),
``max_steps`` (Hyperband), ``n_startup_trials`` (median, 5)
    Optuna's parameters of the same names (``min_resource`` is
    ``min_steps``, ``max_resource`` is ``max_steps``).
``phase``
    the phase pruned: its name or index; default the first ``train`` phase.
``agent``
    whose episodes count (default the phase's first agent).
``direction``
    ``maximize`` (default) or ``minimize``.
``window``
    the intermediate value at a rung is the metric's mean over the episodes
    that ended since the previous rung (the first: since the phase began);
    ``window: N`` takes the last ``N`` episodes instead.
``batch_runs``
    judge each run only against the runs of earlier batches of
    ``batch_runs`` consecutive run numbers (run ``n`` sees the runs numbered
    below ``batch_runs * (n // batch_runs)``), never against the runs of its
    own batch: when batches run one after another (``xrun optimize`` does,
    with ``batch_runs`` = the design's ``batch`` x its repetitions) the
    decisions depend neither on ``--jobs`` nor on timing. Default: every
    other run that reached the rung (asynchronous).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from xdoe.documents._validation import DocumentModel, Integer

__all__ = ["PruneSpec", "PRUNE_METHODS", "RUN_CONFIG_SHAPE"]

#: the shape of ``run_config`` (one mapping, in run and experiment documents alike)
RUN_CONFIG_SHAPE = ("{condition: {name: ..., params: {...}}, prune: {method: ..., min_steps: N}, "
                    "timeout: seconds, log: [tensorboard:DIR, mlflow:URI]}")

#: the pruning rules, by the name a document gives them
PRUNE_METHODS = ("successive_halving", "hyperband", "median")


class PruneSpec(DocumentModel):
    """``run_config.prune`` (see the module docstring)."""

    method: Literal["successive_halving", "hyperband", "median"]
    min_steps: Integer = Field(ge=1)
    metric: Literal["objective", "reward"] = "objective"
    reduction_factor: Integer = Field(default=3, ge=2)
    min_early_stopping_rate: Integer = Field(default=0, ge=0)
    bootstrap_count: Integer = Field(default=0, ge=0)
    max_steps: Integer | None = Field(default=None, ge=1)
    n_startup_trials: Integer = Field(default=5, ge=0)
    interval_steps: Integer | None = Field(default=None, ge=1)
    phase: str | Integer | None = None
    agent: str | None = None
    direction: Literal["maximize", "minimize"] = "maximize"
    window: Integer | None = Field(default=None, ge=1)
    batch_runs: Integer | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _hyperband_needs_max(self) -> "PruneSpec":
        if self.method == "hyperband":
            if self.max_steps is None:
                raise ValueError("prune: method hyperband needs max_steps (the phase's environment steps "
                                 "a run may use, Optuna's max_resource)")
            if self.max_steps < self.min_steps:
                raise ValueError(f"prune: max_steps {self.max_steps} is below min_steps {self.min_steps}")
        return self

    def rung_step(self, rung: int) -> int:
        """The phase's environment step of rung ``rung`` (0-based)."""
        if self.method == "median":
            return self.min_steps + rung * (self.interval_steps or self.min_steps)
        first = self.min_early_stopping_rate if self.method == "successive_halving" else 0
        return self.min_steps * self.reduction_factor ** (first + rung)

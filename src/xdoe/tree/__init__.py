"""Training as a tree of sessions: branch a session from a finished one with
changed configuration, grow a tree automatically under a health criterion,
navigate it.

>>> from xdoe import tree                                                  # doctest: +SKIP
>>> child = tree.branch("taxi-0000:training", set=["brain.params.alpha=x0.5"], episodes=300)
>>> child.result.status, child.assessment.metric                           # doctest: +SKIP
('finished', -41.3)
>>> grown = tree.grow("experiments/taxi-grow.yaml")                        # doctest: +SKIP
>>> grown.status, [n.run_uid for n in grown.best]                          # doctest: +SKIP

Modules: :mod:`~xdoe.tree._overrides` (``KEY=VALUE`` into a run document),
:mod:`~xdoe.tree._criteria` (health criteria), :mod:`~xdoe.tree._branch`,
:mod:`~xdoe.tree._config` (the session config), :mod:`~xdoe.tree._grow`,
:mod:`~xdoe.tree._render` (text, JSON, DOT), :mod:`~xdoe.tree._attach`
(:class:`~xdoe.TrainingSession` as a node). The store side (tables
``session_tree``, ``session_node``, ``session_edge``) is
the session-tree methods of :class:`xdoe.store.Store`.
"""

from __future__ import annotations

import warnings
from typing import Any

from xdoe.tree._attach import Attachment, attach
from xdoe.tree._branch import BranchResult, Source, branch, child_document, child_seed, resolve_source
from xdoe.tree._config import Limits, SessionConfig, load_session_config
from xdoe.tree._criteria import (
    Assessment,
    HealthCriterion,
    ImprovementCriterion,
    SessionEpisodes,
    ThresholdCriterion,
    make_criterion,
)
from xdoe.tree._grow import GrowResult, best_path, grow
from xdoe.tree._overrides import Move, Override, apply_overrides, describe_overrides, parse_override, resolve_key
from xdoe.tree._render import edge_label, node_health, path_to, render_dot, render_json, render_text

__all__ = [
    "branch",
    "grow",
    "attach",
    "BranchResult",
    "GrowResult",
    "Attachment",
    "Source",
    "resolve_source",
    "child_seed",
    "child_document",
    "SessionConfig",
    "Limits",
    "load_session_config",
    "HealthCriterion",
    "ImprovementCriterion",
    "ThresholdCriterion",
    "SessionEpisodes",
    "Assessment",
    "make_criterion",
    "best_path",
    "Move",
    "Override",
    "apply_overrides",
    "describe_overrides",
    "parse_override",
    "resolve_key",
    "node_health",
    "path_to",
    "edge_label",
    "render_text",
    "render_json",
    "render_dot",
]


def __getattr__(name: str) -> Any:
    # the old name of Assessment (issue 23.7), kept for criteria written against it
    if name == "Verdict":
        warnings.warn("xdoe.tree.Verdict is now xdoe.tree.Assessment (xdoe.conditions.Verdict is a termination "
                      "condition's answer)", DeprecationWarning, stacklevel=2)
        return Assessment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The run-file writer of ``xgen``: an experiment document and its design
(:mod:`xdoe.design`) to run documents, and those to an output folder.

* :func:`generate` / :func:`prepare`: document -> design -> run documents
  (:class:`RunSequence`, each built on demand by :class:`Expander`; per-run
  seeds from :func:`run_seed`);
* :func:`write_runs` / :func:`write_outputs`: the run files, ``design.csv``
  and ``manifest.json`` written atomically into the output folder
  (:class:`OutputLayout`), an existing folder extended, never overwritten
  (:class:`ExtendPlan`);
* :func:`augment_runs` / :func:`with_blocks`: the blocks ``xgen augment``
  adds, numbered after the existing runs and recorded in the manifest
  (:class:`AugmentedRuns`);
* :func:`folder_experiments`: which experiments an output folder holds.

Example::

    from xdoe.design.runfiles import generate

    runs, design = generate("experiments/dummy.yaml")          # writes nothing
    generate("experiments/dummy.yaml", output="_outputs")      # writes the files

Names are imported on first use (:mod:`xdoe._lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.design.runfiles._blocks import (
        CONDITIONAL_AUGMENTS,
        AugmentedRuns,
        augment_runs,
        check_augment,
        with_blocks,
    )
    from xdoe.design.runfiles._expand import Expander, factors_of, run_seed, run_uid
    from xdoe.design.runfiles._extend import ExtendPlan, layout_for, recorded_overrides
    from xdoe.design.runfiles._folder import FolderExperiment, folder_experiments
    from xdoe.design.runfiles._generate import (
        ExperimentWarning,
        Generation,
        RunSequence,
        build_design,
        check_runs,
        generate,
        plan_runs,
        prepare,
        write_runs,
    )
    from xdoe.design.runfiles._output import MAX_FIGURE_POINTS, OutputLayout, WriteResult, plan_outputs, write_outputs

__all__ = [
    # document -> design -> run documents (xgen generate, xgen check)
    "generate",
    "prepare",
    "build_design",
    "check_runs",
    "Generation",
    "RunSequence",
    "ExperimentWarning",
    "Expander",
    "factors_of",
    "run_seed",
    "run_uid",
    # the output folder: run files, design.csv, manifest.json
    "write_runs",
    "plan_runs",
    "write_outputs",
    "plan_outputs",
    "OutputLayout",
    "WriteResult",
    "ExtendPlan",
    "layout_for",
    "recorded_overrides",
    "MAX_FIGURE_POINTS",
    # blocks added by xgen augment
    "augment_runs",
    "check_augment",
    "CONDITIONAL_AUGMENTS",
    "with_blocks",
    "AugmentedRuns",
    # the experiments of an output folder (the read commands of xrun)
    "FolderExperiment",
    "folder_experiments",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.design.runfiles._generate": [
        "generate", "prepare", "write_runs", "build_design", "check_runs", "plan_runs",
        "Generation", "RunSequence", "ExperimentWarning",
    ],
    "xdoe.design.runfiles._expand": ["Expander", "factors_of", "run_seed", "run_uid"],
    "xdoe.design.runfiles._output": ["OutputLayout", "WriteResult", "write_outputs", "plan_outputs",
                                     "MAX_FIGURE_POINTS"],
    "xdoe.design.runfiles._extend": ["ExtendPlan", "layout_for", "recorded_overrides"],
    "xdoe.design.runfiles._blocks": ["augment_runs", "check_augment", "CONDITIONAL_AUGMENTS", "with_blocks",
                                     "AugmentedRuns"],
    "xdoe.design.runfiles._folder": ["FolderExperiment", "folder_experiments"],
})

"""Experiment and run documents: YAML loading with line numbers, pydantic
models, the ``$req`` reference grammar, ``${name}`` placeholders and
canonical YAML dumping.

Names are imported on first use (:mod:`xdoe._lazy`): ``xrun`` needs the run
document models, not the experiment document's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.documents._canonical import canonical_json, dump_canonical, format_float
    from xdoe.documents._experiment import (
        DESIGN_METHODS,
        Experiment,
        ExperimentDocument,
        PhaseLevels,
        Variable,
        experiment_schema,
        load_experiment,
        safe_uid,
    )
    from xdoe.documents._placeholders import PlaceholderError, interpolate, substitute
    from xdoe.documents._reference import Reference, ReferenceSyntaxError, is_reference, parse_reference
    from xdoe.documents._run import (
        RUN_DOCUMENT_VERSION,
        AgentEntry,
        ComponentSpec,
        DesignPointInfo,
        EnvironmentEntry,
        EnvironmentSpec,
        PhaseConfig,
        RunConfig,
        RunDocument,
        RunDocumentWarning,
        RunPhase,
        SimulationSpec,
        load_run_document,
        parse_run_document,
    )
    from xdoe.documents._yaml import MAX_ALIAS_NODES, MAX_DEPTH, MAX_DOCUMENT_BYTES, YamlDocument, load_yaml, read_text

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "YamlDocument",
    "load_yaml",
    "read_text",
    "dump_canonical",
    "canonical_json",
    "format_float",
    "Reference",
    "ReferenceSyntaxError",
    "is_reference",
    "parse_reference",
    "PlaceholderError",
    "interpolate",
    "substitute",
    "DESIGN_METHODS",
    "Experiment",
    "ExperimentDocument",
    "PhaseLevels",
    "Variable",
    "experiment_schema",
    "load_experiment",
    "safe_uid",
    "RUN_DOCUMENT_VERSION",
    "RunDocument",
    "RunDocumentWarning",
    "RunPhase",
    "RunConfig",
    "AgentEntry",
    "ComponentSpec",
    "EnvironmentEntry",
    "EnvironmentSpec",
    "SimulationSpec",
    "PhaseConfig",
    "DesignPointInfo",
    "load_run_document",
    "parse_run_document",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.documents._canonical": ["canonical_json", "dump_canonical", "format_float"],
    "xdoe.documents._experiment": [
        "DESIGN_METHODS", "Experiment", "ExperimentDocument", "PhaseLevels", "Variable",
        "experiment_schema", "load_experiment", "safe_uid",
    ],
    "xdoe.documents._placeholders": ["PlaceholderError", "interpolate", "substitute"],
    "xdoe.documents._reference": ["Reference", "ReferenceSyntaxError", "is_reference", "parse_reference"],
    "xdoe.documents._run": [
        "RUN_DOCUMENT_VERSION", "AgentEntry", "ComponentSpec", "DesignPointInfo", "EnvironmentEntry",
        "EnvironmentSpec", "PhaseConfig", "RunConfig", "RunDocument", "RunDocumentWarning", "RunPhase",
        "SimulationSpec", "load_run_document", "parse_run_document",
    ],
    "xdoe.documents._yaml": [
        "MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_DOCUMENT_BYTES", "YamlDocument", "load_yaml", "read_text",
    ],
})

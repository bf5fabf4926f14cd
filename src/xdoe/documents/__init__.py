"""Experiment and run documents: YAML loading with line numbers, pydantic
models, the ``$req`` reference grammar, ``${name}`` placeholders and
canonical YAML dumping.

Names are imported on first use (:mod:`xdoe._lazy`): ``xrun`` needs the run
document models, not the experiment document's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.documents._canonical import (
        canonical_json as canonical_json,
        dump_canonical as dump_canonical,
        format_float as format_float,
        readable_level as readable_level,
    )
    from xdoe.documents._experiment import (
        DESIGN_METHODS as DESIGN_METHODS,
        Experiment as Experiment,
        ExperimentDocument as ExperimentDocument,
        PhaseLevels as PhaseLevels,
        Variable as Variable,
        experiment_schema as experiment_schema,
        load_experiment as load_experiment,
        safe_uid as safe_uid,
    )
    from xdoe.documents._placeholders import (
        PlaceholderError as PlaceholderError,
        interpolate as interpolate,
        substitute as substitute,
    )
    from xdoe.documents._reference import (
        Reference as Reference,
        ReferenceSyntaxError as ReferenceSyntaxError,
        is_reference as is_reference,
        parse_reference as parse_reference,
    )
    from xdoe.documents._run import (
        RUN_DOCUMENT_VERSION as RUN_DOCUMENT_VERSION,
        AgentEntry as AgentEntry,
        ComponentSpec as ComponentSpec,
        DesignPointInfo as DesignPointInfo,
        EnvironmentEntry as EnvironmentEntry,
        EnvironmentSpec as EnvironmentSpec,
        PhaseConfig as PhaseConfig,
        RunConfig as RunConfig,
        RunDocument as RunDocument,
        RunDocumentWarning as RunDocumentWarning,
        RunPhase as RunPhase,
        SessionInfo as SessionInfo,
        SimulationSpec as SimulationSpec,
        load_run_document as load_run_document,
        parse_run_document as parse_run_document,
    )
    from xdoe.documents._yaml import (
        MAX_ALIAS_NODES as MAX_ALIAS_NODES,
        MAX_DEPTH as MAX_DEPTH,
        MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES,
        YamlDocument as YamlDocument,
        load_yaml as load_yaml,
        read_bytes as read_bytes,
        read_text as read_text,
    )

_EXPORTS = {
    "xdoe.documents._canonical": ["canonical_json", "dump_canonical", "format_float", "readable_level"],
    "xdoe.documents._experiment": [
        "DESIGN_METHODS", "Experiment", "ExperimentDocument", "PhaseLevels", "Variable", "experiment_schema",
        "load_experiment", "safe_uid",
    ],
    "xdoe.documents._placeholders": ["PlaceholderError", "interpolate", "substitute"],
    "xdoe.documents._reference": ["Reference", "ReferenceSyntaxError", "is_reference", "parse_reference"],
    "xdoe.documents._run": [
        "RUN_DOCUMENT_VERSION", "AgentEntry", "ComponentSpec", "DesignPointInfo", "EnvironmentEntry",
        "EnvironmentSpec", "PhaseConfig", "RunConfig", "RunDocument", "RunDocumentWarning", "RunPhase",
        "SessionInfo", "SimulationSpec", "load_run_document", "parse_run_document",
    ],
    "xdoe.documents._yaml": [
        "MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_DOCUMENT_BYTES", "YamlDocument", "load_yaml", "read_bytes", "read_text",
    ],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

"""Experiment and run documents: YAML loading with line numbers, pydantic
models, the ``$req`` reference grammar, the ``design:`` grammar,
``${name}`` placeholders and canonical YAML dumping.

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
        format_scalar as format_scalar,
        json_default as json_default,
        readable_level as readable_level,
    )
    from xdoe.documents._components import Component as Component, Simulation as Simulation
    from xdoe.documents._design_spec import (
        PLAIN_METHODS as PLAIN_METHODS,
        DesignSpec as DesignSpec,
        parse_design as parse_design,
    )
    from xdoe.documents._experiment import (
        DESIGN_METHODS as DESIGN_METHODS,
        ExperimentDocument as ExperimentDocument,
        PhaseLevels as PhaseLevels,
        experiment_schema as experiment_schema,
        load_experiment as load_experiment,
    )
    from xdoe.documents._experiment_models import LIST_KEYS as LIST_KEYS, NAME_KEYS as NAME_KEYS, SET_KEYS as SET_KEYS
    from xdoe.documents._experiment_types import Experiment as Experiment, Variable as Variable
    from xdoe.documents._identifiers import safe_uid as safe_uid, uid_file_name as uid_file_name
    from xdoe.documents._lineage_specs import (
        LoadSpec as LoadSpec,
        ReplaySpec as ReplaySpec,
        parse_load as parse_load,
        parse_replay as parse_replay,
    )
    from xdoe.documents._overrides import (
        Move as Move,
        Override as Override,
        apply_overrides as apply_overrides,
        describe_overrides as describe_overrides,
        dotted as dotted,
        override_record as override_record,
        override_specs as override_specs,
        overrides_from_record as overrides_from_record,
        parse_override as parse_override,
        parse_value as parse_value,
        resolve_key as resolve_key,
    )
    from xdoe.documents._placeholders import (
        PlaceholderError as PlaceholderError,
        find_placeholders as find_placeholders,
        interpolate as interpolate,
        substitute as substitute,
        whole_placeholder as whole_placeholder,
    )
    from xdoe.documents._log_targets import (
        LOG_KINDS as LOG_KINDS,
        LogTarget as LogTarget,
        log_targets as log_targets,
        parse_log_target as parse_log_target,
    )
    from xdoe.documents._prune import PRUNE_METHODS as PRUNE_METHODS, PruneSpec as PruneSpec
    from xdoe.documents._reference import (
        Reference as Reference,
        ReferenceSyntaxError as ReferenceSyntaxError,
        is_reference as is_reference,
        parse_reference as parse_reference,
    )
    from xdoe.documents._run import (
        RunAgent as RunAgent,
        RunConfig as RunConfig,
        RunDesignPoint as RunDesignPoint,
        RunDocument as RunDocument,
        RunDocumentWarning as RunDocumentWarning,
        RunEnvironment as RunEnvironment,
        RunEnvironmentComponent as RunEnvironmentComponent,
        RunPhase as RunPhase,
        RunPhaseConfig as RunPhaseConfig,
        SessionInfo as SessionInfo,
        load_run_document as load_run_document,
        parse_run_document as parse_run_document,
    )
    from xdoe.documents._validation import (
        DocumentModel as DocumentModel,
        empty_list as empty_list,
        ensure_valid as ensure_valid,
    )
    from xdoe.documents._versions import RUN_DOCUMENT_VERSION as RUN_DOCUMENT_VERSION
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
    "xdoe.documents._canonical": [
        "canonical_json", "dump_canonical", "format_float", "format_scalar", "json_default", "readable_level",
    ],
    # what both documents share: a component (name, params) and the simulation (name, conditions)
    "xdoe.documents._components": ["Component", "Simulation"],
    # the `design:` key: a method name or a mapping (docs/designs.md)
    "xdoe.documents._design_spec": ["DesignSpec", "PLAIN_METHODS", "parse_design"],
    "xdoe.documents._experiment": [
        "DESIGN_METHODS", "ExperimentDocument", "PhaseLevels", "experiment_schema", "load_experiment",
    ],
    # what the loaded experiment is (no pydantic model is built to import these)
    "xdoe.documents._experiment_types": ["Experiment", "Variable"],
    # the experiment document's keys that hold lists, sets of names and names (design expansion)
    "xdoe.documents._experiment_models": ["LIST_KEYS", "NAME_KEYS", "SET_KEYS"],
    # the file or folder name a run uid gives (a slug and a short hash unless it is file-safe)
    "xdoe.documents._identifiers": ["safe_uid", "uid_file_name"],
    # where runs are logged besides the store: tensorboard:DIR, mlflow:URI (xdoe.tracking writes them)
    "xdoe.documents._log_targets": ["LOG_KINDS", "LogTarget", "log_targets", "parse_log_target"],
    "xdoe.documents._lineage_specs": ["LoadSpec", "ReplaySpec", "parse_load", "parse_replay"],
    # KEY=VALUE overrides (xrun branch --set; xgen generate/check exp.yaml KEY=VALUE) and their manifest record
    "xdoe.documents._overrides": [
        "Move", "Override", "apply_overrides", "describe_overrides", "dotted", "override_record", "override_specs",
        "overrides_from_record", "parse_override", "parse_value", "resolve_key",
    ],
    "xdoe.documents._placeholders": [
        "PlaceholderError", "find_placeholders", "interpolate", "substitute", "whole_placeholder",
    ],
    # run_config.prune: stop poor runs early (issue 37)
    "xdoe.documents._prune": ["PRUNE_METHODS", "PruneSpec"],
    "xdoe.documents._reference": ["Reference", "ReferenceSyntaxError", "is_reference", "parse_reference"],
    # the run document's models (xrun): one type per key, named by the stage (the experiment's are Experiment*)
    "xdoe.documents._run": [
        "RunAgent", "RunConfig", "RunDesignPoint", "RunDocument", "RunDocumentWarning", "RunEnvironment",
        "RunEnvironmentComponent", "RunPhase", "RunPhaseConfig", "SessionInfo", "load_run_document",
        "parse_run_document",
    ],
    # the base model and checks of every document model (also the session config's)
    "xdoe.documents._validation": ["DocumentModel", "empty_list", "ensure_valid"],
    "xdoe.documents._versions": ["RUN_DOCUMENT_VERSION"],
    "xdoe.documents._yaml": [
        "MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_DOCUMENT_BYTES", "YamlDocument", "load_yaml", "read_bytes", "read_text",
    ],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

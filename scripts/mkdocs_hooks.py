"""MkDocs hooks of the documentation site (``hooks:`` in ``mkdocs.yml``).

``<!-- xgen-schema -->`` on a page becomes the tables of the experiment
document's keys, generated from the JSON Schema ``xgen schema`` prints
(:func:`xdoe.documents.experiment_schema`), so the reference is always the
installed version's.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = "<!-- xgen-schema -->"


def _type(spec: dict[str, Any]) -> str:
    """A short text for a JSON Schema type: ``integer``, ``list of ExperimentPhase``, ``string | null``..."""
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in spec:
        return " | ".join(dict.fromkeys(_type(s) for s in spec["anyOf"]))
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type(spec['items'])}" if "items" in spec else "list"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"mapping name → {_type(spec['additionalProperties'])}"
    if kind == "object":
        return "mapping"
    if "enum" in spec:
        return " | ".join(json.dumps(v) for v in spec["enum"])
    return kind if isinstance(kind, str) else " | ".join(kind)


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("``", "`").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.split())


def _table(model: dict[str, Any]) -> list[str]:
    required = set(model.get("required", ()))
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for key, spec in model.get("properties", {}).items():
        default = "required" if key in required else (
            f"`{json.dumps(spec['default'])}`" if "default" in spec else "")
        lines.append(f"| `{key}` | {_cell(_type(spec))} | {_cell(default)} | {_cell(spec.get('description', ''))} |")
    return lines


def schema_markdown(schema: dict[str, Any]) -> str:
    """The tables of ``schema``: the document's top-level keys, then each definition's."""
    lines = ["### The document", "", *_table(schema)]
    for name, model in schema.get("$defs", {}).items():
        lines += ["", f"### {name}", ""]
        if model.get("description"):
            lines += [_cell(model["description"]), ""]
        lines += _table(model) if model.get("properties") else [f"Type: {_cell(_type(model))}."]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from xdoe.documents import experiment_schema

    return markdown.replace(MARKER, schema_markdown(experiment_schema()))

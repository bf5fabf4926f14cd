"""Experiment and run documents: YAML loading with line numbers, pydantic
models, canonical YAML dumping."""

from xdoe.documents._yaml import YamlDocument, load_yaml, read_text

__all__ = ["YamlDocument", "load_yaml", "read_text"]

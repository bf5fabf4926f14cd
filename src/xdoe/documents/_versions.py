"""Format versions, in a module of their own so that xgen reads them
without building the run-document models."""

from __future__ import annotations

__all__ = ["RUN_DOCUMENT_VERSION"]

#: the format version xgen writes into run documents
RUN_DOCUMENT_VERSION = "1.0"

"""YAML loading with line numbers (ruamel.yaml round-trip loader).

:func:`load_yaml` returns plain Python data (dict, list, str, int, float, bool,
None) together with a way to find the 1-based line of any key path, so that
every validation error can name ``file:line``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from xdoe.errors import DocumentError

__all__ = ["YamlDocument", "load_yaml", "read_text"]


def read_text(path: str | Path) -> str:
    """Read a document file as UTF-8, turning OS errors into :class:`DocumentError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError("file not found", file=str(path)) from None
    except IsADirectoryError:
        raise DocumentError("is a directory, not a document", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"cannot read: {exc}", file=str(path)) from None


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {(_plain(k) if not isinstance(k, str) else k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    # ruamel scalar subclasses (ScalarFloat, ScalarInt, ScalarBoolean, strings)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


@dataclass
class YamlDocument:
    """A loaded YAML document.

    Attributes:
        data: the document as plain Python data.
        file: the file name used in error messages.
        tree: the ruamel round-trip tree, which carries line numbers.
    """

    data: Any
    file: str
    tree: Any = field(repr=False, default=None)

    def line(self, key_path: Sequence[str | int]) -> int | None:
        """1-based line of the deepest node of ``key_path`` that exists.

        For a mapping key the line of the key is returned; for a list item the
        line of the item. ``None`` when not even the first key exists.
        """
        node = self.tree
        best: int | None = 1 if node is not None else None
        if isinstance(node, (CommentedMap, CommentedSeq)) and getattr(node.lc, "line", None) is not None:
            best = node.lc.line + 1  # the root's first line (after comments and directives)
        for key in key_path:
            if isinstance(node, CommentedMap) and key in node:
                try:
                    best = node.lc.key(key)[0] + 1
                except (KeyError, TypeError, AttributeError):
                    pass
                node = node[key]
            elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
                try:
                    best = node.lc.item(key)[0] + 1
                except (KeyError, TypeError, AttributeError):
                    pass
                node = node[key]
            else:
                break
        return best

    def error(self, message: str, key_path: Sequence[str | int] = ()) -> DocumentError:
        """A :class:`DocumentError` located at ``key_path`` in this document."""
        return DocumentError(message, file=self.file, line=self.line(key_path), key_path=key_path)


def load_yaml(source: str | Path, *, text: str | None = None, file: str | None = None) -> YamlDocument:
    """Load one YAML document with line numbers.

    Args:
        source: a path to read, unless ``text`` is given.
        text: the document text (then ``source`` is only used as the file name).
        file: name for error messages (default: ``str(source)``).

    Returns:
        A :class:`YamlDocument`.

    Raises:
        DocumentError: the file cannot be read, or is not valid YAML (with the
            line of the syntax error), or holds several documents.
    """
    name = file or str(source)
    if text is None:
        text = read_text(source)
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(io.StringIO(text)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise DocumentError(f"YAML syntax error: {problem}", file=name, line=line) from None
    except YAMLError as exc:
        raise DocumentError(f"YAML error: {exc}", file=name) from None
    docs = [d for d in docs if d is not None] or [None]
    if len(docs) > 1:
        raise DocumentError(f"expected one YAML document, found {len(docs)}", file=name)
    tree = docs[0]
    return YamlDocument(data=_plain(tree), file=name, tree=tree)

"""YAML loading with line numbers (ruamel.yaml round-trip loader).

:func:`load_yaml` returns plain Python data (dict, list, str, int, float, bool,
None) together with a way to find the 1-based line of any key path, so that
every validation error can name ``file:line``.

Hostile documents are refused before they cost time or memory (one line,
:class:`~xdoe.errors.DocumentError`): a text larger than
:data:`MAX_DOCUMENT_BYTES`, nesting deeper than :data:`MAX_DEPTH`, aliases
that would expand to more than :data:`MAX_ALIAS_NODES` nodes ("billion
laughs"; the limit safe YAML loaders such as go-yaml and SnakeYAML apply) and
recursive aliases. Tags like ``!!python/object`` are never constructed: the
round-trip loader is a safe loader. The limits can be raised with the
environment variables ``XDOE_MAX_DOCUMENT_BYTES``, ``XDOE_MAX_YAML_DEPTH`` and
``XDOE_MAX_ALIAS_NODES``.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from xdoe.errors import DocumentError

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_DOCUMENT_BYTES", "YamlDocument", "load_yaml", "read_text"]


def _limit(variable: str, default: int) -> int:
    try:
        value = int(os.environ.get(variable, default))
    except ValueError:
        return default
    return value if value > 0 else default


#: largest document text (in bytes, as UTF-8) that is parsed at all
MAX_DOCUMENT_BYTES = 1024 * 1024
#: deepest nesting of mappings and sequences
MAX_DEPTH = 100
#: most nodes that aliases may add when expanded (a node: a scalar, mapping or sequence)
MAX_ALIAS_NODES = 100_000


_PYTHON_TAG = "tag:yaml.org,2002:python/"


class _LimitExceeded(MarkedYAMLError):
    """A document exceeds :data:`MAX_DEPTH` or :data:`MAX_ALIAS_NODES`, or
    holds a ``!!python/...`` tag."""


class _LimitedComposer(Composer):
    """ruamel's composer with a nesting limit (before Python's recursion
    limit is reached) and a budget of alias-expanded nodes."""

    max_depth = MAX_DEPTH
    max_alias_nodes = MAX_ALIAS_NODES

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._level = 0
        self._alias_nodes = 0
        self._sizes: dict[int, int] = {}

    def _size(self, node: Any) -> int:
        """Nodes in ``node`` with every alias expanded (memoised)."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, SequenceNode):
            size = 1 + sum(self._size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            size = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
        else:
            size = 1
        self._sizes[id(node)] = size
        return size

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.parser.check_event(AliasEvent):
            event = self.parser.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:
                if isinstance(node, (SequenceNode, MappingNode)) and node.end_mark is None:
                    raise _LimitExceeded(
                        None, None, f"recursive alias *{event.anchor} (it refers to the node that holds it)",
                        event.start_mark,
                    )
                self._alias_nodes += self._size(node)
                if self._alias_nodes > self.max_alias_nodes:
                    raise _LimitExceeded(
                        None, None,
                        f"aliases expand to more than {self.max_alias_nodes} nodes "
                        "(an alias bomb?); refusing the document",
                        event.start_mark,
                    )
            return super().compose_node(parent, index)
        self._level += 1
        try:
            event = self.parser.peek_event()
            tag = str(getattr(event, "tag", None) or "")
            if tag.startswith(_PYTHON_TAG):
                raise _LimitExceeded(
                    None, None, f"tag !!{tag[len('tag:yaml.org,2002:'):]} refused: documents are data, "
                    "xdoe never constructs Python objects from YAML tags",
                    event.start_mark,
                )
            if self._level > self.max_depth:
                raise _LimitExceeded(
                    None, None, f"nested more than {self.max_depth} levels deep; refusing the document",
                    self.parser.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._level -= 1


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
    limit = _limit("XDOE_MAX_DOCUMENT_BYTES", MAX_DOCUMENT_BYTES)
    if len(text) > limit // 4 and len(text.encode("utf-8")) > limit:
        raise DocumentError(
            f"document is larger than {limit} bytes ({len(text.encode('utf-8'))}); refusing to parse it "
            "(set XDOE_MAX_DOCUMENT_BYTES to raise the limit)",
            file=name,
        )
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Composer = type(
        "_Composer",
        (_LimitedComposer,),
        {
            "max_depth": _limit("XDOE_MAX_YAML_DEPTH", MAX_DEPTH),
            "max_alias_nodes": _limit("XDOE_MAX_ALIAS_NODES", MAX_ALIAS_NODES),
        },
    )
    try:
        docs = list(yaml.load_all(io.StringIO(text)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        kind = "YAML" if isinstance(exc, _LimitExceeded) else "YAML syntax error"
        raise DocumentError(f"{kind}: {problem}", file=name, line=line) from None
    except RecursionError:  # a construct nested deeper than Python's stack (the limit above should prevent it)
        raise DocumentError("YAML: nested too deeply; refusing the document", file=name) from None
    except ReaderError as exc:  # a character YAML does not allow (NUL, other control characters)
        line = text.count("\n", 0, exc.position) + 1 if isinstance(exc.position, int) else None
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise DocumentError(f"YAML error: {exc.reason} #x{char:04x}", file=name, line=line) from None
    except YAMLError as exc:
        raise DocumentError("YAML error: " + " ".join(str(exc).split()), file=name) from None
    docs = [d for d in docs if d is not None] or [None]
    if len(docs) > 1:
        raise DocumentError(f"expected one YAML document, found {len(docs)}", file=name)
    tree = docs[0]
    return YamlDocument(data=_plain(tree), file=name, tree=tree)

"""YAML loading with line numbers (ruamel.yaml's pure-Python safe loader, YAML 1.2).

:func:`load_yaml` returns plain Python data (dict, list, str, int, float, bool,
None) together with a way to find the 1-based line of any key path, so that
every validation error can name ``file:line``: the composed node tree, whose
marks hold the lines (the round-trip loader's comment-keeping tree cost ~40 %
more per run document, issue 35; comments are not needed).

Hostile documents are refused before they cost time or memory (one line,
:class:`~xdoe.errors.DocumentError`): a text larger than
:data:`MAX_DOCUMENT_BYTES`, nesting deeper than :data:`MAX_DEPTH`, aliases
that would expand to more than :data:`MAX_ALIAS_NODES` nodes ("billion
laughs"; the limit safe YAML loaders such as go-yaml and SnakeYAML apply),
more than :data:`MAX_NODES` nodes (the pure-Python parser takes seconds for
tens of thousands), integers of more than 100 digits, and recursive aliases.
Tags like ``!!python/object`` are refused, and a tag the safe loader does
not know (``!custom``) is an error at its line. The limits can be raised with the
environment variables ``XDOE_MAX_DOCUMENT_BYTES``, ``XDOE_MAX_YAML_DEPTH``,
``XDOE_MAX_YAML_NODES`` and ``XDOE_MAX_ALIAS_NODES``. Files are read by
:func:`read_bytes`: regular files only (a FIFO or device is refused without
blocking), the size limit checked before and while reading.
"""

from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, ScalarEvent
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from xdoe.errors import DocumentError

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_DOCUMENT_BYTES", "MAX_NODES", "YamlDocument", "load_yaml", "read_bytes", "read_text"]


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
#: most nodes (scalars, mappings, sequences) a document may hold; parsing costs ~0.1 ms a node
MAX_NODES = 20_000
#: most nodes that aliases may add when expanded (a node: a scalar, mapping or sequence)
MAX_ALIAS_NODES = 100_000


_PYTHON_TAG = "tag:yaml.org,2002:python/"
#: a plain scalar that YAML reads as an integer (decimal, 0x, 0o, with _ separators)
_INT_TEXT = re.compile(r"[-+]?(0x[0-9a-fA-F_]+|0o[0-7_]+|[0-9_]+)")
#: plain integers longer than this are refused while composing (Python refuses to
#: convert more than 4300 digits; the store holds 64-bit integers, 19 digits)
_MAX_INT_TEXT = 100


class _LimitExceeded(MarkedYAMLError):
    """A document exceeds :data:`MAX_DEPTH` or :data:`MAX_ALIAS_NODES`, or
    holds a ``!!python/...`` tag."""


class _LimitedComposer(Composer):
    """ruamel's composer with a nesting limit (before Python's recursion
    limit is reached) and a budget of alias-expanded nodes."""

    max_depth = MAX_DEPTH
    max_alias_nodes = MAX_ALIAS_NODES
    max_nodes = MAX_NODES

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._nodes = 0
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

    def compose_document(self) -> Any:
        node = super().compose_document()
        self.roots.append(node)  # the node tree: its marks give every key's line (YamlDocument.line)
        return node

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
        self._nodes += 1
        try:
            event = self.parser.peek_event()
            if self._nodes > self.max_nodes:
                raise _LimitExceeded(
                    None, None, f"more than {self.max_nodes} nodes (values, lists, mappings); refusing the "
                    "document (set XDOE_MAX_YAML_NODES to raise the limit)",
                    event.start_mark,
                )
            tag = str(getattr(event, "tag", None) or "")
            if tag.startswith(_PYTHON_TAG):
                raise _LimitExceeded(
                    None, None, f"tag !!{tag[len('tag:yaml.org,2002:'):]} refused: documents are data, "
                    "xdoe never constructs Python objects from YAML tags",
                    event.start_mark,
                )
            if isinstance(event, ScalarEvent) and event.style is None and len(event.value) > _MAX_INT_TEXT \
                    and _INT_TEXT.fullmatch(event.value):
                raise _LimitExceeded(
                    None, None, f"an integer of {len(event.value)} characters is too large (the store holds "
                    f"64-bit integers, at most {2**63 - 1}); quote it if it is text",
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


def _too_large(size: int | str, limit: int) -> str:
    return (f"document is larger than {limit} bytes ({size}); refusing to read it "
            "(set XDOE_MAX_DOCUMENT_BYTES to raise the limit)")


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a document file, read with the size limit
    (:data:`MAX_DOCUMENT_BYTES`, ``XDOE_MAX_DOCUMENT_BYTES``) checked before
    and while reading, so ``/dev/zero`` or a growing file cost at most the
    limit. Only regular files are read: a FIFO, device or socket is refused
    at once (opened without blocking, so a FIFO without a writer does not hang).

    Raises:
        DocumentError: missing, a directory, not a regular file, larger than
            the limit, or unreadable (one line, the file named).
    """
    name = str(path)
    limit = _limit("XDOE_MAX_DOCUMENT_BYTES", MAX_DOCUMENT_BYTES)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise DocumentError("file not found", file=name) from None
    except IsADirectoryError:
        raise DocumentError("is a directory, not a document", file=name) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DocumentError(f"cannot read: {exc}", file=name) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise DocumentError("is a directory, not a document", file=name)
        if not stat.S_ISREG(info.st_mode):
            kind = next((text for test, text in _KINDS if test(info.st_mode)), "not a regular file")
            raise DocumentError(f"is {kind}, not a regular file; refusing to read it", file=name)
        if info.st_size > limit:
            raise DocumentError(_too_large(info.st_size, limit), file=name)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise DocumentError(_too_large(f"more than {limit}", limit), file=name)
        return b"".join(chunks)
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc}", file=name) from None
    finally:
        os.close(fd)


def read_text(path: str | Path) -> str:
    """A document file as UTF-8 text (universal newlines), read by
    :func:`read_bytes` (size limit, regular files only).

    Raises:
        DocumentError: as :func:`read_bytes`, or the bytes are not UTF-8.
    """
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"cannot read: {exc}", file=str(path)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {(_plain(k) if not isinstance(k, str) else k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    # a copy of plain data (an alias is one object in the loaded data: its uses stay independent)
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
        tree: the composed ruamel node tree (``None`` for an empty
            document), whose marks carry the line numbers.
        overridden: ``(dotted path, "KEY=VALUE")`` of each place a
            command-line override set (``xgen generate exp.yaml KEY=VALUE``):
            an error at or below one says that its value came from there, as
            the file's line shows the value as written.
    """

    data: Any
    file: str
    tree: Any = field(repr=False, default=None)
    overridden: tuple[tuple[str, str], ...] = field(repr=False, default=())

    def line(self, key_path: Sequence[str | int]) -> int | None:
        """1-based line of the deepest node of ``key_path`` that exists.

        For a mapping key the line of the key is returned; for a list item the
        line of the item. ``None`` when not even the first key exists.
        """
        node = self.tree
        if node is None:
            return None
        best = node.start_mark.line + 1  # the root's first line (after comments and directives)
        for key in key_path:
            if isinstance(node, MappingNode):
                # the last of equal keys wins, as in the data (merged keys come first)
                pair = next((pair for pair in reversed(node.value) if isinstance(pair[0], ScalarNode)
                             and pair[0].value == str(key) and pair[0].tag != "tag:yaml.org,2002:merge"), None)
                if pair is None:
                    break
                best, node = pair[0].start_mark.line + 1, pair[1]
            elif isinstance(node, SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
                node = node.value[key]
                best = node.start_mark.line + 1
            else:
                break
        return best

    def error(self, message: str, key_path: Sequence[str | int] = ()) -> DocumentError:
        """A :class:`DocumentError` located at ``key_path`` in this document
        (naming the command-line override whose value it is, if any)."""
        if self.overridden and key_path:
            where = ".".join(str(k) for k in key_path)
            spec = next((spec for path, spec in reversed(self.overridden)
                         if where == path or where.startswith(path + ".")), None)
            if spec is not None:
                message = f"{message} (the value from the command line: {spec})"
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
        raise DocumentError(_too_large(len(text.encode("utf-8")), limit), file=name)
    yaml = YAML(typ="safe", pure=True)
    yaml.allow_duplicate_keys = False
    roots: list[Any] = []
    yaml.Composer = type(
        "_Composer",
        (_LimitedComposer,),
        {
            "max_depth": _limit("XDOE_MAX_YAML_DEPTH", MAX_DEPTH),
            "max_alias_nodes": _limit("XDOE_MAX_ALIAS_NODES", MAX_ALIAS_NODES),
            "max_nodes": _limit("XDOE_MAX_YAML_NODES", MAX_NODES),
            "roots": roots,
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
    found = [(d, node) for d, node in zip(docs, roots) if d is not None] or [(None, None)]
    if len(found) > 1:
        raise DocumentError(f"expected one YAML document, found {len(found)}", file=name)
    data, tree = found[0]
    return YamlDocument(data=_plain(data), file=name, tree=tree)

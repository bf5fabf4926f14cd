"""The ``$req(...)`` reference grammar of arsenAI schedules.

A reference in a schedule level takes a choice made in an earlier phase
instead of naming a definition key::

    reference := "$req" "(" [argument ("," argument)*] ")"
    argument  := "$prev" | "phase" "=" target | "index" "=" INTEGER
    target    := INTEGER | NAME          (a phase index or an earlier phase's name)

``$req($prev)`` takes the previous phase's choice; ``$req(phase=P, index=I)``
takes item ``I`` of the choice made in phase ``P``. Blanks between tokens are
ignored. arsenAI accepts a reference whose closing parenthesis is missing
(documents in the wild have one); :func:`parse_reference` accepts it too and
marks the result ``unclosed`` so that the caller can warn. Everything else
that is malformed raises :class:`ReferenceSyntaxError`.

The parser is a small tokeniser plus a recursive-descent reader; no regular
expression slicing of the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdoe.errors import ReferenceSyntaxError

__all__ = ["Reference", "ReferenceSyntaxError", "is_reference", "parse_reference"]

_KEYWORD = "$req"


@dataclass(frozen=True)
class Reference:
    """A parsed ``$req(...)`` reference.

    Attributes:
        phase: the target phase: an index (``int``), a phase name (``str``) or
            ``None`` for ``$prev`` (the phase before the one holding the reference).
        index: the item to take from the target's choice, or ``None`` for the
            whole choice.
        text: the reference as written.
        unclosed: the closing parenthesis was missing (accepted, like arsenAI does).
    """

    phase: int | str | None
    index: int | None
    text: str
    unclosed: bool = False

    def target_index(self, current: int, phase_names: list[str]) -> int:
        """The index of the target phase seen from phase ``current``.

        Raises:
            ValueError: the target is not an earlier phase (message says why).
        """
        if self.phase is None:
            if current == 0:
                raise ValueError(f"{self.text}: the first phase has no previous phase")
            return current - 1
        if isinstance(self.phase, str):
            earlier = phase_names[:current]
            if self.phase not in earlier:
                known = ", ".join(earlier) or "none"
                raise ValueError(
                    f"{self.text}: phase {self.phase!r} is not an earlier phase (earlier phases: {known})"
                )
            return earlier.index(self.phase)
        if self.phase >= current:
            raise ValueError(
                f"{self.text}: phase index {self.phase} out of range: a reference in phase {current} "
                f"can only name an earlier phase (0..{current - 1})"
                if current > 0
                else f"{self.text}: phase index {self.phase} out of range: the first phase cannot refer to another phase"
            )
        return self.phase


def is_reference(value: object) -> bool:
    """Whether ``value`` is a string written as a ``$req`` reference."""
    return isinstance(value, str) and value.lstrip().startswith(_KEYWORD)


# --------------------------------------------------------------------------- tokens

_PUNCT = {"(": "LPAREN", ")": "RPAREN", ",": "COMMA", "=": "EQUALS"}


@dataclass(frozen=True)
class _Token:
    kind: str  # KEYWORD VARIABLE NAME INTEGER LPAREN RPAREN COMMA EQUALS END
    text: str
    column: int


def _tokenise(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _PUNCT:
            tokens.append(_Token(_PUNCT[ch], ch, i))
            i += 1
        elif ch == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if word == "$":
                raise ReferenceSyntaxError("'$' must start $req or $prev", text, i)
            tokens.append(_Token("KEYWORD" if word == _KEYWORD else "VARIABLE", word, i))
            i = j
        elif ch.isdigit() or (ch in "+-" and i + 1 < n and text[i + 1].isdigit()):
            j = i + 1
            while j < n and text[j].isdigit():
                j += 1
            tokens.append(_Token("INTEGER", text[i:j], i))
            i = j
        elif ch.isalpha() or ch == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_-."):
                j += 1
            tokens.append(_Token("NAME", text[i:j], i))
            i = j
        else:
            raise ReferenceSyntaxError(f"unexpected character {ch!r}", text, i)
    tokens.append(_Token("END", "", n))
    return tokens


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenise(text)
        self.pos = 0

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self, kind: str, what: str) -> _Token:
        tok = self.peek()
        if tok.kind != kind:
            found = "the end" if tok.kind == "END" else repr(tok.text)
            raise ReferenceSyntaxError(f"expected {what}, found {found}", self.text, tok.column)
        self.pos += 1
        return tok

    def parse(self) -> Reference:
        self.take("KEYWORD", "'$req'")
        self.take("LPAREN", "'(' after $req")
        args: dict[str, tuple[object, _Token]] = {}
        unclosed = False
        if self.peek().kind == "RPAREN":
            self.pos += 1
        else:
            while True:
                name, value, tok = self.argument()
                if name in args or (name == "phase" and "prev" in args) or (name == "prev" and "phase" in args):
                    what = "the target phase" if name in ("phase", "prev") else f"{name!r}"
                    raise ReferenceSyntaxError(f"{what} given twice", self.text, tok.column)
                args[name] = (value, tok)
                nxt = self.peek()
                if nxt.kind == "COMMA":
                    self.pos += 1
                    continue
                if nxt.kind == "RPAREN":
                    self.pos += 1
                    break
                if nxt.kind == "END":
                    unclosed = True
                    break
                raise ReferenceSyntaxError(f"expected ',' or ')', found {nxt.text!r}", self.text, nxt.column)
        end = self.peek()
        if end.kind != "END":
            raise ReferenceSyntaxError(f"unexpected {end.text!r} after the reference", self.text, end.column)
        if "prev" not in args and "phase" not in args:
            raise ReferenceSyntaxError("a reference needs $prev or phase=P", self.text, len(self.text))
        phase = None if "prev" in args else args["phase"][0]
        index = args["index"][0] if "index" in args else None
        return Reference(phase=phase, index=index, text=self.text.strip(), unclosed=unclosed)  # type: ignore[arg-type]

    def argument(self) -> tuple[str, object, _Token]:
        tok = self.peek()
        if tok.kind == "VARIABLE":
            self.pos += 1
            if tok.text != "$prev":
                raise ReferenceSyntaxError(f"unknown variable {tok.text!r} (only $prev)", self.text, tok.column)
            return "prev", None, tok
        if tok.kind != "NAME":
            found = "the end" if tok.kind == "END" else repr(tok.text)
            raise ReferenceSyntaxError(f"expected an argument ($prev, phase= or index=), found {found}", self.text, tok.column)
        self.pos += 1
        if tok.text not in ("phase", "index"):
            raise ReferenceSyntaxError(
                f"unknown argument {tok.text!r} (expected $prev, phase= or index=)", self.text, tok.column
            )
        self.take("EQUALS", f"'=' after {tok.text}")
        val = self.peek()
        if val.kind == "INTEGER":
            self.pos += 1
            number = int(val.text)
            if number < 0:
                raise ReferenceSyntaxError(f"{tok.text} must be >= 0, got {number}", self.text, val.column)
            return tok.text, number, tok
        if val.kind == "NAME" and tok.text == "phase":
            self.pos += 1
            return "phase", val.text, tok
        expected = "a phase index or name" if tok.text == "phase" else "a non-negative integer"
        found = "the end" if val.kind == "END" else repr(val.text)
        raise ReferenceSyntaxError(f"expected {expected} after {tok.text}=, found {found}", self.text, val.column)


def parse_reference(text: str) -> Reference:
    """Parse one ``$req(...)`` reference.

    Args:
        text: the whole string, e.g. ``"$req(phase=0, index=1)"``.

    Returns:
        The :class:`Reference`; ``unclosed`` is set when the closing
        parenthesis is missing (accepted for arsenAI compatibility).

    Raises:
        ReferenceSyntaxError: anything else that does not follow the grammar
            (unknown argument, repeated argument, negative or missing number,
            text after the closing parenthesis...).
    """
    return _Parser(text).parse()

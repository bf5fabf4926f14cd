"""The text :mod:`csv` writes, for the ``all_transactions.csv`` lines of the
every-step hot path.

``csv.writer`` (default dialect ``excel``: delimiter ``,``, quote character
``"`` doubled inside quotes, ``QUOTE_MINIMAL``, line terminator ``\\r\\n``)
scans every character of every field of every row; for a stored step that
is ~3 µs, more than the SQLite insert of the same row. The value-step writer
(:meth:`~xdoe.store.RunRecorder.value_row_writer`) instead joins each row's
line from pieces ``csv`` has written once (:func:`csv_fields`) and the numbers
of the step: an exact ``int`` or float is written by ``csv`` as ``str()`` of
it, which contains none of the characters that make ``csv`` quote, so the
joined line is the one ``csv.writer`` would write, byte for byte
(``tests/store/test_csv_text.py`` compares them).
"""

from __future__ import annotations

import csv
import io
from typing import Iterable

__all__ = ["csv_fields", "quoted_cell_prefix"]

#: what csv.writer ends every row with (the excel dialect's line terminator)
LINE_END = "\r\n"


def csv_fields(values: Iterable[object]) -> str:
    """The text ``csv.writer`` writes for a row of ``values``, without the
    line terminator."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(values)
    text = buffer.getvalue()
    assert text.endswith(LINE_END)
    return text[:-len(LINE_END)]


def quoted_cell_prefix(prefix: str) -> str | None:
    """The text ``csv`` writes for a field ``prefix + number + "}"`` (a JSON
    cell ``{"<id>":<number>}``) up to the number: ``prefix`` in quotes, its
    quotes doubled. The field ends with ``}"`` after the number. ``None``
    when ``csv`` would not write it that way (then the caller lets ``csv``
    write the row)."""
    text = csv_fields([prefix + "0}"])
    if not (text.startswith('"') and text.endswith('0}"')):
        return None
    return text[:-len('0}"')]

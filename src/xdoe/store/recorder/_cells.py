"""The cells and rows :class:`~xdoe.store.RunRecorder` writes: JSON cells
of step and episode rows (encoded once, kept where values repeat), the
column order of its buffered rows, and the insert helpers of its
transactions."""

from __future__ import annotations

import functools
import json
from itertools import chain
from typing import Any, Callable, Iterator

from sqlalchemy import Boolean, Connection, Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from xdoe.store._json import compact_json
from xdoe.store.schema._tables import JsonText, _Encoded

__all__ = ["insert_rows", "insert_sql_cache", "positional_inserts", "update_row"]


#: Columns of a buffered step row, in the order of its tuple.
_STEP_COLUMNS = ("phase_id", "worker", "episode", "step", "agent", "sensors", "actions", "rewards",
                 "objective", "done", "terminated", "truncated", "cut_by")
#: Columns of a buffered episode row, in the order of its tuple.
_EPISODE_COLUMNS = ("phase_id", "worker", "episode", "agent", "steps", "reward", "objective",
                    "wall_time", "extras", "terminated", "truncated", "cut_by")


def _json_cell(value: Any) -> str | None:
    """``value`` as compact JSON text (:func:`compact_json`'s text), a plain
    ``str``: SQLite's driver binds an exact ``str`` without its adaptation
    look-ups (a ``str`` subclass costs ~1-3 µs more per cell); the Core insert
    marks JSON cells as :class:`_Encoded` itself (:func:`insert_rows`).

    A one-key dict with a ``str`` key (a step's sensor, action or reward,
    e.g. ``{"taxi.observation": 29}``) is :func:`_keyed_cell`'s text."""
    if type(value) is dict and len(value) == 1:
        for key, item in value.items():
            if type(key) is str:
                return _keyed_cell(_PREFIXES.get(key) or _cell_prefix(key), key, item)
    elif value is None:
        return None
    return compact_json(value)


def _keyed_cell(prefix: str, key: str, value: Any) -> str:
    """The compact JSON text of ``{key: value}`` (``prefix``: ``'{"<key>":'``,
    :func:`_cell_prefix`): an int or a finite float is written directly, the
    prefix and the number's text (an exact int's ``str`` and a float's
    ``repr`` are json's own text), anything else by the encoder."""
    kind = type(value)
    if kind is int:
        return f"{prefix}{value}}}"
    if kind is float and value - value == 0.0:
        return f"{prefix}{value!r}}}"
    return f"{prefix}{compact_json(value)}}}"  # the one key's value after its prefix: the dict's text


#: ``'{"<key>":'`` of the keys :func:`_json_cell` has seen (sensor, actuator
#: and reward ids: a few per run), at most ``_MAX_PREFIXES`` of them
_PREFIXES: dict[str, str] = {}
_MAX_PREFIXES = 4096
_encode_string = json.encoder.encode_basestring  # ensure_ascii=False
#: the texts a :func:`_key_cells` function keeps per number type
_MAX_KEPT = 4096


def _cell_prefix(key: str) -> str:
    """``'{"<key>":'``, the start of a one-key JSON cell (remembered, see :data:`_PREFIXES`)."""
    prefix = _PREFIXES.get(key)
    if prefix is None:
        if len(_PREFIXES) >= _MAX_PREFIXES:  # a long-lived process seeing many ids: start over
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = "{" + _encode_string(key) + ":"
    return prefix


def _key_cells(key: str) -> Callable[[Any], str]:
    """``cell(value)``: :func:`_keyed_cell`'s text of ``{key: value}``, kept
    for exact ints and non-zero floats (a step's values repeat: Taxi has 500
    observations, 6 actions, 3 rewards), at most :data:`_MAX_KEPT` of each.
    Equal ints have one text, and so have equal non-zero floats; ``0.0`` and
    ``-0.0`` are equal with two texts, so zero is never kept. A kept text is
    the one :func:`_keyed_cell` wrote for an equal value: the same text."""
    prefix = _cell_prefix(key)
    ints: dict[int, str] = {}
    floats: dict[float, str] = {}

    def cell(value: Any) -> str:
        kind = type(value)
        if kind is int:
            kept = ints
        elif kind is float and value:
            kept = floats
        else:
            return _keyed_cell(prefix, key, value)
        text = kept.get(value)
        if text is None:
            if len(kept) >= _MAX_KEPT:
                kept.clear()
            text = kept[value] = _keyed_cell(prefix, key, value)
        return text

    return cell


def _dict_cells() -> Callable[[Any], str | None]:
    """``cell(value)``: :func:`_json_cell`'s text of ``value``, a one-key
    dict's by the :func:`_key_cells` function of its key (made on first use,
    for at most :data:`_MAX_PREFIXES` keys)."""
    by_key: dict[str, Callable[[Any], str]] = {}

    def cell(value: Any) -> str | None:
        if type(value) is dict and len(value) == 1:
            for key in value:
                write = by_key.get(key)
                if write is None:
                    if type(key) is not str or len(by_key) >= _MAX_PREFIXES:
                        break
                    write = by_key[key] = _key_cells(key)
                return write(value[key])
        return _json_cell(value)

    return cell


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _insert_id(conn: Connection, table: Table, values: dict[str, Any]) -> int:
    """Insert one row into ``table``; its new id.

    The values go as the execution's parameters of ``insert(table)``, whose
    compiled form SQLAlchemy caches per table and column set: a statement
    built with ``.values(...)`` holds them as its own bind parameters, and
    its cache key costs ~5k bytecodes per row (a run inserts three or four)."""
    key = conn.execute(insert(table), values).inserted_primary_key
    assert key is not None
    return int(key[0])


def _get_or_create(conn: Connection, table: Table, lookup: dict[str, Any],
                   values: dict[str, Any]) -> tuple[int, bool]:
    """Id of the row of ``table`` matching ``lookup`` (a unique key), inserted
    with ``values`` when missing, and whether this call inserted it (``False``
    for a row found, or inserted meanwhile by another process: safe against a
    concurrent insert of the same key)."""
    stmt = _lookup_statement(table, tuple(lookup))
    found = conn.execute(stmt, lookup).scalar_one_or_none()
    if found is not None:
        return int(found), False
    try:
        with conn.begin_nested():
            return _insert_id(conn, table, {**lookup, **values}), True
    except IntegrityError:  # another process inserted it meanwhile
        return int(conn.execute(stmt, lookup).scalar_one()), False


@functools.lru_cache(maxsize=None)
def _lookup_statement(table: Table, keys: tuple[str, ...]) -> Any:
    """``SELECT id FROM table WHERE key = :key AND ...`` for the columns
    ``keys`` (a unique key of ``NOT NULL`` columns: ``=`` is ``filter_by``'s
    test for every value they hold), built once; the values go as the
    execution's parameters, as :func:`_insert_id`'s."""
    return select(table.c.id).where(*[table.c[key] == bindparam(key) for key in keys])


def update_row(conn: Connection, table: Table, row_id: int, values: dict[str, Any]) -> None:
    """Set ``values`` (column -> value) in the row ``row_id`` of ``table``:
    as :func:`_insert_id`, a statement built once per table, the values its
    execution's parameters (the ``SET`` clause names the columns they set)."""
    conn.execute(_by_id(table), {**values, "_row_id": row_id})


@functools.lru_cache(maxsize=None)
def _by_id(table: Table) -> Any:
    """``UPDATE table SET ... WHERE id = :_row_id`` (``SET`` from the execution's parameters)."""
    return update(table).where(table.c.id == bindparam("_row_id"))


#: the most rows one ``INSERT`` writes (:func:`positional_inserts`): 64 step rows bind 832
#: parameters, under the 999 SQLite allows before version 3.32
_MAX_ROWS_PER_INSERT = 64
#: ``(one-row INSERT, rows) -> the INSERT of that many rows`` (:func:`positional_inserts`)
_MANY_ROWS_SQL: dict[tuple[str, int], str] = {}


def positional_inserts(sql: str, rows: list[tuple[Any, ...]]) -> Iterator[tuple[str, list[Any]]]:
    """``rows`` (tuples in the order of the positional one-row ``INSERT ...
    VALUES (?, ...)`` ``sql``) as a few statements: ``(statement,
    parameters)``, each statement an ``INSERT`` of 64, 32, ..., 2 or 1 rows
    (``VALUES (?, ...), (?, ...)``), its parameters the rows' values one
    after another. The rows keep their order (and so their ids).

    One statement of many rows costs SQLite's driver one bind per value, as
    ``executemany`` does, but one ``step`` instead of one per row, each of
    which resets the statement and releases the GIL: ~6k instructions less
    per step row. The sizes are powers of two, so a connection prepares at
    most seven statements per table, whatever the episodes' lengths."""
    i, n = 0, len(rows)
    while i < n:
        k = 1 << (min(n - i, _MAX_ROWS_PER_INSERT).bit_length() - 1)  # the largest power of two that fits
        many = _MANY_ROWS_SQL.get((sql, k))
        if many is None:
            head, values = sql.split(" VALUES ", 1)
            many = _MANY_ROWS_SQL[(sql, k)] = f"{head} VALUES {', '.join([values] * k)}"
        yield many, list(chain.from_iterable(rows[i:i + k])) if k > 1 else list(rows[i])
        i += k


#: per SQL dialect (its class and parameter style): :func:`insert_rows`' ``sql_cache``
_INSERT_SQL: dict[tuple[type, str], dict[str, str]] = {}


def insert_sql_cache(dialect: Any) -> dict[str, str]:
    """The ``sql_cache`` of :func:`insert_rows` for stores of ``dialect``'s
    kind, shared by the recorders of a process: a campaign's runs compile
    each table's INSERT once (~10k bytecodes), not once per run."""
    return _INSERT_SQL.setdefault((type(dialect), dialect.paramstyle), {})


def insert_rows(connection: Connection, table: Any, columns: tuple[str, ...], rows: list[tuple[Any, ...]],
            sql_cache: dict[str, str]) -> None:
    """Insert buffered rows (tuples in ``columns`` order) into ``table``;
    ``sql_cache``: table name -> its compiled positional one-row ``INSERT``
    ("" where the Core path is taken), filled on first use.

    With a positional DBAPI parameter style (SQLite's ``?``) the values go
    straight to the driver, in :func:`positional_inserts`' statements of
    many rows each: SQLAlchemy's per-row parameter processing costs more
    than SQLite's own insert, and for these values (ints, floats, strings,
    ``None``, JSON already encoded as text, booleans buffered as the 0/1
    SQLAlchemy binds for SQLite's non-native ``BOOLEAN``) the bind processing
    of every column type is the identity. Other drivers (PostgreSQL's named
    parameters) get a Core insert of dicts (an ``executemany``, which
    SQLAlchemy sends as multi-row statements itself).
    """
    sql = sql_cache.get(table.name)
    if sql is None:
        compiled = insert(table).compile(dialect=connection.dialect, column_keys=list(columns))
        ok = compiled.positional and tuple(compiled.positiontup or ()) == columns and " VALUES " in compiled.string
        sql = sql_cache[table.name] = compiled.string if ok else ""
    if sql:
        for statement, values in positional_inserts(sql, rows):
            connection.exec_driver_sql(statement, tuple(values))
    else:  # JSON cells are buffered as text (marked, so that JsonText does not encode
        # them again), booleans as 0/1 (SQLite's driver binds an int without adapting it)
        types = [table.c[name].type for name in columns]
        json_cells = [i for i, kind in enumerate(types) if isinstance(kind, JsonText)]
        flags = [i for i, kind in enumerate(types) if isinstance(kind, Boolean)]
        dicts = []
        for row in rows:
            values = dict(zip(columns, row))
            for i in json_cells:
                if row[i] is not None:
                    values[columns[i]] = _Encoded(row[i])
            for i in flags:
                values[columns[i]] = None if row[i] is None else bool(row[i])
            dicts.append(values)
        connection.execute(insert(table), dicts)


def _flag(value: bool | None) -> int | None:
    """A boolean cell as buffered (0/1, see :func:`insert_rows`); ``None`` stays ``None``."""
    return None if value is None else (1 if value else 0)

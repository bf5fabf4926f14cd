"""The row buffer of :class:`~xdoe.store.RunRecorder`: episode and step rows
kept as tuples and bulk-inserted, and the helpers of its writes."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Boolean, Connection, insert, update

from xdoe.errors import StoreError
from xdoe.store._json import json_default
from xdoe.store import _tables as t
from xdoe.store._tables import JsonText, _Encoded, utcnow
from xdoe.store._recorder_state import RecorderState

__all__ = ["RowBuffer"]

#: ``compact_json`` with its encoder built once: ``json.dumps`` with options
#: builds a new encoder on every call. Same options, so the same text.
_encode_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                   default=json_default).encode


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
    marks JSON cells as :class:`_Encoded` itself (:meth:`RowBuffer._insert_rows`).

    A one-key dict of an int or a finite float (a step's sensor, action or
    reward, e.g. ``{"taxi.observation": 29}``) is written directly: the key's
    remembered ``{"<key>":`` and the number's repr, json's own text."""
    if type(value) is dict and len(value) == 1:
        for key, item in value.items():
            kind = type(item)
            if type(key) is str and (kind is int or (kind is float and item - item == 0.0)):
                prefix = _PREFIXES.get(key)
                if prefix is None:
                    prefix = _cell_prefix(key)
                return prefix + (int.__repr__(item) if kind is int else float.__repr__(item)) + "}"
    elif value is None:
        return None
    return _encode_compact(value)


#: ``'{"<key>":'`` of the keys :func:`_json_cell` has seen (sensor, actuator
#: and reward ids: a few per run), at most ``_MAX_PREFIXES`` of them
_PREFIXES: dict[str, str] = {}
_MAX_PREFIXES = 4096
_encode_string = json.encoder.encode_basestring  # ensure_ascii=False


def _cell_prefix(key: str) -> str:
    """``'{"<key>":'``, the start of a one-key JSON cell (remembered, see :data:`_PREFIXES`)."""
    prefix = _PREFIXES.get(key)
    if prefix is None:
        if len(_PREFIXES) >= _MAX_PREFIXES:  # a long-lived process seeing many ids: start over
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = "{" + _encode_string(key) + ":"
    return prefix


class RowBuffer(RecorderState):
    """Buffering and writing episode/step rows (a mixin of :class:`~xdoe.store.RunRecorder`)."""

    def _append_step(self, phase_id: int, worker: int, episode: int, step: int, agent: str,
                     sensors: str | None, actions: str | None, rewards: str | None,
                     objective: float | None, done: bool, terminated: bool = False,
                     truncated: bool = False, cut_by: str | None = None) -> None:
        """Buffer a step row (the JSON cells encoded); its
        ``all_transactions.csv`` line is written with the buffer
        (:meth:`_write_buffers`). The caller holds the lock."""
        if type(worker) is not int:
            worker = int(worker)
        if type(episode) is not int:
            episode = int(episode)
        if type(agent) is not str:
            agent = str(agent)
        if objective is not None and type(objective) is not float:
            objective = float(objective)
        # a tuple, not a dict: the hot path of store_steps="all" (see _insert_rows)
        steps = self._steps
        steps.append((phase_id, worker, episode, step, agent, sensors, actions, rewards, objective,
                      1 if done else 0, 1 if terminated else 0, 1 if truncated else 0,
                      None if cut_by is None else str(cut_by)))
        self.stored_steps += 1
        n = len(self._episodes) + len(steps)  # _buffered_row, inlined: once per stored step
        if n > self.peak_buffered:
            self.peak_buffered = n
        if n >= self.flush_rows:
            self.flush()

    def _require_running(self) -> None:
        if self.instance_id is None:
            raise StoreError(f"run {self.run_uid}: recorder used before start()")
        if self.status is not None:
            raise StoreError(f"run {self.run_uid}: recorder used after finish()")

    def _require_phase(self) -> int:
        if self._phase_id is not None and self.status is None:  # the usual case, checked cheaply
            return self._phase_id
        self._require_running()
        if self._phase_id is None:
            raise StoreError(f"run {self.run_uid}: no phase is open (call phase_started first)")
        return self._phase_id

    def _buffered_row(self) -> None:
        n = len(self._episodes) + len(self._steps)  # self.buffered, without a property call per row
        if n > self.peak_buffered:
            self.peak_buffered = n
        if n >= self.flush_rows:
            self.flush()

    def _write_buffers(self, connection: Connection) -> None:
        # the results files first: they then hold at least the rows the store
        # keeps (a resumed instance filters them down to those, see filter_results)
        assert self._files is not None
        if self._steps:
            self._files.steps(self._steps)
        self._files.flush()
        if self._episodes:
            self._insert_rows(connection, t.episode, _EPISODE_COLUMNS, self._episodes)
        if self._steps:
            self._insert_rows(connection, t.step, _STEP_COLUMNS, self._steps)

    def _insert_rows(self, connection: Connection, table: Any, columns: tuple[str, ...],
                     rows: list[tuple[Any, ...]]) -> None:
        """Insert buffered rows (tuples in ``columns`` order) into ``table``,
        one ``executemany``.

        With a positional DBAPI parameter style (SQLite's ``?``) the tuples go
        straight to the driver's ``executemany``: SQLAlchemy's per-row
        parameter processing costs more than SQLite's own insert, and for these
        values (ints, floats, strings, ``None``, JSON already encoded as text,
        booleans buffered as the 0/1 SQLAlchemy binds for SQLite's non-native
        ``BOOLEAN``) the bind processing of every column type is the identity. Other
        drivers (PostgreSQL's named parameters) get a Core insert of dicts.
        """
        sql = self._insert_sql.get(table.name)
        if sql is None:
            compiled = insert(table).compile(dialect=connection.dialect, column_keys=list(columns))
            ok = compiled.positional and tuple(compiled.positiontup or ()) == columns
            sql = self._insert_sql[table.name] = compiled.string if ok else ""
        if sql:
            connection.exec_driver_sql(sql, rows)
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

    def _commit_raw(self) -> bool:
        """:meth:`flush`'s SQLite path; ``False`` where it does not apply
        (another backend, a statement not compiled yet: the Core path then)."""
        if self.store.engine.dialect.name != "sqlite":
            return False
        episode_sql, step_sql = self._insert_sql.get("episode"), self._insert_sql.get("step")
        if (self._episodes and not episode_sql) or (self._steps and not step_sql):
            return False
        import sqlite3

        from xdoe.store._engine import store_error

        assert self._files is not None
        if self._steps:  # the results files first, as _write_buffers
            self._files.steps(self._steps)
        self._files.flush()
        try:
            if self._raw is None:
                self._raw = self.store.engine.raw_connection()
            con = self._raw.driver_connection
            con.execute("BEGIN IMMEDIATE")
            try:
                if self._episodes:
                    con.executemany(episode_sql, self._episodes)
                if self._steps:
                    con.executemany(step_sql, self._steps)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise store_error(self.store._url, "write episodes to", exc) from None
        return True

    def _release_raw(self) -> None:
        if self._raw is not None:
            raw, self._raw = self._raw, None
            try:
                raw.close()  # back to the pool
            except Exception:  # noqa: BLE001 - a broken connection is dropped by the pool
                pass

    def _clear_buffers(self) -> None:
        self._episodes = []
        self._steps = []

    def _write_phase_end(self, connection: Connection, status: str) -> None:
        self._write_buffers(connection)
        connection.execute(update(t.phase).where(t.phase.c.id == self._phase_id)
                           .values(status=status, end=utcnow()))

    def _close_phase(self, status: str) -> None:
        with self.store._core_write("record the end of a phase in") as connection:
            self._write_phase_end(connection, status)
        self._clear_buffers()
        self._phase_closed(status)

    def _phase_closed(self, status: str) -> None:
        self._phase_id = None
        self._phases[-1].update(status=status, end=utcnow().isoformat())
        assert self._files is not None
        self._files.phase_finished()

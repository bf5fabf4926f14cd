"""The row buffer of :class:`~xdoe.store.RunRecorder`: episode and step rows
kept as tuples and bulk-inserted, and the helpers of its writes."""

from __future__ import annotations

import json
from typing import Any, Callable

from sqlalchemy import Boolean, Connection, insert, update

from xdoe.errors import StoreError
from xdoe.store._json import json_default
from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import JsonText, _Encoded, utcnow
from xdoe.store.recorder._recorder_state import RecorderState

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

    A one-key dict with a ``str`` key (a step's sensor, action or reward,
    e.g. ``{"taxi.observation": 29}``) is :func:`_keyed_cell`'s text."""
    if type(value) is dict and len(value) == 1:
        for key, item in value.items():
            if type(key) is str:
                return _keyed_cell(_PREFIXES.get(key) or _cell_prefix(key), key, item)
    elif value is None:
        return None
    return _encode_compact(value)


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
    return _encode_compact({key: value})


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


class RowBuffer(RecorderState):
    """Buffering and writing episode/step rows (a mixin of :class:`~xdoe.store.RunRecorder`)."""

    def step_writer(self, worker: int, agent: str, sensor_id: str | None = None,
                    actuator_id: str | None = None) -> Callable[..., None] | None:
        """The writer of the step rows of ``agent`` in worker ``worker``:
        ``write(episode, step, sensors, actions, rewards, objective, done,
        terminated=False, truncated=False, cut_by=None)`` stores the step when
        ``store_steps`` asks for it (:class:`StepPolicy`) and does nothing
        otherwise; ``None`` with ``store_steps="none"``.

        ``sensors`` is the value of sensor ``sensor_id`` (its cell
        ``{sensor_id: value}``) or, without ``sensor_id``, the dict ``uid ->
        value`` (its cell is the dict); ``actions`` the same with
        ``actuator_id``; ``rewards`` the dict ``uid -> value``. What is the
        same for every row is worked out once: the worker and agent cells,
        the cells' ``{"<id>":`` starts, the policy. One writer is made per
        ``(worker, agent, sensor_id, actuator_id)`` and kept: the executor
        takes its agents' writers at the phase start, :meth:`step` writes
        through the dict-form writer of ``(worker, agent)``, so every stored
        step is one function's row.

        ``write`` raises :class:`StoreError` when no phase is open, or a
        flush to the store failed; ``TypeError``/``ValueError`` for a
        ``worker``, ``episode``, ``step`` or ``objective`` that is no number
        (``worker`` here, at once).
        """
        key = (worker, agent, sensor_id, actuator_id)
        made = self._writers.get(key)
        if made is not None or self.policy.every == 0:
            return made
        every, wants = self.policy.every, self.policy.wants
        worker_cell, agent_cell = int(worker), str(agent)
        sensor_cell = _dict_cells() if sensor_id is None else _key_cells(sensor_id)
        action_cell = _dict_cells() if actuator_id is None else _key_cells(actuator_id)
        reward_cell = _dict_cells()
        acquire, release = self._lock.acquire, self._lock.release

        def write(episode: int, step: int, sensors: Any, actions: Any, rewards: Any, objective: float | None,
                  done: bool, terminated: bool = False, truncated: bool = False, cut_by: str | None = None) -> None:
            if type(step) is not int:
                step = int(step)
            if every != 1 and not wants(step, done):  # "all" (every 1) wants every step
                return
            acquire()
            try:
                phase_id = self._phase_id
                if phase_id is None or self.status is not None:
                    phase_id = self._require_phase()
                if type(episode) is not int:
                    episode = int(episode)
                if objective is not None and type(objective) is not float:
                    objective = float(objective)
                steps = self._steps
                # a tuple, not a dict: see _insert_rows
                steps.append((phase_id, worker_cell, episode, step, agent_cell, sensor_cell(sensors),
                              action_cell(actions), reward_cell(rewards), objective, 1 if done else 0,
                              1 if terminated else 0, 1 if truncated else 0, None if cut_by is None else str(cut_by)))
                self.stored_steps += 1
                n = len(self._episodes) + len(steps)  # _buffered_row, inlined: once per stored step
                if n > self.peak_buffered:
                    self.peak_buffered = n
                if n >= self.flush_rows:
                    self.flush()
            finally:
                release()

        self._writers[key] = write
        return write

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
        if self._db.engine.dialect.name != "sqlite":
            return False
        episode_sql, step_sql = self._insert_sql.get("episode"), self._insert_sql.get("step")
        if (self._episodes and not episode_sql) or (self._steps and not step_sql):
            return False
        import sqlite3

        from xdoe.store.schema._engine import store_error

        assert self._files is not None
        if self._steps:  # the results files first, as _write_buffers
            self._files.steps(self._steps)
        self._files.flush()
        try:
            if self._raw is None:
                self._raw = self._db.engine.raw_connection()
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
            raise store_error(self._db.full_url, "write episodes to", exc) from None
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
        with self._db.write("record the end of a phase in") as connection:
            self._write_phase_end(connection, status)
        self._clear_buffers()
        self._phase_closed(status)

    def _phase_closed(self, status: str) -> None:
        self._phase_id = None
        self._phases[-1].update(status=status, end=utcnow().isoformat())
        assert self._files is not None
        self._files.phase_finished()

"""The row buffer of :class:`~xdoe.store.RunRecorder`: episode and step rows
kept as tuples and bulk-inserted, and the helpers of its writes."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from sqlalchemy import Boolean, Connection, Table, insert, select, update
from sqlalchemy.exc import IntegrityError

from xdoe.errors import StoreError
from xdoe.store._json import fast_encoder, json_default
from xdoe.store import _tables as t
from xdoe.store._csv_text import csv_fields, quoted_cell_prefix
from xdoe.store._tables import JsonText, _Encoded, utcnow
from xdoe.store._results import ResultsPaths, ResultsWriter
from xdoe.store._steps import StepPolicy

if TYPE_CHECKING:
    from xdoe.store._store import Store

__all__ = ["RecorderState", "RowBuffer"]

def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: ``compact_json`` with its encoder built once (:func:`fast_encoder`):
#: ``json.dumps`` with options builds a new encoder on every call, which costs
#: more than encoding the small dicts of a step. Same options, so the same text.
_encode_compact = fast_encoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                               default=json_default)


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
    marks JSON cells as :class:`_Encoded` itself (:meth:`RowBuffer._insert_rows`)."""
    if value is None:
        return None
    if type(value) is dict and len(value) == 1:
        [(key, item)] = value.items()
        if type(key) is str:
            return _one_key_cell(key, item)
    return _encode_compact(value)


def _one_key_cell(key: str, item: Any) -> str:
    """``{key: item}`` as compact JSON text (:func:`compact_json`'s text).

    For an int or a finite float (a step's sensor, action or reward, e.g.
    ``{"taxi.observation": 29}``) the text json writes is built directly (the
    same int/float reprs and string escaping); anything else is encoded.
    """
    kind = type(item)
    if kind is int or (kind is float and item - item == 0.0):
        return _cell_prefix(key) + (int.__repr__(item) if kind is int else float.__repr__(item)) + "}"
    return _encode_compact({key: item})


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


def _insert_id(conn: Connection, table: Table, values: dict[str, Any]) -> int:
    """Insert one row into ``table``; its new id."""
    key = conn.execute(insert(table).values(**values)).inserted_primary_key
    assert key is not None
    return int(key[0])


def _get_or_create(conn: Connection, table: Table, lookup: dict[str, Any], values: dict[str, Any]) -> int:
    """Id of the row of ``table`` matching ``lookup`` (a unique key), inserted
    with ``values`` when missing. Safe against a concurrent insert of the same key."""
    stmt = select(table.c.id).filter_by(**lookup)
    found = conn.execute(stmt).scalar_one_or_none()
    if found is not None:
        return int(found)
    try:
        with conn.begin_nested():
            return _insert_id(conn, table, {**lookup, **values})
    except IntegrityError:  # another process inserted it meanwhile
        return int(conn.execute(stmt).scalar_one())


class RecorderState:
    """The attributes :class:`~xdoe.store.RunRecorder` sets, for its mixins."""

    # set by RunRecorder.__init__ / start
    store: "Store"
    run_uid: str
    instance_id: int | None
    instance_uuid: str
    status: str | None
    paths: ResultsPaths | None
    results_root: Path
    policy: StepPolicy
    flush_rows: int
    peak_buffered: int
    total_episodes: int
    total_steps: int
    _lock: threading.RLock
    _phase_id: int | None
    _phases: list[dict[str, Any]]
    _files: ResultsWriter | None
    _start: Any
    _episodes: list[tuple[Any, ...]]
    _steps: list[tuple[Any, ...]]
    _step_lines: list[str | None]
    _insert_sql: dict[str, str]
    _raw: Any
    stored_steps: int


class RowBuffer(RecorderState):
    """Buffering and writing episode/step rows (a mixin of :class:`~xdoe.store.RunRecorder`)."""

    def value_row_writer(self, worker: int, agent: str, sensor_id: str, actuator_id: str,
                         reward_id: str) -> Callable[..., None]:
        """For one worker's agent with one sensor, one actuator and one reward
        (value steps): a function ``write(episode, step, observation, action,
        reward, objective, done=False, terminated=False, truncated=False, cut_by=None)``
        that records the row ``step(worker, episode, step, agent, {sensor_id: observation},
        {actuator_id: action}, {reward_id: reward}, objective, done, terminated,
        truncated, cut_by)`` records (the same text, raising
        what it raises), without the dicts and with what is the same for every
        row worked out once: the cells' ``{"<id>":`` prefixes, the
        ``all_transactions.csv`` text of the constant fields and the checks of
        ``worker``/``agent``. ``step`` is an ``int``; the caller asks
        ``policy.wants(step, done)`` first (the function does not).
        """
        worker, agent = int(worker), str(agent)
        sensor_prefix, action_prefix, reward_prefix = (_cell_prefix(key)
                                                       for key in (sensor_id, actuator_id, reward_id))
        # the all_transactions.csv line after the phase's name and mode, joined
        # from what csv writes for the constant parts (see _csv_text)
        quoted = [quoted_cell_prefix(p) for p in (sensor_prefix, action_prefix, reward_prefix)]
        if all(q is not None for q in quoted):
            head = csv_fields([worker]) + ","
            agent_text = "," + csv_fields([agent]) + ","
            sensor_q, action_q, reward_q = quoted
        else:  # pragma: no cover - csv quotes every JSON cell of an object
            head = None
        lock = self._lock

        def write(episode: int, step: int, observation: Any, action: Any, reward: Any, objective: float,
                  done: bool = False, terminated: bool = False, truncated: bool = False,
                  cut_by: str | None = None) -> None:
            with lock:
                phase_id = self._phase_id
                if phase_id is None or self.status is not None:
                    phase_id = self._require_phase()
                episode, objective = int(episode), float(objective)
                # _one_key_cell's text, its common cases without the call: an
                # exact int's or float's text is its repr (also csv's str()),
                # worked out once for the JSON cell and the CSV line
                if type(observation) is int and type(action) is int and type(reward) is float \
                        and reward - reward == 0.0 and head is not None:
                    o, a, r = f"{observation}", f"{action}", repr(reward)
                    sensors = f"{sensor_prefix}{o}}}"
                    actions = f"{action_prefix}{a}}}"
                    rewards = f"{reward_prefix}{r}}}"
                    line = f'{head}{episode},{step}{agent_text}{sensor_q}{o}}}",{action_q}{a}}}",' \
                        f'{reward_q}{r}}}",{objective!r},{"True" if done else "False"}\r\n'
                else:
                    sensors = _one_key_cell(sensor_id, observation)
                    actions = _one_key_cell(actuator_id, action)
                    rewards = _one_key_cell(reward_id, reward)
                    line = None
                steps = self._steps
                steps.append((phase_id, worker, episode, step, agent, sensors, actions, rewards, objective,
                              1 if done else 0, 1 if terminated else 0, 1 if truncated else 0, cut_by))
                self._step_lines.append(line)
                self.stored_steps += 1
                n = len(self._episodes) + len(steps)  # _buffered_row, inlined
                if n > self.peak_buffered:
                    self.peak_buffered = n
                if n >= self.flush_rows:
                    self.flush()

        return write

    def _append_step(self, phase_id: int, worker: int, episode: int, step: int, agent: str,
                     sensors: str | None, actions: str | None, rewards: str | None,
                     objective: float | None, done: bool, terminated: bool = False,
                     truncated: bool = False, cut_by: str | None = None) -> None:
        """Buffer a step row (the JSON cells encoded); its
        ``all_transactions.csv`` line is written with the buffer
        (:meth:`_write_buffers`). The caller holds the lock."""
        worker, episode, agent = int(worker), int(episode), str(agent)
        objective = None if objective is None else float(objective)
        # a tuple, not a dict: the hot path of store_steps="all" (see _insert_rows)
        self._steps.append((phase_id, worker, episode, step, agent, sensors, actions, rewards, objective,
                            1 if done else 0, 1 if terminated else 0, 1 if truncated else 0,
                            None if cut_by is None else str(cut_by)))
        self._step_lines.append(None)  # csv writes it (ResultsWriter.steps)
        self.stored_steps += 1
        self._buffered_row()

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
            self._files.steps(self._steps, self._step_lines)
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
            self._files.steps(self._steps, self._step_lines)
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
        self._step_lines = []

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

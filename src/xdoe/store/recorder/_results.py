"""Results files of one run instance, for people who do not query databases.

:class:`ResultsPaths` owns every file name under a run instance's folder;
:class:`ResultsWriter` writes them as the run goes:

``<results root>/<run uid>/<YYYY-MM-DD_HH-MM-SS>[-k]/``
    ``session_metadata.json``
        instance uuid, run and experiment uid, content hash, ``start``/``end``
        (ISO 8601, UTC), status, error, ``total_episodes`` (episode rows, i.e.
        per worker and agent), ``total_steps`` (sum of their steps), the phases
        and the run document. Written at start (status ``running``) and
        replaced atomically at the end.
    ``episodes.jsonl``
        one JSON object per finished episode and agent, keys ``run``,
        ``phase``, ``mode``, ``worker``, ``episode``, ``agent``, ``steps``,
        ``reward``, ``objective``, ``wall_time``; each line written through
        to the operating system as its episode is recorded, before its row
        is written to the store (:func:`_write_through`).
    ``<phase index>-<phase name>-average_reward_per_episode.csv``
        columns ``episode,agent,workers,mean_reward``: for each episode number
        and agent, the mean over workers of the episode's reward sum, and how
        many workers it averages. A row is written as soon as every worker of
        the phase has reported that episode (the rest at phase end), so memory
        does not grow with the number of episodes; written through, as
        ``episodes.jsonl``.
    ``all_transactions.csv``
        only when steps are stored: one row per stored step and agent,
        columns :data:`TRANSACTION_COLUMNS`, JSON in the sensor, action and
        reward cells; written through with the recorder's row buffer (every
        ``flush_rows`` rows, at every episode end and phase end and at the end
        of the run, failed or not), before those rows go to the store.
    ``agents/<phase index>-<phase name>/<agent>/``
        the place for saved brains (:meth:`ResultsPaths.agent_dir`).
    ``checkpoints/``
        the executor's checkpoints (``<phase index>-<agent>-e<episode>-s<step>.brain``)
        and, next to them, the resume states ``state-<phase index>-s<step>.pkl``
        (episode counters and generator states of the workers, see
        :mod:`xdoe.execution._resume`).

A run instance that is resumed (``xrun`` continues an interrupted instance)
keeps its folder: the files are filtered to the episodes the store keeps
(:func:`filter_results`) and then appended to.

The timestamp is the instance's start in UTC; when the folder exists already
(two instances started in the same second) a suffix ``-1``, ``-2``... is added.
"""

from __future__ import annotations

import csv
import functools
import json
import os
from pathlib import Path
from typing import IO, Any, Callable, TypeVar

from xdoe.errors import DiskFullError, no_space_cause
from xdoe.store.recorder._results_paths import ResultsPaths, safe_name
from xdoe.store._json import pretty_json

_F = TypeVar("_F", bound=Callable[..., Any])

#: Where results folders go unless told otherwise (``xrun --results``, ``run(results=)``).
DEFAULT_RESULTS_ROOT = Path("_outputs") / "results"

__all__ = ["DEFAULT_RESULTS_ROOT", "ResultsPaths", "ResultsWriter", "EPISODE_KEYS", "TRANSACTION_COLUMNS", "safe_name",
           "filter_results"]

#: Keys of every line of ``episodes.jsonl``, in order.
EPISODE_KEYS = ("run", "phase", "mode", "worker", "episode", "agent", "steps", "reward",
                "objective", "wall_time")
#: Columns of ``all_transactions.csv``.
TRANSACTION_COLUMNS = ("phase", "mode", "worker", "episode", "step", "agent", "sensors",
                       "actions", "rewards", "objective", "done")
AVERAGE_REWARD_COLUMNS = ("episode", "agent", "workers", "mean_reward")

#: ``json.dumps(value, ensure_ascii=False)`` with its encoder built once
#: (``json.dumps`` with options builds a new encoder on every call): the same text.
_encode_line = json.JSONEncoder(ensure_ascii=False).encode

def _no_space(method: _F) -> _F:
    """A :class:`ResultsWriter` method whose ``OSError`` "no space left on
    device" (or over quota) becomes a :class:`~xdoe.errors.DiskFullError`
    naming the instance's folder."""

    @functools.wraps(method)
    def guarded(self: "ResultsWriter", *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            if no_space_cause(exc) is None:
                raise
            raise DiskFullError(str(self.paths.directory), exc.strerror or str(exc)) from exc

    return guarded  # type: ignore[return-value]


def _open_through(path: Path, mode: str) -> IO[bytes]:
    """``path`` opened for writing bytes without a buffer (``mode``: ``"w"``
    or ``"a"``): each :func:`_write_through` is one ``write`` to the
    operating system, so a line is out of the process (a crash of the
    process keeps it) once written, with no ``flush`` (a text file's flush
    costs ~3k instructions more than the write: encoder, buffer and raw file
    layers)."""
    return path.open(mode + "b", buffering=0)


def _write_through(file: IO[bytes], text: str) -> None:
    """Write ``text`` (UTF-8) to ``file`` (:func:`_open_through`) whole:
    the rest of a short write (interrupted by a signal) is written again
    (a full disk raises its ``OSError``)."""
    data = text.encode()
    written = file.write(data)
    while written is not None and written < len(data):
        data = data[written:]
        written = file.write(data)


def _replace_atomically(target: Path, write: Callable[[IO[str]], None]) -> None:
    """Write ``target`` through a temporary file beside it and rename it into
    place; the temporary file never outlives a failure (a full disk)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            write(fh)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class _Discarded:
    """Stands in for a :class:`ResultsWriter` whose disk filled up: every
    call does nothing (the store still records the run's end)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


#: the most texts :meth:`ResultsWriter.steps` keeps the fields of
_MAX_FIELDS = 8192


def _csv_field(value: Any) -> str:
    """The text ``csv.writer`` (excel dialect: ``,`` between fields, ``"``
    quotes, doubled inside, ``QUOTE_MINIMAL``) writes for one field of a
    row of several: ``""`` for ``None``, a float's ``repr``, another value's
    ``str``; quoted when it holds a ``,``, a ``"``, a ``\\r`` or a ``\\n``."""
    if value is None:
        return ""
    text = repr(value) if isinstance(value, float) else value if type(value) is str else str(value)
    if '"' in text:
        return '"' + text.replace('"', '""') + '"'
    if "," in text or "\r" in text or "\n" in text:
        return '"' + text + '"'
    return text


def _number(value: float | None) -> str:
    """``json.dumps(value)`` of a float or ``None`` (an exact float: its repr
    when finite, else ``NaN``/``Infinity``/``-Infinity`` as json writes them)."""
    if type(value) is float and value - value == 0.0:  # finite
        return float.__repr__(value)
    return _encode_line(value)


def _kept_number(texts: dict[float, str], value: float | None) -> str:
    """:func:`_number`'s text of ``value``, kept in ``texts`` (float -> its
    text) for a finite non-zero float: a run's rewards and objectives repeat,
    and a float's text costs ~1-4k instructions. Equal floats have one text,
    but for ``0.0`` and ``-0.0`` (never kept); NaN is equal to nothing. A
    caller looks ``texts`` up first (with a float: ``1 == 1.0``) and calls
    this when the value is not there."""
    text = _number(value)
    if type(value) is float and value and value - value == 0.0:
        if len(texts) >= _MAX_FIELDS:  # a long run of many values: start over
            texts.clear()
        texts[value] = text
    return text


class _AverageReward:
    """Streams the per-episode mean reward over workers of one phase to CSV
    (the lines ``csv.writer`` writes: :func:`_csv_field`; each written
    through as it is complete).

    Holds only episodes that some worker has not reported yet.
    """

    def __init__(self, path: Path, workers: int, texts: dict[float, str]) -> None:
        self.workers = max(1, workers)
        self.texts = texts  # the writer's float texts (_kept_number)
        self.file = _open_through(path, "w")
        _write_through(self.file, ",".join(map(_csv_field, AVERAGE_REWARD_COLUMNS)) + "\r\n")
        self.pending: dict[tuple[int, str], list[float]] = {}  # key -> [sum, finite count, reported]
        self.agents: dict[str, str] = {}  # agent -> its field (a few per phase)

    def add(self, episode: int, agent: str, reward: float | None) -> None:
        """A worker's episode reward; ``None`` (a NaN recorded as missing)
        counts as reported but is left out of the mean."""
        finite = reward is not None
        if self.workers == 1:  # nothing to wait for: the row of [0.0 + reward, 1] at once
            self._write(episode, agent, [0.0 + reward if finite else 0.0, int(finite), 1])
            return
        entry = self.pending.setdefault((episode, agent), [0.0, 0, 0])
        if finite:
            entry[0] += reward
            entry[1] += 1
        entry[2] += 1
        if entry[2] >= self.workers:
            del self.pending[(episode, agent)]
            self._write(episode, agent, entry)

    def _write(self, episode: int, agent: str, entry: list[float]) -> None:
        count = int(entry[1])
        field = self.agents.get(agent)
        if field is None:
            field = self.agents[agent] = _csv_field(agent)
        mean = ""
        if count:
            value = entry[0] / count  # one worker: the episode's reward, whose text episodes.jsonl kept
            mean = self.texts.get(value) or (_kept_number(self.texts, value) if value - value == 0.0 else repr(value))
        _write_through(self.file, f"{_csv_field(episode) if type(episode) is not int else episode},{field},{count},"
                                  f"{mean}\r\n")

    def close(self) -> None:
        for (episode, agent), entry in sorted(self.pending.items()):
            self._write(episode, agent, entry)
        self.pending.clear()
        self.file.close()


class ResultsWriter:
    """Writes the results files of one run instance (see the module docstring).

    Not thread-safe: the one thread of its :class:`xdoe.store.RunRecorder` calls it.
    """

    @_no_space
    def __init__(self, paths: ResultsPaths, run_uid: str, store_steps: bool, *,
                 resume: bool = False) -> None:
        self.paths = paths
        self.run_uid = run_uid
        self._episodes = _open_through(paths.episodes, "a")
        self._transactions: IO[bytes] | None = None
        #: text or int -> its ``all_transactions.csv`` field (:func:`_csv_field`): the cells,
        #: the agents and the worker, episode and step numbers repeat
        self._fields: dict[str | int, str] = {}
        #: non-zero finite float -> its text (a float's repr; _kept_number): a step's objective, an
        #: episode's reward and objective and the average reward repeat
        self._floats: dict[float, str] = {}
        if store_steps:
            header = not (resume and paths.all_transactions.is_file()
                          and paths.all_transactions.stat().st_size > 0)
            self._transactions = _open_through(paths.all_transactions, "a" if resume else "w")
            if header:
                _write_through(self._transactions, ",".join(map(_csv_field, TRANSACTION_COLUMNS)) + "\r\n")
        self._average: _AverageReward | None = None
        self._phase: tuple[int, str, str] | None = None
        #: the phase's ``episodes.jsonl`` text up to the worker; ``agent -> ', "agent": …, "steps": '``
        self._line_head = ""
        self._agent_parts: dict[str, str] = {}

    @_no_space
    def phase_started(self, index: int, name: str, mode: str, workers: int) -> None:
        self.phase_finished()
        self._phase = (index, name, mode)
        self._average = _AverageReward(self.paths.average_reward(index, name), workers, self._floats)
        self._line_head = (f'{{"run": {_encode_line(self.run_uid)}, "phase": {_encode_line(name)}, '
                           f'"mode": {_encode_line(mode)}, "worker": ')

    @_no_space
    def phase_resumed(self, index: int, name: str, mode: str, workers: int) -> None:
        """Continue phase ``index`` of a resumed instance: rewrite its
        average-reward file from the episodes ``episodes.jsonl`` kept."""
        self.phase_started(index, name, mode, workers)
        assert self._average is not None
        with self.paths.episodes.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("phase") == name:
                    reward = row["reward"]
                    self._average.add(int(row["episode"]), str(row["agent"]),
                                      None if reward is None else float(reward))

    @_no_space
    def episode(self, worker: int, episode: int, agent: str, steps: int, reward: float | None,
                objective: float | None, wall_time: float | None) -> None:
        """A line of ``episodes.jsonl`` (``json.dumps`` of the :data:`EPISODE_KEYS`
        dict, ``ensure_ascii=False``); the reward to the average-reward file."""
        assert self._phase is not None and self._average is not None
        part = self._agent_parts.get(agent) if type(agent) is str else None
        if part is None and type(agent) is str and len(self._agent_parts) < 1024:
            part = self._agent_parts[agent] = f', "agent": {_encode_line(agent)}, "steps": '
        if part is not None and type(worker) is int and type(episode) is int and type(steps) is int \
                and type(reward) is float and type(objective) is float:  # json's text of the usual values
            texts = self._floats  # the reward's and objective's texts repeat (a wall time's does not)
            line = (f'{self._line_head}{worker}, "episode": {episode}{part}{steps}, "reward": '
                    f'{texts.get(reward) or _kept_number(texts, reward)}, "objective": '
                    f'{texts.get(objective) or _kept_number(texts, objective)}, "wall_time": {_number(wall_time)}}}\n')
        else:
            _, name, mode = self._phase
            values = (self.run_uid, name, mode, worker, episode, agent, steps, reward, objective, wall_time)
            line = _encode_line(dict(zip(EPISODE_KEYS, values))) + "\n"
        _write_through(self._episodes, line)
        self._average.add(episode, agent, reward)

    @_no_space
    def steps(self, rows: list[tuple[Any, ...]]) -> None:
        """Append stored steps: ``rows`` are the recorder's buffered step rows
        (13-tuples ``phase_id, worker, episode, step, agent, sensors, actions,
        rewards, objective, done, terminated, truncated, cut_by``: the three
        cells JSON text, ``done`` 0 or 1; the last three are not written) of the
        current phase, written as ``all_transactions.csv`` lines with the
        phase's name and mode in place of its id (by :mod:`csv`). The
        recorder calls it when it writes its buffer, before the rows go to
        the store.

        Each line is the text ``csv.writer`` writes (the excel dialect:
        :func:`_csv_field` of every value, ``\\r\\n`` at the end), built here
        from the fields of the row's values, which repeat (the JSON cells of
        a step's values, the agent, the worker, episode and step numbers, the
        objective: each field is made once, a number's text costs ~1k
        instructions, as much as a whole line's other work), and written in
        one ``write``: the ``csv`` module scans every character of every line
        twice."""
        assert self._phase is not None and self._transactions is not None
        _, name, mode = self._phase
        fields, floats = self._fields, self._floats
        if len(fields) >= _MAX_FIELDS or len(floats) >= _MAX_FIELDS:  # a long run of many values: start over
            fields.clear()
            floats.clear()
        get, number = fields.get, floats.get

        def keep(value: str | int | None) -> str:
            field = fields[value] = _csv_field(value)  # type: ignore[index]
            return field

        def objective_field(value: Any) -> str:
            if type(value) is not float:
                return _csv_field(value)
            field = float.__repr__(value)
            if value and value - value == 0.0:  # finite, non-zero: its json text too (_kept_number)
                floats[value] = field
            return field

        head = f"{_csv_field(name)},{_csv_field(mode)},"
        _write_through(self._transactions, "".join([
            f"{head}{get(worker) or keep(worker)},{get(episode) or keep(episode)},{get(step) or keep(step)},"
            f"{get(agent) or keep(agent)},{get(sensors) or keep(sensors)},{get(actions) or keep(actions)},"
            f"{get(rewards) or keep(rewards)},"
            f"{type(objective) is float and number(objective) or objective_field(objective)},"
            f"{'True' if done == 1 else 'False'}\r\n"
            for _, worker, episode, step, agent, sensors, actions, rewards, objective, done, _, _, _ in rows]))

    @_no_space
    def phase_finished(self) -> None:
        """Complete the current phase's average-reward file."""
        if self._average is not None:
            self._average.close()
            self._average = None
        self._phase = None

    @_no_space
    def write_metadata(self, metadata: dict[str, Any]) -> None:
        """Replace ``session_metadata.json`` atomically (temporary file, then rename)."""
        text = pretty_json(metadata)
        _replace_atomically(self.paths.session_metadata, lambda fh: fh.write(text))

    @_no_space
    def close(self) -> None:
        """Close every file (idempotent)."""
        self.phase_finished()
        if not self._episodes.closed:
            self._episodes.close()
        if self._transactions is not None and not self._transactions.closed:
            self._transactions.close()

    def discard(self) -> Any:
        """Close every file (its disk is full); returns a stand-in whose
        methods do nothing."""
        files = [self._episodes, self._transactions, self._average.file if self._average else None]
        for fh in files:
            try:
                if fh is not None:
                    fh.close()
            except OSError:
                pass  # the file is closed all the same; its last lines are lost
        return _Discarded()


def _rewrite(path: Path, keep_line: Any) -> None:
    """Keep the lines of ``path`` for which ``keep_line(line)`` is true (atomic replace)."""
    if not path.is_file():
        return
    def write(dst: IO[str]) -> None:
        with path.open(encoding="utf-8", newline="") as src:
            for line in src:
                if keep_line(line):
                    dst.write(line)

    _replace_atomically(path, write)


def filter_results(paths: ResultsPaths, keep: Any) -> None:
    """Drop from ``episodes.jsonl`` and ``all_transactions.csv`` every row
    whose ``keep(phase_name, worker, episode)`` is false, so the files of a
    resumed instance hold each episode once (what the store keeps).

    Lines that cannot be parsed (a half-written last line of a killed
    process) are dropped too.
    """
    def keep_episode(line: str) -> bool:
        try:
            row = json.loads(line)
            return bool(keep(row["phase"], int(row["worker"]), int(row["episode"])))
        except (ValueError, KeyError, TypeError):
            return False

    _rewrite(paths.episodes, keep_episode)
    if not paths.all_transactions.is_file():
        return
    first = [True]

    def keep_transaction(line: str) -> bool:
        if first[0]:
            first[0] = False
            return True  # header
        try:
            cells = next(csv.reader([line]))
            return bool(keep(cells[0], int(cells[2]), int(cells[3])))
        except (ValueError, IndexError, StopIteration):
            return False

    _rewrite(paths.all_transactions, keep_transaction)

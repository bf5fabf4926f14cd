"""``generate``: experiment document -> design -> run documents (-> files).

Example::

    from xdoe.design.runfiles import generate

    runs, design = generate("experiments/dummy.yaml")          # writes nothing
    print(design.method, design.reason, len(runs))
    first = runs[0]                                            # a plain dict, built on demand
    generate("experiments/dummy.yaml", output="_outputs")      # writes the files
"""

from __future__ import annotations

import os

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from xdoe._phases import phase_named
from xdoe.design import refuse_too_large, round_continuous
from xdoe.design.runfiles._expand import Expander, copy_plain, factors_of, run_seed, run_uid
from xdoe.design.runfiles._extend import ExtendPlan
from xdoe.design.runfiles._limits import refuse_long_file_names
from xdoe.design.runfiles._seeds import seed_levels
from xdoe.design.runfiles._template import TextTemplates
from xdoe.design.runfiles._output import OutputLayout, WriteResult, manifest_header, plan_outputs, write_outputs
from xdoe.documents import Experiment, YamlDocument, dump_canonical, load_experiment
from xdoe.errors import DesignError, DocumentError

__all__ = ["ExperimentWarning", "Generation", "RunSequence", "build_design", "check_runs", "generate", "prepare", "write_runs"]


class ExperimentWarning(UserWarning):
    """Something in an experiment document was accepted with a warning
    (unknown key, ``$req(`` without ``)``, unused factor...)."""


class RunSequence(Sequence):
    """The run documents of a design, built on demand (never all in memory).

    ``runs[k]`` is run number ``k`` (file ``run-<uid>-<k:04d>.yaml``): design
    point ``k % n_points``, repetition ``k // n_points``. Each access builds
    a fresh plain dict.
    """

    def __init__(self, experiment: Experiment, design: Any, *, repetitions: int | None = None, first_run: int = 0,
                 first_point: int = 0, copies: dict[int, int] | None = None, first_repetition: int = 0) -> None:
        self.experiment = experiment
        self.design = design
        self.n_points = len(design)
        self.repetitions = experiment.model.repetitions if repetitions is None else repetitions
        #: a block added by ``xgen augment`` (:mod:`xdoe.design.runfiles._blocks`): its runs are numbered from
        #: ``first_run`` and its points from ``first_point``, after the existing ones
        self.first_run, self.first_point = first_run, first_point
        self.first_repetition = first_repetition  #: ``--replicate-to``: repetitions from here of existing points
        self.layout = OutputLayout(experiment.safe_uid)
        self._expander = Expander(experiment)
        self._columns = _level_columns(design, self._expander)
        self._grid = _grid_columns(design, self._columns)
        self._templates = TextTemplates(self._expander)
        self._safe_uid = experiment.safe_uid
        #: design point -> how many earlier points have the same coordinates (only those > 0)
        self._copies = _copies(design) if copies is None else copies

    def __len__(self) -> int:
        return self.n_points * (self.repetitions - self.first_repetition)

    def levels(self, point: int) -> dict[str, Any]:
        """The levels of design point ``point`` (as written in the documents)."""
        grid = self._grid
        if grid is not None:  # a full factorial of plain scalar levels: the levels by their indices
            digits = self.design.indices(point)
            return {name: table[digits[j]] for name, j, table in grid}
        columns = self._columns
        if columns is None:
            return self._expander.levels(self.design.values(point))
        row, active = self.design.row(point)
        out = {}
        for name, j, table, factor in columns:
            if active[j]:
                c = row[j]
                if table is not None and c.is_integer() and 0 <= c < len(table):
                    out[name] = table[int(c)]  # a plain scalar level by its exact index: what Factor.value gives
                elif factor.levels is None:
                    out[name] = round_continuous(factor.value(c))
                else:
                    out[name] = factor.value(c)
        return out

    def __getitem__(self, k: int) -> dict:  # type: ignore[override]
        return copy_plain(self.shared(k))

    @property
    def render_cache(self) -> dict[int, dict]:
        """The sub-trees :meth:`shared` documents share, for ``dump_canonical(cache=...)``."""
        return self._expander.render_cache

    def shared(self, k: int) -> dict:
        """Run ``k`` with sub-trees shared with other runs (read-only use:
        faster, for writing)."""
        if isinstance(k, slice):
            raise TypeError("RunSequence does not support slices; use itertools.islice")
        k, point, repetition, levels = self._locate(k)
        return self._expander.document(number=self.first_run + k, index=self.first_point + point,
                                       repetition=repetition, levels=levels, copy=self._copies.get(point, 0))

    def _locate(self, k: int) -> tuple[int, int, int, dict[str, Any]]:
        """``(k, design point, repetition, levels)`` of run ``k`` (negative: from the end)."""
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"run {k} out of range (0..{n - 1})")
        repetition, point = divmod(k, self.n_points)
        return k, point, repetition + self.first_repetition, self.levels(point)

    def __iter__(self) -> Iterator[dict]:
        for k in range(len(self)):
            yield self[k]

    def dump(self, k: int) -> str:
        """Run ``k`` as canonical YAML text (the run file's content)."""
        return self.render(k)[0]

    def render(self, k: int) -> tuple[str, str, int, int, int, dict[str, Any]]:
        """Run ``k`` as canonical YAML text (the run file's content), with
        its uid, design point, repetition, seed and levels (``design.csv``).

        The one writer of run files: the text is the template of the run's
        structure filled in (:mod:`xdoe.design.runfiles._template`), else
        ``dump_canonical`` of the built document; byte for byte
        ``dump_canonical(runs[k])`` either way.

        Raises:
            DocumentError: the run cannot be built (a ``$req`` index out of range...).
            DesignError: a level holds NaN or an infinity.
        """
        k, point, repetition, levels = self._locate(k)
        copy = self._copies.get(point, 0)
        number, index = self.first_run + k, self.first_point + point
        uid = run_uid(self._safe_uid, number)
        text, templates = None, self._templates
        template = templates.template(levels)
        if template is not None:
            seed = run_seed(self.experiment.model.seed, seed_levels(levels, copy), repetition)
            text = templates.fill(template, levels, (index, repetition, seed, uid))
        if text is None:
            doc = self._expander.document(number=number, index=index, repetition=repetition, levels=levels, copy=copy)
            text, seed = dump_canonical(doc, cache=self.render_cache), doc["seed"]
        return text, uid, index, repetition, seed, levels

    def file_name(self, k: int) -> str:
        return self.layout.run_file(self.first_run + k)


def _copies(design: Any) -> dict[int, int]:
    """Design point -> how many earlier points share its coordinates (and
    active mask), for the points where that is not zero; only a design made
    from a ``design:`` mapping can repeat a point (centre points), so the
    others are not searched."""
    if getattr(design, "info", None) is None:
        return {}
    seen: dict[bytes, int] = {}
    out = {}
    for i in range(len(design)):
        key = design.points[i].tobytes() + design.active[i].tobytes()
        count = seen.get(key, 0)
        if count:
            out[i] = count
        seen[key] = count + 1
    return out


def _level_columns(design: Any, expander: Expander) -> list[tuple[str, int, tuple | None, Any]] | None:
    """``(name, design column, plain scalar levels or None, factor)`` in the
    expander's factor order, for :meth:`RunSequence.levels`; ``None`` (use
    ``Design.values``) when the design's columns are not the expander's factors."""
    index = {f.name: j for j, f in enumerate(design.factors)}
    if set(index) != set(expander.factor_names):
        return None
    columns = []
    for name in expander.factor_names:
        factor = design.factors[index[name]]
        plain = factor.levels is not None and all(type(v) in (str, int, float, bool, type(None)) for v in factor.levels)
        columns.append((name, index[name], tuple(factor.levels) if plain else None, factor))
    return columns


def _grid_columns(design: Any, columns: list[tuple[str, int, tuple | None, Any]] | None
                  ) -> list[tuple[str, int, tuple]] | None:
    """``(name, design column, plain scalar levels)`` when ``design`` is a
    full factorial built by ``Design.grid`` (level indices without its
    array) and every factor has plain scalar levels, else ``None``."""
    if columns is None or any(table is None for _, _, table, _ in columns):
        return None
    try:
        design.indices(0)
    except (AttributeError, ValueError, IndexError):
        return None
    return [(name, j, table) for name, j, table, _ in columns]


@dataclass
class Generation:
    """What :func:`generate` returns; unpacks as ``runs, design``.

    Attributes:
        runs: the run documents (:class:`RunSequence`, lazy).
        design: the :class:`~xdoe.design.Design`.
        experiment: the loaded :class:`~xdoe.documents.Experiment`.
        written: the :class:`WriteResult` when an output was given, else ``None``.
    """

    runs: RunSequence
    design: Any
    experiment: Experiment
    written: WriteResult | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.runs, self.design))


def _phase_modes(model: Any) -> list[set[str] | None]:
    """Each schedule phase's modes (of its ``phase_config`` levels, inherited
    from the phase before when omitted); ``None`` where they cannot be read
    from the document alone."""
    configs = model.definitions.phase_config or {}
    out: list[set[str] | None] = []
    levels: Any = None
    for entry in model.schedule:
        for phase in entry.values():
            given = getattr(phase, "phase_config", None)
            levels = given if given is not None else levels
            keys = levels.get("levels") if isinstance(levels, dict) else levels
            if not isinstance(keys, list) or not all(isinstance(k, str) and k in configs for k in keys):
                out.append(None)
                continue
            out.append({str(getattr(configs[k], "mode", "")) for k in keys})
    return out


def _check_prune(experiment: Experiment, phases: list[str], agents: list[str]) -> None:
    """Refuse a ``run_config.prune`` whose phase or agent the schedule lacks,
    or (an optuna design) whose ``batch_runs`` is not a batch's runs, before
    anything is written (``xrun experiment-start`` / ``xrun optimize``
    refused them only after ``xgen`` wrote the runs).

    Raises:
        DocumentError: located at the ``prune`` key named.
    """
    run_config = experiment.model.definitions.run_config
    spec = getattr(run_config, "prune", None) if run_config is not None else None
    if spec is None:
        return
    where = ("definitions", "run_config", "prune")
    if spec.phase is not None:
        name = str(spec.phase)
        if phase_named(name, phases) is None:
            raise experiment.error(f"no phase {spec.phase!r} in the schedule to prune (phases: {', '.join(phases)}; "
                                   f"or an index 0..{len(phases) - 1})",
                                   (*where, "phase"))
    else:
        modes = _phase_modes(experiment.model)
        if all(m is not None and "train" not in m for m in modes):
            raise experiment.error(f"no train phase to prune (phases: {', '.join(phases)}); name the phase to "
                                   "prune with prune.phase", where)
    if spec.agent is not None and spec.agent not in agents:
        raise experiment.error(f"{spec.agent!r} is none of the document's agents ({', '.join(agents)})",
                               (*where, "agent"))
    design = experiment.model.design
    if spec.batch_runs is not None and isinstance(design, dict) and design.get("method") == "optuna":
        batch = int(design.get("batch", 1))
        repetitions = int(design.get("repetitions_per_trial", experiment.model.repetitions))
        if spec.batch_runs != batch * repetitions:  # the rule's batches would cut across the study's
            raise experiment.error(f"batch_runs is {spec.batch_runs}, but a batch of this study has "
                                   f"{batch * repetitions} runs (batch {batch} x {repetitions} repetition(s)): "
                                   f"set batch_runs: {batch * repetitions}", (*where, "batch_runs"))


def build_design(experiment: Experiment, *, max_total_runs: int | None = None) -> Any:
    """The design of ``experiment``: its factors, ``design`` method,
    ``max_runs`` and the seed ``SeedSequence(seed, spawn_key=(0,))``.

    Args:
        experiment: the loaded experiment.
        max_total_runs: refuse more runs (design points x repetitions) than
            this; ``None``: the document's ``max_total_runs`` (default 10^6).

    Raises:
        DocumentError: the design cannot be built (located at the ``design``
            key) or is larger than ``max_total_runs`` (nothing is built then).
    """
    from xdoe.design import make_design  # the package re-exports the algorithms

    model = experiment.model
    key = "design" if "design" in experiment.data else ("max_runs" if "max_runs" in experiment.data else "factors")
    try:
        factors = factors_of(experiment)
    except DesignError as exc:
        raise experiment.error(str(exc), (key,)) from None
    plain = isinstance(model.design, str) and model.design in ("auto", "full_factorial", "lhs", "maximin")
    try:
        refuse_too_large(experiment, factors, max_total_runs)  # from the options alone, before anything is built
    except DesignError as exc:
        if isinstance(exc, DocumentError):
            raise
        raise experiment.error(str(exc), (key,)) from None
    phases = [name for entry in model.schedule for name in entry]
    agents = [str(getattr(a, "name", k)) for k, a in (model.definitions.agents or {}).items()]
    if isinstance(model.design, dict) and model.design.get("method") == "optuna":
        from xdoe.design._optuna import check_targets

        try:
            check_targets(model.design, phases, agents)
        except DesignError as exc:
            raise experiment.error(str(exc), ("design",)) from None
    _check_prune(experiment, phases, agents)
    try:
        design = make_design(
            factors,
            method=model.design,
            max_runs=model.max_runs,
            seed=model.seed,
            spawn_key=(0,),  # SeedSequence(seed, spawn_key=(0,)), built only where the design draws
        )
    except DesignError as exc:
        raise experiment.error(str(exc), (key,)) from None
    limit = model.max_total_runs if max_total_runs is None else max_total_runs
    if not plain and len(design) * model.repetitions > limit:  # a DoE design's size is known once built
        raise experiment.error(f"design {design.method} has {len(design)} points x {model.repetitions} "
                               f"repetition(s) = {len(design) * model.repetitions} runs, more than max_total_runs "
                               f"{limit}; lower repetitions or raise max_total_runs (xgen --max-total-runs)",
                               ("design",))
    return design


def prepare(
    document: str | Path | dict | YamlDocument, *, strict: bool = False, max_total_runs: int | None = None,
    overrides: Sequence[Any] = (),
) -> tuple[Experiment, Any, RunSequence]:
    """Load the document, build the design and the (lazy) run sequence.

    ``overrides``: ``KEY=VALUE`` texts (or ``Override``) applied to the
    document as loaded (see :func:`xdoe.documents.load_experiment`); the
    manifest records them (``"overrides"``). To regenerate a study from its
    manifest: ``overrides=overrides_from_record(manifest["overrides"])``.

    ``max_total_runs`` overrides the document's limit on runs (see
    :func:`build_design`).

    Raises:
        DocumentError: invalid document or design, or a design too large.
    """
    experiment = load_experiment(document, strict=strict, overrides=overrides)
    design = build_design(experiment, max_total_runs=max_total_runs)
    if design.method == "optuna":  # its study's journal beside the manifest (xdoe.design._optuna)
        design.info["storage"] = f"optuna-{experiment.safe_uid}.journal"
    runs = RunSequence(experiment, design, repetitions=(design.info or {}).get("repetitions_per_trial"))
    refuse_long_file_names(runs)
    return experiment, design, runs


def check_runs(runs: RunSequence, progress: Callable[[int], None] | None = None) -> None:
    """Build every run document once (without writing) so that errors that
    depend on the chosen levels (a ``$req`` index out of range...) surface.

    Raises:
        DocumentError: the first such error.
    """
    for k in range(len(runs) if runs.repetitions == 1 else runs.n_points):
        runs[k]
        if progress is not None:
            progress(k + 1)


def _output_args(runs: RunSequence) -> dict:
    experiment, design = runs.experiment, runs.design

    def header() -> dict:  # computed once the output path is found usable (the figures, the version cost time)
        from xdoe import __version__

        head = manifest_header(
            xdoe_version=__version__,
            input_sha256=experiment.input_sha256,
            design=design,
            repetitions=runs.repetitions,
            max_runs=experiment.model.max_runs,
        )
        head["design"]["runs"] = len(runs)  # an augmented design's blocks may have other repetitions
        if design.method == "optuna":  # trial number = design point: the uids of each trial's runs
            from xdoe.design import trial_runs

            head["design"]["doe"]["info"]["trial_runs"] = trial_runs(runs)
        if experiment.overrides:
            head["overrides"] = experiment.overrides  # in the order given (see _output._emit)
        return head

    return {"layout": runs.layout, "header": header, "factor_names": [f.name for f in design.factors]}


def write_runs(
    runs: RunSequence,
    output: str | Path,
    *,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    force_folder: bool = False,
) -> WriteResult:
    """Write the run files, ``design.csv`` and ``manifest.json`` of ``runs``
    into ``output`` (a new folder atomically, an existing one by extending
    it; see :func:`~xdoe.design.runfiles.write_outputs`).

    Raises:
        InputError: run documents of the existing output would change
            (without ``force``), or a file to write is not xgen's.
        DocumentError: a run cannot be built (nothing is written then).
    """
    runs = _with_blocks(runs, output)
    result = write_outputs(runs, output=output, force=force, progress=progress, force_folder=force_folder,
                           **_output_args(runs))
    if runs.design.method == "optuna":  # its study, beside the manifest (docs/designs.md)
        from xdoe.design import record_study

        record_study(runs, output)
    return result


def plan_runs(runs: RunSequence, output: str | Path, *, force_folder: bool = False) -> ExtendPlan | None:
    """What :func:`write_runs` would do to an existing ``output`` (files
    added, kept, changed, retired), ``None`` when it does not exist; writes
    nothing. Raises :class:`~xdoe.errors.InputError` as :func:`write_runs`
    for a folder xgen did not create (unless ``force_folder``)."""
    runs = _with_blocks(runs, output)
    return plan_outputs(runs, output=output, force_folder=force_folder, **_output_args(runs))


def _names_blocks(manifest: Path, *, whole: bool) -> bool:
    """Whether ``manifest`` names blocks (``xgen augment``). Its keys are
    sorted and indented by one (:func:`~xdoe.design.runfiles._output.write_outputs`),
    so ``design`` (and any ``blocks``) comes before the top-level ``files``
    list: without ``whole``, only that head is read (a plain design's
    manifest of a million files is not read for a name it cannot hold)."""
    if whole:
        return '"blocks"' in manifest.read_text(encoding="utf-8")
    head = b""
    with open(manifest, "rb") as fh:
        while chunk := fh.read(1 << 16):
            head += chunk
            end = head.find(b'\n "files": ')
            if end >= 0:
                return b'"blocks"' in head[:end]
    return b'"blocks"' in head


def _with_blocks(runs: Any, output: str | Path) -> Any:
    """``runs`` with the blocks ``xgen augment`` added to ``output`` (see
    :mod:`xdoe.design.runfiles._blocks`); only a manifest that names blocks costs more
    than reading its file name."""
    from xdoe.design.runfiles._extend import layout_for

    target = Path(output)
    # os.path's checks answer False for a name the system refuses (too long...): the writer then says why
    if hasattr(runs, "blocks") or not os.path.isdir(target):
        return runs  # the blocks are there already; no folder yet
    manifest = target / layout_for(target, runs.layout).manifest
    if not os.path.isfile(manifest) or not _names_blocks(manifest, whole=getattr(runs.design, "info", None) is not None):
        return runs
    from xdoe.design.runfiles._blocks import with_blocks

    return with_blocks(runs, target)


def generate(
    document: str | Path | dict | YamlDocument,
    output: str | Path | None = None,
    *,
    force: bool = False,
    strict: bool = False,
    progress: Callable[[int], None] | None = None,
    max_total_runs: int | None = None,
    force_folder: bool = False,
) -> Generation:
    """Expand an experiment document into run documents.

    Args:
        document: a path to an experiment document, its plain data, or a
            loaded :class:`~xdoe.documents.YamlDocument`.
        output: directory to write the runs, ``design.csv`` and
            ``manifest.json`` into; ``None`` writes nothing (the document's
            ``output`` key is used by ``xgen generate``, not here).
        force: replace an existing, different output.
        strict: refuse unknown keys instead of warning.
        progress: called with the number of runs written so far.
        max_total_runs: refuse a design of more runs (default: the
            document's ``max_total_runs``, 10^6 unless it says otherwise).
        force_folder: write into an existing non-empty folder that xgen did
            not create (no manifest of xgen in it); refused otherwise.

    Returns:
        :class:`Generation` (``runs, design = generate(...)``). Warnings about
        the document are issued as :class:`ExperimentWarning`.

    Raises:
        DocumentError: invalid document (file:line, key path, what was expected).
        InputError: the output exists and differs (without ``force``).
    """
    experiment, design, runs = prepare(document, strict=strict, max_total_runs=max_total_runs)
    for text in experiment.warnings:
        warnings.warn(text, ExperimentWarning, stacklevel=2)
    written = None
    if output is not None:
        written = write_runs(runs, output, force=force, progress=progress, force_folder=force_folder)
    return Generation(runs=runs, design=design, experiment=experiment, written=written)


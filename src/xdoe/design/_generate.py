"""``generate``: experiment document -> design -> run documents (-> files).

Example::

    from xdoe.design import generate

    runs, design = generate("experiments/dummy.yaml")          # writes nothing
    print(design.method, design.reason, len(runs))
    first = runs[0]                                            # a plain dict, built on demand
    generate("experiments/dummy.yaml", output="_outputs")      # writes the files
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from xdoe.design._expand import Expander, copy_plain, factors_of
from xdoe.design._extend import ExtendPlan
from xdoe.design._output import OutputLayout, WriteResult, manifest_header, plan_outputs, write_outputs
from xdoe.documents._canonical import dump_canonical
from xdoe.documents._experiment import Experiment, load_experiment
from xdoe.documents._yaml import YamlDocument
from xdoe.errors import DesignError

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

    def __init__(self, experiment: Experiment, design: Any) -> None:
        self.experiment = experiment
        self.design = design
        self.n_points = len(design)
        self.repetitions = experiment.model.repetitions
        self.layout = OutputLayout(experiment.safe_uid)
        self._expander = Expander(experiment)

    def __len__(self) -> int:
        return self.n_points * self.repetitions

    def levels(self, point: int) -> dict[str, Any]:
        """The levels of design point ``point`` (as written in the documents)."""
        return self._expander.levels(self.design.values(point))

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
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"run {k} out of range (0..{n - 1})")
        repetition, point = divmod(k, self.n_points)
        levels = self.levels(point)
        return self._expander.document(number=k, index=point, repetition=repetition, levels=levels)

    def __iter__(self) -> Iterator[dict]:
        for k in range(len(self)):
            yield self[k]

    def dump(self, k: int) -> str:
        """Run ``k`` as canonical YAML text (the run file's content)."""
        return dump_canonical(self.shared(k), cache=self.render_cache)

    def file_name(self, k: int) -> str:
        return self.layout.run_file(k)


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


def build_design(experiment: Experiment) -> Any:
    """The design of ``experiment``: its factors, ``design`` method,
    ``max_runs`` and the seed ``SeedSequence(seed, spawn_key=(0,))``.

    Raises:
        DocumentError: the design cannot be built (located at the ``design`` key).
    """
    from xdoe.design import make_design  # the package re-exports the algorithms

    model = experiment.model
    try:
        factors = factors_of(experiment)
        return make_design(
            factors,
            method=model.design,
            max_runs=model.max_runs,
            seed=np.random.SeedSequence(model.seed, spawn_key=(0,)),
        )
    except DesignError as exc:
        key = "design" if "design" in experiment.data else ("max_runs" if "max_runs" in experiment.data else "factors")
        raise experiment.error(str(exc), (key,)) from None


def prepare(
    document: str | Path | dict | YamlDocument, *, strict: bool = False
) -> tuple[Experiment, Any, RunSequence]:
    """Load the document, build the design and the (lazy) run sequence.

    Raises:
        DocumentError: invalid document or design.
    """
    experiment = load_experiment(document, strict=strict)
    design = build_design(experiment)
    return experiment, design, RunSequence(experiment, design)


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
    from xdoe import __version__

    experiment, design = runs.experiment, runs.design
    header = manifest_header(
        xdoe_version=__version__,
        input_sha256=experiment.input_sha256,
        design=design,
        repetitions=runs.repetitions,
        max_runs=experiment.model.max_runs,
    )
    return {"layout": runs.layout, "header": header, "factor_names": [f.name for f in design.factors]}


def write_runs(
    runs: RunSequence,
    output: str | Path,
    *,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
) -> WriteResult:
    """Write the run files, ``design.csv`` and ``manifest.json`` of ``runs``
    into ``output`` (a new folder atomically, an existing one by extending
    it; see :func:`~xdoe.design.write_outputs`).

    Raises:
        InputError: run documents of the existing output would change
            (without ``force``), or a file to write is not xgen's.
        DocumentError: a run cannot be built (nothing is written then).
    """
    return write_outputs(runs, output=output, force=force, progress=progress, **_output_args(runs))


def plan_runs(runs: RunSequence, output: str | Path) -> ExtendPlan | None:
    """What :func:`write_runs` would do to an existing ``output`` (files
    added, kept, changed, retired), ``None`` when it does not exist; writes nothing."""
    return plan_outputs(runs, output=output, **_output_args(runs))


def generate(
    document: str | Path | dict | YamlDocument,
    output: str | Path | None = None,
    *,
    force: bool = False,
    strict: bool = False,
    progress: Callable[[int], None] | None = None,
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

    Returns:
        :class:`Generation` (``runs, design = generate(...)``). Warnings about
        the document are issued as :class:`ExperimentWarning`.

    Raises:
        DocumentError: invalid document (file:line, key path, what was expected).
        InputError: the output exists and differs (without ``force``).
    """
    experiment, design, runs = prepare(document, strict=strict)
    for text in experiment.warnings:
        warnings.warn(text, ExperimentWarning, stacklevel=2)
    written = None
    if output is not None:
        written = write_runs(runs, output, force=force, progress=progress)
    return Generation(runs=runs, design=design, experiment=experiment, written=written)


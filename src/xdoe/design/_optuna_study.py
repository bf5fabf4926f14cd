"""The design side of ``xrun optimize`` (:class:`OptunaStudy`): an optuna
design's output folder, its study (the journal beside the manifest), which
trials wait for their responses, telling them, and writing the next batch as
an ``xgen augment`` block through the one writer (:func:`~xdoe.design.runfiles.write_runs`).
Running the runs and reading their responses is xrun's (:mod:`xdoe.cli._optimize`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdoe.design._optuna import (OptunaSettings, batch_points, journal_name, next_batch, open_study, sync_study,
                                 tell_trials, trial_runs)
from xdoe.errors import InputError

__all__ = ["OptunaStudy"]


class OptunaStudy:
    """An optuna design written to ``output`` and its study.

    Args:
        runs: the document's runs (:func:`~xdoe.design.runfiles.prepare`; the blocks
            written so far are read from ``output``'s manifest).
        output: the output folder (``xgen generate`` wrote it).

    Raises:
        InputError: the document's design is not ``method: optuna``, no
            manifest of it in ``output``, or the journal does not match it.
    """

    def __init__(self, runs: Any, output: str | Path) -> None:
        if runs.design.method != "optuna":
            raise InputError(f"xrun optimize needs design: {{method: optuna, ...}}; this document's design is "
                             f"{runs.design.method} (run it with xrun experiment-start)")
        from xdoe.design.runfiles import layout_for

        self.base, self.output = runs, Path(output)
        if not (self.output / layout_for(self.output, runs.layout).manifest).is_file():
            raise InputError(f"{self.output}: no manifest of experiment {runs.experiment.safe_uid!r}: run "
                             "xgen generate first")
        self.seed = int(runs.experiment.model.seed)
        self.path = self.output / journal_name(runs.experiment.safe_uid)
        self.refresh()

    def refresh(self) -> None:
        """Read the folder's blocks again and bring the study up to the manifest."""
        from xdoe.design.runfiles import with_blocks

        self.runs = with_blocks(self.base, self.output)
        self.design = self.runs.design
        self.settings = OptunaSettings.of(self.design.info or {})
        self.study = open_study(self.path, self.base.experiment.safe_uid, self.settings)
        sync_study(self.study, self.design, self.settings, self.seed)

    @property
    def trials(self) -> int:
        """Trials written so far (= design points)."""
        return len(self.design)

    def trial_runs(self) -> dict[int, list[str]]:
        """Trial number -> its run uids."""
        return {int(t): uids for t, uids in trial_runs(self.runs).items()}

    def _numbers(self, trials: list[int] | None) -> list[int]:
        """The run numbers of ``trials`` (default all), in run order."""
        wanted = None if trials is None else set(trials)
        out = []
        for k in range(len(self.runs)):
            seq, local = self.runs._segment(k) if hasattr(self.runs, "_segment") else (self.runs, k)
            if wanted is None or seq.first_point + local % seq.n_points in wanted:
                out.append(k)
        return out

    def files(self, trials: list[int] | None = None) -> list[Path]:
        """The run files (of ``trials``; default all), in run order."""
        return [self.output / self.runs.file_name(k) for k in self._numbers(trials)]

    def documents(self, trials: list[int]) -> list[tuple[Path, str, dict]]:
        """``(file, text, document)`` of the runs of ``trials``, in run order:
        what the one writer puts in each run file (``text``, byte for byte
        :func:`~xdoe.documents.dump_canonical` of ``document``), so ``xrun
        optimize`` can run a batch it just wrote without parsing its YAML
        again (when the file still holds ``text``)."""
        return [(self.output / self.runs.file_name(k), self.runs.render(k)[0], self.runs[k])
                for k in self._numbers(trials)]

    def pending(self) -> list[int]:
        """Trials of the design the study has not been told yet."""
        trials = self.study.get_trials(deepcopy=False)
        return [t.number for t in trials[:self.trials] if not t.state.is_finished()]

    def tell(self, values: dict[int, Any]) -> list[int]:
        """Tell the study these trials' values: a list per trial, ``None``
        (failed) or a :class:`~xdoe.design.PrunedTrial` (idempotent, see
        :func:`~xdoe.design._optuna.tell_trials`)."""
        return tell_trials(self.study, values)

    @property
    def complete(self) -> bool:
        """Every trial written and told."""
        return self.trials >= self.settings.trials and not self.pending()

    def extend(self) -> int:
        """Ask the next batch and write it as a block numbered after the
        existing runs (the manifest updated atomically); returns the trials
        added (0 when ``trials`` are written)."""
        from xdoe.design.runfiles import AugmentedRuns, write_runs

        params = next_batch(self.study, self.design.factors, self.settings, self.seed, self.trials)
        if not params:
            return 0
        coded = batch_points(self.design.factors, params)
        pairs = self.runs.pairs() if isinstance(self.runs, AugmentedRuns) else []
        first = self.trials
        how = {"optuna": {"batch": len(pairs) + 1, "trials": [first, first + len(params) - 1]},
               "repetitions": self.base.repetitions}
        write_runs(AugmentedRuns(self.base, pairs + [(how, coded)]), self.output)
        self.refresh()
        return len(params)

    def best(self) -> list[Any]:
        """The best trial (several objectives: the Pareto front), as Optuna's ``FrozenTrial``."""
        finished = [t for t in self.study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
        if not finished:
            return []
        return list(self.study.best_trials) if len(self.settings.directions) > 1 else [self.study.best_trial]

"""What a read command of ``xrun`` reads: the store and ONE experiment.

Every read command (``status``, ``results``, ``analyze``, ``plot``,
``report``, ``export``) takes ``[DIR]`` (an xgen output folder), ``-e UID``
and ``--store URL`` and works on one experiment:

* the store is ``--store`` (or ``$XRUN_STORE``), else ``DIR/xrun.sqlite``
  when that file exists, else ``sqlite:///_outputs/xrun.sqlite``;
* the experiments to choose from are those whose manifests are in ``DIR``
  (:func:`xdoe.design.runfiles.folder_experiments`), else (no ``DIR``, or a folder
  without manifests) those the store holds runs of;
* ``-e UID`` picks one of them (an unknown one: exit 2, listing them); without
  it a single experiment is chosen, and several are refused (exit 2, listing
  them: ``choose one with -e UID``) unless the command takes ``--all``
  (``status``, ``export``).

A store that cannot be opened (no store, unreachable server, malformed URL)
is exit 2 as well, for every read command alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from xdoe.cli._common import EXIT_INPUT, fail, store_option
from xdoe.errors import AmbiguousExperimentError, InputError

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["all_option", "choose_experiment", "experiment_option", "open_store", "select_options", "store_of"]

F = TypeVar("F", bound=Callable[..., Any])
#: experiments named in one error line
_SHOWN = 20


def experiment_option(func: F) -> F:
    """``--experiment/-e UID``, passed as ``experiment``."""
    return click.option("--experiment", "-e", metavar="UID", default=None,
                        help="The experiment to read (needed when DIR or the store holds several; "
                             "the error lists them).")(func)


def all_option(func: F) -> F:
    """``--all``, passed as ``every``: every experiment instead of one."""
    return click.option("--all", "every", is_flag=True,
                        help="Every experiment of DIR or the store, instead of one.")(func)


def select_options(func: F) -> F:
    """``-e UID`` and ``--store URL``, the selection every read command takes."""
    return store_option(experiment_option(func))


def store_of(output_dir: Path | None, store_url: str | None) -> str | None:
    """``store_url``, else ``DIR/xrun.sqlite`` when that file exists, else
    ``None`` (the default store)."""
    if store_url is None and output_dir is not None and (output_dir / "xrun.sqlite").is_file():
        return f"sqlite:///{output_dir / 'xrun.sqlite'}"
    return store_url


def open_store(store_url: str | None) -> "Store":
    """The existing store, opened for reading (read commands never create
    one). A store that cannot be opened is unusable input: ``error: ...``
    and exit 2 (no store: with the way out)."""
    from xdoe.errors import NoStoreError, StoreError
    from xdoe.store import Store

    try:
        return Store(store_url, read_only=True)
    except NoStoreError as exc:
        fail(f"{exc} — run `xrun experiment-start` first or pass --store", EXIT_INPUT)
    except StoreError as exc:
        fail(str(exc), EXIT_INPUT)
    raise AssertionError("not reached: fail() exits")


def _listing(uids: list[str]) -> str:
    more = f" and {len(uids) - _SHOWN} more" if len(uids) > _SHOWN else ""
    return ", ".join(uids[:_SHOWN]) + more


def choose_experiment(output_dir: Path | None, experiment: str | None, store: "Store | None", *,
                      every: bool = False, allow_all: bool = False) -> str | None:
    """The experiment a read command works on (see the module docstring);
    ``None``: every run (``every``, or nothing names an experiment).

    Args:
        output_dir: the xgen output folder given, if any.
        experiment: ``-e UID``.
        store: the open store (``None``: only the folder is asked).
        every: ``--all`` was given.
        allow_all: the command takes ``--all`` (named in the refusal).

    Raises:
        InputError: ``-e`` names no experiment of the folder or store.
        AmbiguousExperimentError: several are there and none is chosen (an
            ``InputError``; the message lists them).
    """
    from xdoe.design.runfiles import folder_experiments

    if every:
        if experiment is not None:
            raise InputError("--all and -e UID exclude each other: choose one")
        return None
    choices: list[str] = []
    where = ""
    if output_dir is not None and output_dir.is_dir():
        choices, where = list(folder_experiments(output_dir)), str(output_dir)
    if not choices and store is not None:
        choices, where = store.runs.experiments(), f"store {store.url}"
    way_out = "choose one with -e UID" + (" (or --all for every one)" if allow_all else "")
    if experiment is not None:
        if experiment not in choices:
            known = f"experiments: {_listing(choices)}" if choices else "it holds none"
            raise InputError(f"no experiment {experiment!r} in {where or 'the store'} ({known}); {way_out}")
        return experiment
    if len(choices) > 1:  # the error xdoe.results.load raises for the same case
        raise AmbiguousExperimentError(choices, where, way_out)
    return choices[0] if choices else None

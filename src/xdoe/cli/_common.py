"""What both command-line applications share: exit codes and error display."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

import click

from xdoe.errors import InputError, StoreLostError, XdoeError

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "OVERWRITE_HINT", "PIPE_WIDTH", "Number", "Program", "check_output",
           "console",
           "document_warnings", "fail", "handle_errors", "open_store_or_exit", "output_options", "resume_gc", "store_option",
           "without_pydantic_plugins"]

class Number(click.FloatRange):
    """``click.FloatRange`` that refuses ``nan`` (it passes every range
    check: no comparison with NaN is true, so ``--power nan`` ran a power
    analysis of NaN) and, unless ``infinite``, ``inf``."""

    def __init__(self, *args: Any, infinite: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.infinite = infinite

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if math.isnan(number) or (math.isinf(number) and not self.infinite):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


EXIT_OK = 0
EXIT_FAILED = 1  # some run failed / some work did not complete
EXIT_INPUT = 2  # unusable input: the documents, options or files

F = TypeVar("F", bound=Callable[..., Any])

#: the way out of a refused output file, the same for every command with -o FILE
OVERWRITE_HINT = "pass --overwrite to replace it, or choose another -o"


#: the width of rich output that goes to a pipe or a file: no table is cut to a terminal's width
PIPE_WIDTH = 100_000


def console(**kwargs: Any) -> Any:
    """A rich ``Console`` (``kwargs`` as rich takes them): a terminal's own
    width on a terminal, or ``$COLUMNS`` when set; else (piped or redirected)
    :data:`PIPE_WIDTH` columns, so that a table keeps every column in full
    (``xrun status | cat`` keeps the reasons; each table is only as wide as
    its cells). A table that needs more than the width (``COLUMNS=40``, a
    narrow terminal) is drawn as wide as its cells need
    (:func:`xdoe._tables.table_width`) and the terminal folds its lines: rich would drop
    columns and cut numbers. Emoji codes are left as typed (``:smile:`` in a
    run's warning or a level is text, not 😄)."""
    import os

    from rich.console import Console

    from xdoe._tables import print_whole

    class _Console(Console):
        def print(self, *objects: Any, **options: Any) -> None:
            print_whole(super().print, self, *objects, **options)

    kwargs.setdefault("emoji", False)
    out = _Console(**kwargs)
    if not out.is_terminal and not os.environ.get("COLUMNS"):
        out.width = PIPE_WIDTH
    return out


def fail(message: str, code: int = EXIT_INPUT) -> None:
    """Print ``error: message`` to stderr (no traceback) and exit with ``code``."""
    from xdoe.errors import printable

    click.secho(f"error: {printable(message)}", fg="red", err=True)
    sys.exit(code)


@contextlib.contextmanager
def _one_line_usage() -> Iterator[None]:
    """A usage error (unknown option, bad option value, missing argument)
    as one ``error: --option: what (see 'prog cmd --help')`` line and exit 2,
    as every other refusal, instead of click's three-line usage text."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:  # no arguments at all: the help, as click shows it
        raise
    except click.UsageError as exc:
        message = exc.format_message()
        if (isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter)
                and exc.param is not None and exc.message):
            hint = exc.param_hint or exc.param.get_error_hint(exc.ctx)  # type: ignore[arg-type]
            hint = hint if isinstance(hint, str) else " / ".join(hint)
            message = f"{hint.replace(chr(39), '').replace(chr(34), '')}: {exc.message}"
        path = exc.ctx.command_path if exc.ctx is not None else None
        fail(message.rstrip(".") + (f" (see '{path} --help')" if path else ""), EXIT_INPUT)


class Program(click.Group):
    """The ``xgen``/``xrun`` command group: usage errors in the project's one-line
    form (:func:`_one_line_usage`), at the group's level and at its commands'.

    Run as the program (the console script: no ``args``, they come from
    ``sys.argv``), it turns the cyclic garbage collector off while the
    documents load: loading (pydantic, the document models, the documents,
    the store's tables) makes tens of thousands of lasting objects and no
    garbage cycles, and the collections it would trigger, and the full one at
    interpreter exit, would cost ~0.03 s of a 0.3 s ``xgen check`` (~4 % of a
    one-step ``xrun experiment-start``) and free nothing. Before work that
    grows with the runs or runs user code (:func:`resume_gc`), else when the
    command ends, what was made so far is frozen (``gc.freeze``: never scanned
    again) and the collector is back on. What the command made after that
    is collected at exit as usual, so that a plugin's object in a cycle
    (``--in-process``) is still finalized (its files flushed). Called as a
    function (tests, scripts), the caller's collector is left alone."""

    gc_paused = False

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        if args is None and gc.isenabled():
            gc.disable()
            Program.gc_paused = True
            try:
                return super().main(args, *rest, **kwargs)
            finally:
                resume_gc()
        return super().main(args, *rest, **kwargs)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        with _one_line_usage():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_usage():
            return super().invoke(ctx)


def resume_gc() -> None:
    """The collector back on, what was made while it was off frozen (see :class:`Program`)."""
    if Program.gc_paused:
        Program.gc_paused = False
        gc.freeze()
        gc.enable()


_NO_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"


@contextlib.contextmanager
def without_pydantic_plugins() -> Iterator[None]:
    """xdoe's document models built inside the block without pydantic plugins
    (unless the user set ``PYDANTIC_DISABLE_PLUGINS``): looking for them reads
    the entry points of every installed distribution (~7 ms, ~1.5 % of a
    one-step run), and they would only observe xdoe validating its own
    documents. The variable is restored afterwards, so models of the user's
    code (components, ``--import``) get their plugins."""
    given = os.environ.get(_NO_PLUGINS)
    if given is None:
        os.environ[_NO_PLUGINS] = "__all__"
    try:
        yield
    finally:
        if given is None:
            os.environ.pop(_NO_PLUGINS, None)


@contextlib.contextmanager
def document_warnings() -> Iterator[None]:
    """Print the run-document warnings raised inside the block as one
    ``warning: file:line: ...`` line each (other warnings pass on unchanged)."""
    from xdoe.documents import RunDocumentWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RunDocumentWarning)
        yield
    for item in caught:
        if issubclass(item.category, RunDocumentWarning):
            click.secho(f"warning: {item.message}", fg="yellow", err=True)
        else:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)


def handle_errors(func: F) -> F:
    """Turn :class:`InputError` and a store lost or unreachable
    (:class:`~xdoe.errors.StoreLostError`) into exit code 2 and other :class:`XdoeError`
    into exit code 1, each with a one-line message and no traceback; a
    module of a missing extra (pandas without ``xdoe[analysis]``...) into
    exit code 2 naming the extra to install; a path the system cannot take
    at all (a name too long, a loop of links), wherever it is first looked
    at (``-o``, ``--store sqlite:///...``, ``--results``), into exit code 2
    naming it."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import errno

        from xdoe._extras import missing_extra

        try:
            return func(*args, **kwargs)
        except ModuleNotFoundError as exc:
            message = missing_extra(exc)
            if message is None:
                raise
            fail(message, EXIT_INPUT)
        except InputError as exc:
            fail(str(exc), EXIT_INPUT)
        except StoreLostError as exc:  # a store that cannot be reached is the environment's problem: as
            fail(str(exc), EXIT_INPUT)  # when it cannot be opened (every read command: status, results...)
        except XdoeError as exc:
            fail(str(exc), EXIT_FAILED)
        except OSError as exc:  # after XdoeError: xdoe's path errors are OSErrors too
            if exc.errno not in (errno.ENAMETOOLONG, errno.ELOOP):
                raise
            fail(f"{exc.filename or 'a path'}: {exc.strerror} (choose a shorter path, or one without a loop of "
                 "symbolic links)", EXIT_INPUT)

    return wrapper  # type: ignore[return-value]


def open_store_or_exit(store_url: str | None) -> "Store":
    """Open (and create) the store once before anything runs, and return it
    (the caller closes it); a store that cannot be opened (malformed URL,
    server unreachable, folder not writable) is unusable input: one line and
    exit 2."""
    from xdoe.errors import StoreError
    from xdoe.store import Store

    try:
        return Store(store_url)
    except StoreError as exc:
        fail(str(exc), EXIT_INPUT)
        raise  # not reached: fail() exits


def store_option(func: F) -> F:
    """``--store URL`` (default ``$XRUN_STORE`` or ``sqlite:///_outputs/xrun.sqlite``),
    passed to the command as ``store_url``."""
    return click.option(
        "--store", "store_url", metavar="URL", envvar="XRUN_STORE", default=None,
        help="SQLAlchemy URL of the store (default: $XRUN_STORE or sqlite:///_outputs/xrun.sqlite).",
    )(func)


def output_options(help: str, *, default: str | None = None, metavar: str = "FILE",
                   required: bool | None = None) -> Callable[[F], F]:
    """``--output/-o FILE`` (required without ``default``) and ``--overwrite``,
    passed to the command as ``output`` (a Path) and ``overwrite``. Every
    command that writes a file the user names takes these two, and calls
    :func:`check_output` before any work."""

    def decorate(func: F) -> F:
        func = click.option("--overwrite", is_flag=True,
                            help="Replace the output file if it exists (default: refuse, exit 2).")(func)
        # a folder is refused by check_output in one line (click's own refusal is a usage text)
        return click.option("--output", "-o", "output", type=click.Path(path_type=Path),
                            metavar=metavar, required=default is None if required is None else required,
                            default=default,
                            show_default=default is not None,
                            help=f"{help} An existing file is refused unless --overwrite; the file "
                                 "appears only when complete.")(func)

    return decorate


def check_output(output: Path, overwrite: bool) -> None:
    """Refuse an existing ``output`` (without ``overwrite``): one line
    ``PATH: exists; not overwritten (pass --overwrite ...)`` and exit 2,
    before anything is computed or written; so is a name that cannot be a
    file (a folder, too long, under a file or a loop of links), with or
    without ``overwrite``."""
    import errno
    import os

    from xdoe._files import output_error, refuse_existing

    try:
        if os.path.isdir(output):
            raise output_error(output, IsADirectoryError(errno.EISDIR, "Is a directory (give a file name)"))
        if not overwrite:
            refuse_existing(output, OVERWRITE_HINT)
        else:
            try:
                os.lstat(output)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise output_error(output, exc) from None
    except InputError as exc:
        fail(str(exc), EXIT_INPUT)

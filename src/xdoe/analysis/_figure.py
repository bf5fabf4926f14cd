"""Shared figure plumbing: a pyplot-free matplotlib ``Figure`` (Agg or SVG
canvas, no global state) saved as PNG or SVG by the output's suffix, and readable labels."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from xdoe.errors import InputError

__all__ = ["new_figure", "save", "import_matplotlib", "metric_label", "response_label", "SUFFIXES", "PALETTE"]

SUFFIXES = (".png", ".svg")
#: colour-blind-safe (Okabe-Ito)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
#: held while matplotlib's modules are first imported: two threads importing them at once (the
#: dashboard draws its pictures in a thread pool) can get a partially initialised module, an ImportError
_IMPORTING = threading.Lock()
_UNITS = {"objective": "objective per episode", "reward": "reward per episode",
          "steps": "steps per episode", "wall_time": "wall time per episode [s]"}


def metric_label(metric: str) -> str:
    """Axis label with unit, e.g. ``reward per episode``."""
    return _UNITS.get(metric, metric)


def response_label(response: str) -> str:
    """Axis label of a ``PHASE:METRIC:STAT`` response, e.g. ``mean objective per episode (phase testing)``."""
    parts = response.split(":")
    if len(parts) != 3:
        return response
    phase, metric, stat = parts
    return f"{stat} {metric_label(metric)} (phase {phase})"


def check_suffix(path: str | Path) -> Path:
    """``path`` as a Path; raise :class:`InputError` unless it ends in .png or .svg."""
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise InputError(f"{target}: unknown picture format {target.suffix or '(no suffix)'!r}; use .png or .svg")
    return target


def import_matplotlib() -> None:
    """Import matplotlib's figure machinery (its core, ``figure``, ``patches``,
    ``path``, ``ticker``, colormaps) once, under a lock: call it before the
    first ``from matplotlib... import`` of a function that may run in several
    threads at once. Cheap once done."""
    with _IMPORTING:
        import matplotlib.figure  # noqa: F401 - imports the rest it needs


def new_figure(width: float, height: float, *, svg: bool = False) -> Any:
    """A ``matplotlib.figure.Figure`` of ``width`` x ``height`` inches with an
    Agg canvas, or with ``svg`` the SVG canvas (no Agg import: cheaper for a
    figure saved only as SVG; :func:`save` still writes PNG from it through
    matplotlib's canvas switch). Safe to call from several threads at once."""
    with _IMPORTING:  # the first import of matplotlib, once, whatever thread asks first
        from matplotlib.figure import Figure

        if svg:
            from matplotlib.backends.backend_svg import FigureCanvasSVG as Canvas
        else:
            from matplotlib.backends.backend_agg import FigureCanvasAgg as Canvas
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    Canvas(fig)
    return fig


def save(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (PNG at 100 dpi, or SVG), creating its folder;
    an existing file is replaced in one step (:func:`xdoe._files.write_atomically`:
    a failed drawing leaves no half-written picture). Commands refuse an
    existing file before they draw (``--overwrite``).

    Raises:
        InputError: a suffix other than .png / .svg.
    """
    import matplotlib

    from xdoe._files import write_atomically

    target = check_suffix(path)
    svg = target.suffix.lower() == ".svg"

    def write(tmp: Path) -> None:
        # SVG text stays text (searchable, smaller; the reader's fonts), no date: reproducible files
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "xdoe"}):
            fig.savefig(tmp, format="svg" if svg else "png", dpi=100, metadata={"Date": None} if svg else None)

    return write_atomically(target, write, overwrite=True)

"""The lay-down diagram of a run: per phase, its environments and agents and
which sensors (environment -> agent) and actuators (agent -> environment)
connect them, drawn from the run document alone (no component is imported).

``xrun experiment-start`` writes it as ``laydown.svg`` into every run
instance's results folder (as PrimAITE does for every session);
``xrun plot laydown RUN_FILE`` draws it on request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdoe.analysis._figure import PALETTE, import_matplotlib, new_figure, save

__all__ = ["plot_laydown", "phases_of", "write_laydown", "laydown_key", "LAYDOWN_FILE", "CACHE_FOLDER"]

_KEYS = ("environments", "agents", "simulation", "phase_config")


def phases_of(document: dict) -> list[tuple[str, dict]]:
    """``[(phase name, phase)]`` with omitted keys inherited from the previous phase."""
    out: list[tuple[str, dict]] = []
    previous: dict = {}
    for entry in document.get("schedule") or []:
        if not isinstance(entry, dict) or len(entry) != 1:
            continue
        (name, body), = entry.items()
        phase = {k: (body or {}).get(k, previous.get(k)) for k in _KEYS}
        out.append((str(name), phase))
        previous = phase
    return out


def _cls(component: Any) -> str:
    name = (component or {}).get("name") if isinstance(component, dict) else None
    return str(name).rsplit(":", 1)[-1].rsplit(".", 1)[-1] if name else "-"


def _ids(ids: list[str], uid: str, width: int = 34) -> str:
    names = [i.split(".", 1)[1] if i.startswith(uid + ".") else i for i in ids]
    text = ", ".join(names)
    return text if len(text) <= width else text[: width - 1] + "…" + f" ({len(names)})"


def _for_env(ids: list[str] | None, uid: str) -> list[str] | None:
    """The ids of environment ``uid`` in an agent's list; ``None`` = all."""
    if ids is None:
        return None
    return [i for i in ids if i.startswith(uid + ".")]


def plot_laydown(document: dict, output: str | Path, *, title: str | None = None) -> Path:
    """Draw the lay-down diagram of run ``document`` (plain data) to ``output``
    (.svg or .png), titled ``title`` (default ``Lay-down of run <uid>``): one panel per phase, agents left (name, brain, muscle),
    environments right (uid, class), a blue arrow environment -> agent for
    the sensors the agent reads and an orange arrow agent -> environment for
    the actuators it drives, labelled with the ids (``all`` when the agent
    takes every sensor or actuator).

    Raises:
        InputError: the suffix is not .png/.svg.
    """
    import_matplotlib()  # matplotlib's first import under its lock (threads draw at once)
    from matplotlib.patches import FancyBboxPatch

    phases = phases_of(document)
    tall = max([max(len(p.get("agents") or []), len(p.get("environments") or []), 1) for _, p in phases] or [1])
    fig = new_figure(10, max(1, len(phases)) * (1.2 + 1.25 * tall) + 0.5, svg=Path(output).suffix.lower() == ".svg")
    axes = fig.subplots(max(1, len(phases)), 1, squeeze=False).ravel()
    for ax, (name, phase) in zip(axes, phases):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
        mode = (phase.get("phase_config") or {}).get("mode", "")
        episodes = (phase.get("phase_config") or {}).get("episodes", "")
        ax.set_title(f"phase {name!r}  ·  mode {mode}  ·  {episodes} episodes  ·  "
                     f"{_cls(phase.get('simulation'))}", fontsize=10, loc="left")
        agents = [a for a in phase.get("agents") or [] if isinstance(a, dict)]
        envs = [e for e in phase.get("environments") or [] if isinstance(e, dict)]

        def ys(n: int) -> list[float]:
            return [1 - (i + 0.5) / n for i in range(n)] if n else []

        box = dict(boxstyle="round,pad=0.012", linewidth=1.2)
        agent_y = ys(len(agents))
        env_y = ys(len(envs))
        h = min(0.8 / max(len(agents), len(envs), 1), 0.42)
        for a, y in zip(agents, agent_y):
            ax.add_patch(FancyBboxPatch((0.02, y - h / 2), 0.24, h, facecolor="#E8F1FA", edgecolor=PALETTE[0], **box))
            ax.text(0.14, y + h * 0.12, f"agent {a.get('name', '?')}", ha="center", va="center", fontsize=10,
                    weight="bold")
            ax.text(0.14, y - h * 0.2, f"{_cls(a.get('brain'))} / {_cls(a.get('muscle'))}", ha="center",
                    va="center", fontsize=8)
        uids = []
        for e, y in zip(envs, env_y):
            env = e.get("environment") or {}
            uid = str(env.get("uid") or "?")
            uids.append(uid)
            ax.add_patch(FancyBboxPatch((0.74, y - h / 2), 0.24, h, facecolor="#EAF6F0", edgecolor=PALETTE[2], **box))
            ax.text(0.86, y + h * 0.12, f"environment {uid}", ha="center", va="center", fontsize=10, weight="bold")
            ax.text(0.86, y - h * 0.2, _cls(env), ha="center", va="center", fontsize=8)
        for a, ya in zip(agents, agent_y):
            for uid, ye in zip(uids, env_y):
                sensors = _for_env(a.get("sensors"), uid)
                actuators = _for_env(a.get("actuators"), uid)
                if sensors == [] and actuators == []:
                    continue
                for ids, start, end, dy, colour, what in (
                        (sensors, (0.74, ye), (0.26, ya), 0.06, PALETTE[0], "sensors"),
                        (actuators, (0.26, ya), (0.74, ye), -0.06, PALETTE[1], "actuators")):
                    if ids == []:
                        continue
                    s, t = (start[0], start[1] + dy * h * 4), (end[0], end[1] + dy * h * 4)
                    ax.annotate("", xy=t, xytext=s, arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.6))
                    mx, my = (s[0] + t[0]) / 2, (s[1] + t[1]) / 2
                    ax.text(mx, my + (0.025 if dy > 0 else -0.025), f"{what}: {'all' if ids is None else _ids(ids, uid)}",
                            ha="center", va="bottom" if dy > 0 else "top", fontsize=8, color=colour,
                            bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
    fig.suptitle(f"Lay-down of run {document.get('uid', '?')}" if title is None else title, fontsize=12)
    return save(fig, output)


#: file name of the lay-down diagram in a run instance's results folder
LAYDOWN_FILE = "laydown.svg"


#: the folder below the results root that holds one drawn diagram per run structure
CACHE_FOLDER = ".laydown"
#: the title of the diagram in results folders: the file is shared by every run of its
#: structure (hard links), so it names no run; the folder it sits in does
SHARED_TITLE = "Lay-down of the run: environments, agents, sensors and actuators per phase"
#: the modules whose code decides what the diagram looks like (part of the cache key)
_DRAWING_CODE = ("_laydown.py", "_figure.py")


def _structure(document: dict) -> str:
    """What the diagram shows, as canonical JSON (the run uid left out)."""
    import json

    shown = []
    for name, phase in phases_of(document):
        config = phase.get("phase_config") or {}
        shown.append([name, config.get("mode"), config.get("episodes"), _cls(phase.get("simulation")),
                      [[(e.get("environment") or {}).get("uid"), _cls(e.get("environment"))]
                       for e in phase.get("environments") or [] if isinstance(e, dict)],
                      [[a.get("name"), _cls(a.get("brain")), _cls(a.get("muscle")), a.get("sensors"), a.get("actuators")]
                       for a in phase.get("agents") or [] if isinstance(a, dict)]])
    return json.dumps(shown, sort_keys=True, default=str)


def laydown_key(document: dict) -> str:
    """The sha256 (hex) naming the cached diagram of run ``document``: of
    exactly what it draws (:func:`_structure`: phases, modes, episodes,
    component classes, sensor and actuator ids; not the uid or seed) and of
    the drawing code itself (this module and the figure helpers, so that any
    change of the drawing, editable installs included, draws anew; cheaper
    than asking the installed distributions for xdoe's version; where the
    sources are not installed, xdoe's version stands for them)."""
    import hashlib

    digest = hashlib.sha256()
    here = Path(__file__).parent
    try:
        for name in _DRAWING_CODE:
            digest.update((here / name).read_bytes())
    except OSError:  # an install with compiled modules only
        import xdoe

        digest.update(f"xdoe {xdoe.__version__}".encode())
    digest.update(_structure(document).encode("utf-8"))
    return digest.hexdigest()


def _cached_drawing(document: dict, cache: Path) -> Path:
    """``cache/<key>.svg`` of ``document``, drawn now if it is not there
    (:func:`~xdoe.analysis._figure.save` writes a temporary file and renames
    it into place: concurrent workers drawing the same structure each
    replace it with the same content, and no reader sees a partial file).
    The drawing is made read-only: every instance folder's ``laydown.svg`` is a
    hard link to it, so an edit of one would change them all."""
    import os

    path = cache / f"{laydown_key(document)}.svg"
    if not path.is_file():
        plot_laydown(document, path, title=SHARED_TITLE)
        os.chmod(path, 0o444)
    return path


def write_laydown(document: dict, folder: str | Path | None, cache_root: str | Path | None = None) -> Path | None:
    """Put ``laydown.svg`` of run ``document`` into results ``folder`` unless
    it is there already.

    The diagram is drawn once per run structure (:func:`laydown_key`) into
    ``<cache_root>/.laydown/<sha256>.svg`` (``cache_root``: the results root;
    default: the folder's grandparent, as ``<root>/<run uid>/<instance>``)
    and hard-linked into ``folder`` (copied where links are not possible), so
    a campaign pays for matplotlib once per distinct structure, not once per
    run or per worker process. A picture that cannot be drawn never stops a
    run: it is skipped with a ``RuntimeWarning``. Returns the path, or ``None``."""
    import os
    import shutil
    import warnings

    if folder is None:
        return None
    target = Path(folder) / LAYDOWN_FILE
    if target.exists():
        return target
    cache = Path(cache_root if cache_root is not None else Path(folder).parent.parent) / CACHE_FOLDER
    try:
        drawn = _cached_drawing(document, cache)
        try:
            os.link(drawn, target)
        except OSError:  # a file system without hard links (or across devices): a copy
            shutil.copyfile(drawn, target)
        return target
    except Exception as exc:  # noqa: BLE001 - a diagram is never worth a failed run
        target.unlink(missing_ok=True)  # absent on entry: whatever is there now is ours, maybe partial
        warnings.warn(f"{target}: lay-down diagram not written: {exc}", RuntimeWarning, stacklevel=2)
        return None

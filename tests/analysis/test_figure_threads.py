"""matplotlib's first import from several threads at once (the dashboard draws its pictures in a
thread pool): each drawing function enters matplotlib through a different module (``figure``,
``ticker``, ``colormaps``), and two threads importing its circular modules at the same time got
"cannot import name ... from partially initialized module" (a dashboard picture answered HTTP 500 in
CI). :func:`xdoe.analysis._figure.import_matplotlib` takes the first import under one lock."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent('''
    import sys, threading
    from pathlib import Path

    from xdoe.analysis import plots
    from xdoe.analysis._figure import new_figure
    from xdoe.design import Factor, make_design

    out = Path(sys.argv[1])
    design = make_design([Factor("a", levels=(0, 1)), Factor("b", levels=(0, 1))], method="full_factorial")
    calls = [lambda: new_figure(2, 2),  # matplotlib.figure first
             lambda: plots.plot_design(design, out / "design.png"),  # matplotlib.ticker first
             lambda: plots._colours(12)]  # matplotlib's colormaps first
    barrier, errors = threading.Barrier(len(calls)), []

    def draw(call):
        barrier.wait()
        try:
            call()
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=draw, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(errors or "ok")
''')


def test_threads_drawing_at_once_in_a_fresh_process_import_matplotlib_once(tmp_path: Path) -> None:
    for attempt in range(3):  # the race showed in every attempt before the lock
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok", done.stdout
    assert (tmp_path / "design.png").stat().st_size > 0

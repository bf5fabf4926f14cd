"""Issue 25, item 6: finished episodes are durable before the next one
starts. A run whose process dies without a word (SIGKILL from plugin code,
like the OOM killer; ``os._exit``) keeps in the store every episode it
finished: the rows were committed at each episode end, not buffered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from xdoe.store import Store

EXECUTION = Path(__file__).resolve().parents[1] / "execution"

SCRIPT = """
import sys
sys.path.insert(0, {components!r})
from scale_components import countdown_run
from xdoe.execution import run
doc = countdown_run("dies", episodes=6, length=3, kill_at_episode=4)
run(doc, store={url!r}, results={results!r})
"""


@pytest.mark.parametrize("worker", [1, 2])
def test_a_killed_run_keeps_every_episode_it_finished(tmp_path: Path, worker: int) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    script = SCRIPT.format(components=str(EXECUTION), url=url, results=str(tmp_path / "results"))
    if worker == 2:  # two workers stepping in this process: episodes end in turn
        script = script.replace("kill_at_episode=4)", "kill_at_episode=4, worker=2)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr  # SIGKILLed by its own environment in episode 4
    with Store(url, read_only=True) as store:
        (inst,) = store.runs.instances()
        assert inst.status == "running"  # nothing could record its end
        episodes = sorted((e["worker"], e["episode"]) for e in store.runs.episodes(instance_id=inst.id))
    # each worker finished episodes 0-3 before its episode 4 killed the process
    # (with two workers, the first one's kill may come before the second one's episode 3 ended)
    expected = [(w, e) for w in range(worker) for e in range(4)]
    assert episodes == expected or (worker == 2 and episodes == expected[:-1]), episodes

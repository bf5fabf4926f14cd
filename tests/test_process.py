"""xdoe._process.watch_process: the callback comes when the watched process
ends, SIGKILL included, and at once for a process already gone."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from xdoe._process import watch_process


def test_the_callback_comes_when_the_process_is_killed() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    ended = threading.Event()
    watch_process(proc.pid, ended.set)
    time.sleep(0.3)
    assert not ended.is_set()  # alive: no call
    proc.kill()
    proc.wait()
    assert ended.wait(5)


def test_a_process_already_gone_calls_back_at_once() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    ended = threading.Event()
    watch_process(proc.pid, ended.set)
    assert ended.wait(5)

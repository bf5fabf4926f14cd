"""Work claiming in the store (xdoe.store.runs._claims) on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time

import pytest

from xdoe.store import ClaimHeartbeat, Store, new_owner

H = "ab" * 32


@pytest.fixture
def db(store_url):
    with Store(store_url) as s:
        yield s


def test_one_owner_at_a_time_and_release(db):
    a, b = new_owner(), new_owner()
    assert db.runs.claim_run("r1", H, owner=a, stale_after=60)
    assert not db.runs.claim_run("r1", H, owner=b, stale_after=60)
    assert db.runs.claim_run("r1", H, owner=a, stale_after=60)  # the holder may claim again
    assert db.runs.claim_run("r1", "cd" * 32, owner=b, stale_after=60)  # another version is another run
    info = db.runs.claim_of("r1", H)
    assert info is not None and info.owner == a and info.pid > 0
    assert not db.runs.release_claim("r1", H, owner=b)  # not b's
    assert db.runs.release_claim("r1", H, owner=a)
    assert db.runs.claim_of("r1", H) is None
    assert db.runs.claim_run("r1", H, owner=b, stale_after=60)


def test_concurrent_claims_have_exactly_one_winner(db):
    owners = [new_owner() for _ in range(6)]
    wins: list[str] = []
    barrier = threading.Barrier(len(owners))

    def attempt(owner: str) -> None:
        barrier.wait()
        if db.runs.claim_run("race", H, owner=owner, stale_after=60):
            wins.append(owner)

    threads = [threading.Thread(target=attempt, args=(o,)) for o in owners]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert db.runs.claim_of("race", H).owner == wins[0]


def test_stale_claim_is_taken_over_once_and_the_old_owner_learns_it(db):
    old = new_owner()
    assert db.runs.claim_run("r2", H, owner=old, stale_after=60)
    time.sleep(1.2)
    assert not db.runs.claim_run("r2", H, owner=new_owner(), stale_after=60)  # not stale for 60 s
    contenders = [new_owner() for _ in range(4)]
    # 1 s of margin: on a loaded CI machine four SQLite claims took more than 0.2 s
    wins = [o for o in contenders if db.runs.claim_run("r2", H, owner=o, stale_after=1.0)]
    assert len(wins) == 1  # the takeover refreshed the heartbeat: the others see a live claim
    assert db.runs.claim_of("r2", H).owner == wins[0]
    assert not db.runs.heartbeat_claim("r2", H, owner=old)
    assert db.runs.heartbeat_claim("r2", H, owner=wins[0])


def test_heartbeat_thread_keeps_a_claim_alive(db):
    owner = new_owner()
    assert db.runs.claim_run("r3", H, owner=owner, stale_after=60)
    with ClaimHeartbeat(db.runs, "r3", H, owner=owner, interval=0.05) as beat:
        time.sleep(1.5)  # longer than stale_after below: only the beats keep the claim
        deadline = time.monotonic() + 30  # a loaded machine may have run fewer beats meanwhile: wait for them
        while beat.beats < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not db.runs.claim_run("r3", H, owner=new_owner(), stale_after=1.0)
    assert beat.beats >= 3 and not beat.lost and beat.error is None
    time.sleep(1.2)  # no more beats: now it is stale
    assert db.runs.claim_run("r3", H, owner=new_owner(), stale_after=1.0)


def test_heartbeat_thread_notices_a_takeover(db):
    owner = new_owner()
    assert db.runs.claim_run("r4", H, owner=owner, stale_after=60)
    with ClaimHeartbeat(db.runs, "r4", H, owner=owner, interval=0.05) as beat:
        assert db.runs.release_claim("r4", H, owner=None)  # e.g. an operator or a takeover
        deadline = time.monotonic() + 5
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.02)
    assert beat.lost


def test_claim_of_a_dead_process_on_this_host_is_taken_over_at_once(db, tmp_path):
    import subprocess
    import sys

    dead = new_owner()
    code = (
        "import sys; from xdoe.store import Store; "
        f"s = Store(sys.argv[1]); assert s.runs.claim_run('r9', {H!r}, owner={dead!r}, stale_after=60)"
    )
    subprocess.run([sys.executable, "-c", code, db.database.engine.url.render_as_string(hide_password=False)],
                   check=True, timeout=60)
    info = db.runs.claim_of("r9", H)
    assert info is not None and info.owner == dead
    # its heartbeat is fresh, but its process is gone: no need to wait an hour
    mine = new_owner()
    assert db.runs.claim_run("r9", H, owner=mine, stale_after=3600)
    assert db.runs.claim_of("r9", H).owner == mine


def test_claim_of_a_live_process_is_kept(db):
    holder, other = new_owner(), new_owner()
    assert db.runs.claim_run("r8", H, owner=holder, stale_after=3600)  # this process: alive
    assert not db.runs.claim_run("r8", H, owner=other, stale_after=3600)


def test_claim_run_state_claims_and_reads_the_state_in_one_transaction(db, tmp_path):
    """The campaign's claim and the state it decides by (issue 35.2): one
    transaction; ``None``, and nothing read, when another owner holds it."""
    doc = {"uid": "rs", "seed": 1, "schedule": []}
    rec = db.recorder(doc, results_root=tmp_path)
    rec.start()
    rec.finish("finished")
    a, b = new_owner(), new_owner()
    commits: list[object] = []
    from sqlalchemy import event

    def committed(conn: object) -> None:
        commits.append(conn)

    event.listen(db.database.engine, "commit", committed)
    try:
        state = db.runs.claim_run_state("rs", rec.content_hash, owner=a, stale_after=60)
    finally:
        event.remove(db.database.engine, "commit", committed)
    assert len(commits) == 1
    assert state is not None and state.finished == rec.instance_id
    assert state == db.runs.run_state("rs", rec.content_hash)
    assert db.runs.claim_of("rs", rec.content_hash).owner == a  # committed: visible to everybody
    assert db.runs.claim_run_state("rs", rec.content_hash, owner=b, stale_after=60) is None
    assert db.runs.claim_run_state("rs", rec.content_hash, owner=a, stale_after=60) == state  # the holder again
    assert db.runs.claim_run_state("new", H, owner=b, stale_after=60).latest is None  # nothing recorded yet

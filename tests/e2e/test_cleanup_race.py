"""A failed job's cleanup destroys only a dataset its own receive created (issue 30, item 9a):
two jobs to the same new name, both planned while it is absent; the loser's receive is refused
(the winner's is writing the dataset) and its cleanup leaves the winner's dataset, which then
arrives whole."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from lab.sshd import Lab
from lab.util import dataset_exists, snapshot_guid, wait_until, write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.events import PlanReady, StageChanged
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request
from zmigrate.engine.plan import Options
from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


def test_the_losers_cleanup_leaves_the_winners_dataset(lab_env: Lab,
                                                       pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    ds = f"{src_pool.name}/data"
    zfs("create", ds)
    write_random_files(src_pool.mountpoint / "data", 48, files=6)
    zfs("snapshot", f"{ds}@s")
    dest = f"{dst_pool.name}/copy"
    hosts = [connect(HostSpec(h)) for h in ("lab-src", "lab-dst", "lab-src", "lab-dst")]
    go = threading.Event()
    planned = threading.Event()
    said: list[str] = []

    def loser_events(event: Any) -> None:
        if isinstance(event, PlanReady):
            planned.set()
            go.wait(120)  # planned while the name was free; runs once the winner writes it
        elif isinstance(event, StageChanged) and event.stage == "cleanup":
            said.append(event.detail)

    # Slow enough that the winner is still receiving while the loser fails and cleans up.
    winner = Job(hosts[0], hosts[1], Request(f"{ds}@s", dest, Options(rate_limit=8 * MiB)))
    loser = Job(hosts[2], hosts[3], Request(f"{ds}@s", dest, Options()), loser_events)
    results: dict[str, Any] = {}

    def run(name: str, job: Job) -> None:
        try:
            results[name] = job.run()
        except ZmigrateError as exc:
            results[name] = exc

    threads = {"loser": threading.Thread(target=run, args=("loser", loser))}
    threads["loser"].start()
    try:
        assert planned.wait(120), results
        threads["winner"] = threading.Thread(target=run, args=("winner", winner))
        threads["winner"].start()
        assert wait_until(lambda: dataset_exists(dest), 60), results
        go.set()
        threads["loser"].join(120)
        assert isinstance(results.get("loser"), ZmigrateError), results
        print(f"\nloser: {results['loser']}; cleanup: {said}")
        assert threads["winner"].is_alive(), "the winner ended before the loser's cleanup"
        assert dataset_exists(dest)
        threads["winner"].join(240)
    finally:
        go.set()
        winner.cancel()
        for t in threads.values():
            t.join(60)
        for h in hosts:
            h.close()
    assert not isinstance(results.get("winner"), Exception), results
    assert snapshot_guid(f"{dest}@s") == snapshot_guid(f"{ds}@s")
    assert any("cannot tell that its receive created it" in s for s in said), said

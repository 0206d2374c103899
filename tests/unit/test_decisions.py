"""One place per decision (docs/architecture.md): each decision's one engine function."""

from __future__ import annotations

from pathlib import Path

from gui.history_data import make_plan, record, synthetic  # the Recorder fed a job's events

from zmigrate.engine.cmdline import below, within
from zmigrate.engine.history import RECENT_RUNS, recent_runs
from zmigrate.engine.hosts import LocalHost, one_connection, same_host
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.units import MiB


def test_same_host_is_one_object_or_one_label() -> None:
    here = LocalHost()
    assert same_host(here, here)
    assert same_host(LocalHost(), LocalHost())  # two connections to this machine
    assert not same_host(LocalHost("lab-src"), LocalHost("lab-dst"))
    assert same_host(HostSpec.parse("this computer"), HostSpec.parse("local"))  # both `local`
    assert same_host(HostSpec.parse("root@nas"), HostSpec.parse("root@nas"))
    assert not same_host(HostSpec.parse("root@nas"), HostSpec.parse("nas"))


def test_one_connection_unless_the_destination_asks_for_sudo_alone() -> None:
    assert one_connection(HostSpec.parse("nas"), HostSpec.parse("nas"))
    assert one_connection(HostSpec.parse("nas", sudo=True), HostSpec.parse("nas", sudo=True))
    assert one_connection(HostSpec.parse("nas", sudo=True), HostSpec.parse("nas"))
    assert not one_connection(HostSpec.parse("nas"), HostSpec.parse("nas", sudo=True))
    assert not one_connection(HostSpec.parse("nas"), HostSpec.parse("backup"))


def test_within_and_below_a_root() -> None:
    assert within("tank/a", "tank/a") and not below("tank/a", "tank/a")
    assert within("tank/a/b", "tank/a") and below("tank/a/b", "tank/a")
    assert not within("tank/ab", "tank/a")  # a sibling sharing a prefix is not inside
    assert not within("tank", "tank/a")
    assert within("/mnt/tank/x", "/mnt/tank") and within("/mnt/tank/x", "/mnt/tank/")
    assert within("/srv", "/") and within("/", "/") and not below("/", "/")
    assert not within("/mnt/tankx", "/mnt/tank")


def test_recent_runs_of_one_copy_or_none(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    for n, dataset in enumerate(("backup/tank/a", "backup/tank/b", "other/x")):
        plan = make_plan(f"tank/{n}@s1", dataset=dataset, key=f"cafe000{n}")
        record(path, plan, synthetic(4, 50 * MiB, dips=False), start=1_000_000.0 + n)
    runs = recent_runs("backup/tank", path=path)
    assert [r.destination_dataset for r in runs] == ["backup/tank/b", "backup/tank/a"]
    assert RECENT_RUNS == 200
    (tmp_path / "broken.sqlite3").write_bytes(b"not a database, but some bytes " * 64)
    assert recent_runs("backup/tank", path=tmp_path / "broken.sqlite3") == []

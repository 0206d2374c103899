"""Clones stay clones: sent from their origin after it, or said to arrive as full copies."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from tests.unit.test_plan import CAPS, dataset, snap
from zmigrate.engine import zfs
from zmigrate.engine.events import Summary
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, Site, make_plan
from zmigrate.engine.tree.planning.entry import SMALL
from zmigrate.engine.tree.planning.plan import TreeEntry, TreeRequest, plan_tree
from zmigrate.engine.tree.running.dataset_job import dataset_options
from zmigrate.engine.tree.running.schedule import depends_on, schedule

DATA = Path(__file__).resolve().parents[1] / "data" / "zfs"
MiB = 2**20


def test_the_inventory_reads_a_clones_origin() -> None:
    """zfs-fuse's `zfs get -Hp -r` of a pool with base@gold and its clone c1 (captured)."""
    found = {d.name: d for d in zfs.build_inventory(zfs.parse_get(
        (DATA / "zfs-fuse" / "get-r-clone.txt").read_text()))}
    assert found["zmtclcap/c1"].origin == "zmtclcap/base@gold"
    assert found["zmtclcap/base"].origin is None and found["zmtclcap"].origin is None


def _clone(name: str, origin: str, own: list[zfs.Snapshot], used: int = MiB) -> zfs.Dataset:
    return dataclasses.replace(dataset(name, own), origin=origin, used=used)


def _tree() -> list[zfs.Dataset]:
    """tank/t with a clone tank/t/a (sorted before its origin) of tank/t/z/base@gold, and a
    clone tank/t/b of tank/other@x, outside the tree."""
    return [dataset("tank/t", [snap("tank/t", "s", 1, 10)]),
            _clone("tank/t/a", "tank/t/z/base@gold", [snap("tank/t/a", "s", 2, 12)]),
            _clone("tank/t/b", "tank/other@x", [snap("tank/t/b", "s", 3, 12)], used=2 * MiB),
            dataset("tank/t/z", [snap("tank/t/z", "s", 4, 10)]),
            dataset("tank/t/z/base", [snap("tank/t/z/base", "gold", 5, 5),
                                      snap("tank/t/z/base", "s", 6, 10)])]


def test_a_clone_goes_after_its_origin_from_it_one_outside_the_tree_in_full() -> None:
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank/t", "bk/t", "s"), _tree(), [],
                     snapshot="s", unmounted=True)
    order = [e.source for e in plan.entries]
    assert order.index("tank/t/a") > order.index("tank/t/z/base")
    by = {e.source: e for e in plan.entries}
    a, b = by["tank/t/a"], by["tank/t/b"]
    assert a.origin == "tank/t/z/base@gold" and a.size == MiB
    assert "a clone of tank/t/z/base@gold: sent from it" in a.reason
    assert b.origin is None and b.size == 10 * MiB
    assert "arrives as an independent copy: its origin tank/other@x is not in this tree, " \
           "+8 MiB" in b.reason
    assert plan.to_json()["datasets"][order.index("tank/t/a")]["origin"] == "tank/t/z/base@gold"


def test_excluded_origin_or_one_newer_than_the_snapshot_means_a_full_copy() -> None:
    host = LocalHost()
    excluded = plan_tree(host, host, TreeRequest("tank/t", "bk/t", "s",
                                                 excludes=("tank/t/z",)),
                         _tree(), [], snapshot="s", unmounted=True)
    a = next(e for e in excluded.entries if e.source == "tank/t/a")
    assert a.origin is None and "is not in this tree" in a.reason
    tree = _tree()
    tree[4] = dataset("tank/t/z/base", [snap("tank/t/z/base", "s", 6, 4),
                                        snap("tank/t/z/base", "gold", 5, 5)])
    newer = plan_tree(host, host, TreeRequest("tank/t", "bk/t", "s"), tree, [],
                      snapshot="s", unmounted=True)
    a = next(e for e in newer.entries if e.source == "tank/t/a")
    assert a.origin is None and "is newer than @s" in a.reason


def test_a_clones_stream_starts_at_its_origin() -> None:
    src = Site(LocalHost("src"), CAPS, _tree())
    dst = Site(LocalHost("dst"), CAPS, [dataset("bk"), dataset("bk/t")])
    p = make_plan(src, dst, "tank/t/a@s", "bk/t/a", Options(history=True,
                  origin="tank/t/z/base@gold"), connect_address="x", port=1)
    (_, receive), (_, send) = p.commands()
    assert "zfs send -I tank/t/z/base@gold tank/t/a@s" in send
    assert "zfs receive bk/t/a" in receive


def test_the_scheduler_waits_for_an_origin_too() -> None:
    clone = TreeEntry("tank/t/a", "bk/t/a", "filesystem", 1, "full",
                      origin="tank/t/z/base@gold")
    base = TreeEntry("tank/t/z/base", "bk/t/z/base", "filesystem", 1, "full")
    assert depends_on(clone, base) and not depends_on(base, clone)
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank/t", "bk/t", "s"), _tree(), [],
                     snapshot="s", unmounted=True)
    started: list[str] = []
    lock = threading.Lock()

    def send_one(i: int, e: TreeEntry) -> Summary:
        with lock:
            started.append(e.source)
        return Summary(e.size, 0.1, 1.0, None, 0, 0, None)

    list(schedule(plan, 4, send_one, threading.Event()))
    assert started.index("tank/t/a") > started.index("tank/t/z/base")


def test_a_clone_cut_midway_resumes_from_its_token_and_the_plan_still_names_its_origin() -> None:
    host = LocalHost()
    dst = [dataset("bk/t", [snap("bk/t", "s", 1, 10)]),
           dataset("bk/t/z", [snap("bk/t/z", "s", 4, 10)]),
           dataset("bk/t/z/base", [snap("bk/t/z/base", "gold", 5, 5),
                                   snap("bk/t/z/base", "s", 6, 10)]),
           dataclasses.replace(dataset("bk/t/a", []), resume_token="1-abc")]
    request = TreeRequest("tank/t", "bk/t", "s", excludes=("tank/t/b",))
    plan = plan_tree(host, host, request, _tree(), dst, snapshot="s", unmounted=True)
    a = next(e for e in plan.entries if e.source == "tank/t/a")
    assert a.resume and a.action == "full" and a.origin == "tank/t/z/base@gold"
    assert "a clone of tank/t/z/base@gold: resumes its interrupted stream" in a.reason
    caps = dataclasses.replace(CAPS, receive_properties=True)
    # The token carries the stream's origin: no `-o origin=` and no origin base to plan from.
    options = dataset_options(request, caps, plan, a)
    assert options.origin is None
    # A small stream's buffer is no bigger than SMALL: several of them run at once.
    assert options.buffer_size == min(request.options.buffer_size, SMALL)
    assert all(name != "origin" for name, _ in options.properties)

"""Trees on the lab: a pool's dataset tree copied dataset by dataset between two real sshd hosts
(zfs-fuse pools, real mbuffer), caught up, cut over, interrupted and resumed."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from lab.losses import LossWatch
from lab.sshd import Lab
from lab.util import (
    ZFS,
    Run,
    base_and_clones,
    dataset_exists,
    finish,
    run,
    snapshot_guid,
    start,
    wait_until,
    write_random_files,
    zfs,
    zmigrate,
)
from lab.zfsfuse import Pool

from zmigrate.engine.events import PlanReady
from zmigrate.engine.plan import Options, Plan
from zmigrate.engine.tree import TreeJob, TreeRequest, snapshot_name

pytestmark = pytest.mark.lab

# root, two children with grandchildren, one plain child: 6 datasets over 3 levels.
TREE = ("t", "t/a", "t/a/x", "t/b", "t/b/y", "t/c")


def _states(events: list[dict[str, Any]]) -> dict[str, str]:
    """The last state of each dataset, from the `dataset` events."""
    return {e["dataset"]: e["state"] for e in events if e["event"] == "dataset"}


def _snapshots(ds: str) -> list[str]:
    out = zfs("list", "-H", "-t", "snapshot", "-o", "name", "-s", "creation", "-r", ds)
    return [line.split("@", 1)[1] for line in out.splitlines() if line.split("@")[0] == ds]


def _referenced(ds: str) -> int:
    return int(zfs("get", "-Hp", "-o", "value", "referenced", ds).strip())


def _local(ds: str) -> dict[str, str]:
    out = zfs("get", "-H", "-s", "local,received", "-o", "property,value", "all", ds)
    return dict(line.split("\t", 1) for line in out.splitlines())


@pytest.fixture
def tree(pools: tuple[Pool, Pool]) -> tuple[Pool, Pool, str]:
    """On the source pool: the tree TREE, a user property on t/a, compression on t/b, older
    snapshots on t/a and t/b/y, 1-3 MiB of files in each dataset."""
    src, dst = pools
    for rel in TREE:
        zfs("create", f"{src.name}/{rel}")
    for rel in TREE:
        write_random_files(src.mountpoint / rel / "files", 2, files=3)
    zfs("set", "com.example:tag=blue", f"{src.name}/t/a")
    zfs("set", "compression=gzip", f"{src.name}/t/b")
    zfs("snapshot", f"{src.name}/t/a@old1")
    zfs("snapshot", f"{src.name}/t/b/y@old1")
    write_random_files(src.mountpoint / "t/a/more", 1, files=2)
    zfs("snapshot", f"{src.name}/t/a@old2")
    return src, dst, f"{src.name}/t"


def _copy_matches(src: str, dst: str, snap: str, rels: tuple[str, ...]) -> None:
    for rel in rels:
        s, d = src + rel, dst + rel
        assert snapshot_guid(f"{d}@{snap}") == snapshot_guid(f"{s}@{snap}"), rel
        src_snaps = _snapshots(s)
        want = src_snaps[:src_snaps.index(snap) + 1]
        assert [x for x in _snapshots(d) if x in want] == want, rel


def test_full_tree_with_history_and_properties(lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    src, dst, root = tree
    zfs("snapshot", "-r", f"{root}@s1")
    # One at a time: the order datasets start in is what this test reads.
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{dst.name}/copy", "--json",
                     "--buffer", "16M", "--no-history", "--parallel", "1")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    rels = tuple(rel[1:] for rel in TREE)  # "", "/a", "/a/x" ...
    assert _states(events) == {root + rel: "verified" for rel in rels}
    # Parents before children, each dataset one step of its own.
    sending = [e["dataset"] for e in events if e["event"] == "dataset" and e["state"] == "sending"]
    assert sending == [root + rel for rel in rels]
    copy = f"{dst.name}/copy"
    _copy_matches(root, copy, "s1", rels)
    assert _snapshots(f"{copy}/a") == ["old1", "old2", "s1"]
    assert _snapshots(f"{copy}/b/y") == ["old1", "s1"]
    assert _local(f"{copy}/a")["com.example:tag"] == "blue"
    assert _local(f"{copy}/b")["compression"] == "gzip"
    done = events[-1]
    assert done["event"] == "done" and done["bytes"] > 6 * 1024 * 1024
    assert done["datasets"] == {root + rel: "verified" for rel in rels}
    # zfs-fuse cannot receive unmounted: the copy's root is set mountpoint=none at once, so no
    # child mounts (a child's mountpoint directory would modify its parent's copy).
    assert zfs("get", "-H", "-o", "value", "mountpoint", copy).strip() == "none"


def test_catch_up_sends_deltas_brings_new_children_and_reports_removed_ones(
        lab: Lab, tree: tuple[Pool, Pool, str], loss_watch: type[LossWatch]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                     "--buffer", "16M", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    first = next(e for e in r.events if e["event"] == "tree_plan")["snapshot"]
    assert first.startswith("zmigrate-")
    # Changes on the source: new files, a new child, a removed child.
    write_random_files(src.mountpoint / "t/a/new", 1, files=2)
    zfs("create", f"{root}/d")
    write_random_files(src.mountpoint / "t/d", 1, files=2)
    # zfs-fuse may call a dataset busy for a moment after a send: retry until it goes.
    assert wait_until(lambda: run([ZFS, "destroy", "-rf", f"{root}/c"], check=False).returncode
                      == 0, 20, 0.2)
    # The snapshot name has one-second resolution: the next run must get a new one.
    assert wait_until(lambda: snapshot_name() != first, 3)
    watch = loss_watch(dst.name)
    watch.start()
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                     "--buffer", "16M", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    watch.check_json(r.stdout)  # a catch-up destroys nothing, and shows nothing
    events = r.events
    plan = next(e for e in events if e["event"] == "tree_plan")
    assert plan["destroys"] == []
    second = plan["snapshot"]
    assert second != first
    actions = {d["source"]: d["action"] for d in plan["datasets"]}
    assert actions[f"{root}/d"] == "full"
    assert actions[f"{root}/a"] == "incremental"
    assert plan["vanished"] == [f"{copy}/c"]
    assert _states(events)[f"{root}/d"] == "verified"
    for rel in ("", "/a", "/d"):  # t changed too: t/d's mountpoint is made in it
        assert snapshot_guid(f"{copy}{rel}@{second}") == snapshot_guid(f"{root}{rel}@{second}")
    for rel in ("/a/x", "/b", "/b/y"):  # nothing written: left at the first snapshot
        assert actions[f"{root}{rel}"] == "skip"
        assert _snapshots(f"{copy}{rel}")[-1] == first
        assert second not in _snapshots(f"{root}{rel}")
    assert _snapshots(f"{copy}/a")[-2:] == [first, second]
    assert dataset_exists(f"{copy}/c"), "a dataset gone from the source is never destroyed"
    assert f"{copy}/c" in events[-1]["vanished"]
    # zmigrate keeps the snapshots it made on the source: the base of the next catch-up.
    assert first in _snapshots(f"{root}/a") and second in _snapshots(f"{root}/a")


def test_excluded_child_and_its_descendants_stay_out(lab: Lab,
                                                     tree: tuple[Pool, Pool, str]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                     "--exclude", f"{root}/b", "--json", "--buffer", "16M", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    plan = next(e for e in r.events if e["event"] == "tree_plan")
    assert plan["excluded"] == [f"{root}/b", f"{root}/b/y"]
    # One snapshot per picked dataset, not -r, when children are left out.
    assert "-r" not in plan["snapshot_command"].split()
    assert not dataset_exists(f"{copy}/b")
    assert plan["snapshot"] not in _snapshots(f"{root}/b"), "no snapshot taken on excluded ones"
    for rel in ("", "/a", "/a/x", "/c"):
        assert dataset_exists(copy + rel)


def test_interrupted_tree_rerun_sends_only_what_was_not_complete(
        lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    src, dst, root = tree
    write_random_files(src.mountpoint / "t/b/big", 40, files=4)
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/copy"
    # One at a time: interrupted in dataset k, datasets 1..k-1 are complete.
    args = ["send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--json", "--buffer", "16M",
            "--no-history", "--parallel", "1"]
    proc = start(lab.env(), *args, "--bwlimit", "8M")
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    for line in proc.stdout:
        seen.append(json.loads(line))
        e = seen[-1]
        if e["event"] == "progress" and _states(seen).get(f"{root}/b") == "sending" \
                and e["done"] > 4 * 1024 * 1024:
            proc.send_signal(signal.SIGINT)
            break
    rest = finish(proc, 120)
    seen += rest.events
    assert rest.returncode == 130, rest.stderr
    before = _states(seen)
    assert before[root] == "verified" and before[f"{root}/a"] == "verified"
    assert before[f"{root}/b"] == "failed"
    r = lab.zmigrate(*args)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "tree_plan")
    actions = {d["source"]: d["action"] for d in plan["datasets"]}
    assert actions[root] == actions[f"{root}/a"] == actions[f"{root}/a/x"] == "skip"
    assert actions[f"{root}/b"] == "full"
    sent = [e["dataset"] for e in events if e["event"] == "dataset" and e["state"] == "sending"]
    assert sent == [f"{root}/b", f"{root}/b/y", f"{root}/c"]
    _copy_matches(root, copy, "s1", tuple(rel[1:] for rel in TREE))


def test_mountpoint_collision_is_refused_before_anything_runs(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path) -> None:
    src, dst, root = tree
    # t/c mounts at a directory of its own (a local property, sent with -p); on the destination
    # host that directory is in use - both lab hosts are this machine, where the source has it.
    busy = tmp_path / "srv-data"
    zfs("set", f"mountpoint={busy}", f"{root}/c")
    assert any(busy.iterdir())
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/copy"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--json",
                     "--no-history")
    assert r.returncode == 1
    error = r.events[-1]
    assert error["event"] == "error"
    assert f"{copy}/c would mount on {busy}" in error["message"]
    # Its own mountpoint travels with it: no mount root would move it on this zfs.
    assert error["fix"].startswith(f"{root}/c's own mountpoint is set on it"), error
    assert not dataset_exists(copy), "nothing ran"


def test_a_catch_up_refused_after_its_snapshot_was_taken_ahead_leaves_none(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path) -> None:
    """On zfs-fuse a catch-up's snapshot is taken (and measured) while the copy is read
    (tree_ahead). When the plan then refuses - a new child that would mount on a directory in
    use - the snapshot taken ahead is taken back: the source is left as it was."""
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    zfs("snapshot", "-r", f"{root}@s1")
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    # A new child mounted at a directory of its own (sent with -p): in use on the destination
    # host, which is this machine, where the source has it.
    zfs("create", f"{root}/n")
    write_random_files(src.mountpoint / "t/n", 1, files=1)
    busy = tmp_path / "in-use"
    zfs("set", f"mountpoint={busy}", f"{root}/n")
    assert any(busy.iterdir())
    before = {rel: _snapshots(root + rel) for rel in ("", "/a", "/b/y", "/n")}
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                     "--no-history")
    assert r.returncode == 1, r.stderr + r.stdout
    events = r.events
    assert f"{copy}/n would mount on {busy}" in events[-1]["message"]
    said = [e.get("detail", "") for e in events if e["event"] == "stage"]
    assert any(d.startswith("taking the snapshot @") for d in said), said  # it was taken ahead
    assert {rel: _snapshots(root + rel) for rel in before} == before, "taken back"


def test_a_tree_needs_a_snapshot_or_snapshot_now(lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    _src, dst, root = tree
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{dst.name}/copy")
    assert r.returncode == 2
    assert "--snapshot to take one now" in r.stderr


def test_dry_run_prints_each_dataset_and_its_commands(lab: Lab,
                                                      tree: tuple[Pool, Pool, str]) -> None:
    _src, dst, root = tree
    zfs("snapshot", "-r", f"{root}@s1")
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{dst.name}/copy", "--dry-run")
    assert r.returncode == 0, r.stderr
    for rel in TREE:
        name = f"{root}{rel[1:]}"
        assert f"# {name} -> {dst.name}/copy{rel[1:]}: full" in r.stdout
        assert f"{name}@s1" in r.stdout
    assert "zfs send -p" in r.stdout
    assert not dataset_exists(f"{dst.name}/copy")


def test_dry_run_with_a_snapshot_to_take_prints_the_commands_planned_ahead(
        lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    """The snapshot is still to be taken: each dataset's exact commands are printed, planned as
    if it existed and marked so (as the Review page shows them), and nothing is taken."""
    _src, dst, root = tree
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{dst.name}/copy", "--snapshot",
                     "--dry-run", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    snap = re.search(r"planned as if @(zmigrate-[0-9-]+) existed: it is taken first", r.stdout)
    assert snap is not None, r.stdout
    for rel in TREE:
        name = f"{root}{rel[1:]}"
        assert f"# {name} -> {dst.name}/copy{rel[1:]}: full" in r.stdout
        assert f"{name}@{snap.group(1)}" in r.stdout  # its zfs send names the coming snapshot
    assert r.stdout.count(f"planned as if @{snap.group(1)}") == len(TREE)
    assert snap.group(1) not in _snapshots(root)  # nothing taken
    assert not dataset_exists(f"{dst.name}/copy")


def test_final_sync_leaves_the_source_read_only_and_is_recorded_as_one_job(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path,
        loss_watch: type[LossWatch]) -> None:
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}

    def send(*extra: str) -> Run:
        return zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                        "--buffer", "16M", *extra)

    r = send()
    assert r.returncode == 0, r.stderr + r.stdout
    write_random_files(src.mountpoint / "t/b/late", 1, files=2)
    first = _snapshots(f"{root}/b")[-1]
    assert wait_until(lambda: snapshot_name() != first, 3)
    # Nothing lost unseen on either host: the final sync's list is empty (its run says none),
    # it hides nothing of the source (read-only, still mounted) and destroys nothing.
    watches = [loss_watch(src.name), loss_watch(dst.name)]
    for w in watches:
        w.start()
    r = send("--final")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "Will be destroyed" not in r.stderr and "Will be hidden" not in r.stderr, r.stderr
    for w in watches:
        w.check([])
    assert "final sync: the source has been read-only since" in r.stdout
    for rel in ("", "/a", "/a/x", "/b", "/b/y", "/c"):
        # zfs-fuse's `zfs get` shows readonly as "off temporary" here while the file system
        # refuses writes: the refusal is what counts.
        with pytest.raises(OSError, match="Read-only file system"):
            (src.mountpoint / "t" / rel.lstrip("/") / "after-cutover").write_bytes(b"x")
        last = _snapshots(root + rel)[-1]
        assert snapshot_guid(f"{copy}{rel}@{last}") == snapshot_guid(f"{root}{rel}@{last}")
    h = zmigrate(env, "history", "--json", timeout=60)
    assert h.returncode == 0, h.stderr
    jobs = h.events
    assert [j["kind"] for j in jobs] == ["tree", "tree"]
    assert [j["outcome"] for j in jobs] == ["verified", "verified"]
    assert jobs[0]["summary"]["extra"]["datasets"][f"{root}/b"] == "verified"


def test_parallel_sends_small_siblings_at_once_parents_first(
        lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    src, dst, root = tree
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/copy"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--json",
                     "--buffer", "16M", "--no-history", "--parallel", "3")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    rels = tuple(rel[1:] for rel in TREE)
    assert _states(events) == {root + rel: "verified" for rel in rels}
    # Each dataset starts only after its parent arrived; some siblings overlap; every one is
    # verified after all have arrived (one read per host).
    order = [(e["dataset"], e["state"]) for e in events if e["event"] == "dataset"
             and e["state"] in ("sending", "received")]
    for rel in rels[1:]:
        child, parent = root + rel, (root + rel).rsplit("/", 1)[0]
        assert order.index((parent, "received")) < order.index((child, "sending")), rel
    states = [e["state"] for e in events if e["event"] == "dataset"]
    assert states.index("verified") > max(i for i, s in enumerate(states) if s == "received")
    in_flight = peak = 0
    for _, state in order:
        in_flight += 1 if state == "sending" else -1
        peak = max(peak, in_flight)
    assert 2 <= peak <= 3
    _copy_matches(root, copy, "s1", rels)
    assert events[-1]["event"] == "done" and events[-1]["bytes"] > 6 * 1024 * 1024


def test_review_shows_the_exact_commands_of_a_snapshot_taken_now(
        lab_hosts: tuple[Any, Any], tree: tuple[Pool, Pool, str]) -> None:
    """Before the snapshot exists, each dataset's commands are planned as if it did; the run
    then runs those very commands (the listener's port aside, picked when each one starts, and
    over private its key directories' random names, made for each step)."""
    src, dst, root = tree
    shost, dhost = lab_hosts
    job = TreeJob(shost, dhost, TreeRequest(root, f"{dst.name}/copy", None,
                                            options=Options(buffer_size=16 * 1024 * 1024)))
    plan = job.prepare()
    assert plan.snapshot_command and plan.snapshot.startswith("zmigrate-")
    reviewed = {e.source: job.dataset_plan(e) for e in plan.entries}
    for e in plan.entries:
        lines = " ".join(line for _h, line in reviewed[e.source].commands())
        assert f"{e.source}@{plan.snapshot}" in lines, lines
    assert "@old1" in " ".join(x for _h, x in reviewed[f"{root}/a"].commands())  # its history
    ran: dict[str, Plan] = {}
    job.subscribe(lambda ev: ran.setdefault(ev.plan.source_snapshot.split("@")[0], ev.plan)
                  if isinstance(ev, PlanReady) else None)
    job.run()

    def sans_port(p: Plan) -> list[str]:
        # Only where it is a port (ADDR:PORT): its digits may also occur in the snapshot's
        # timestamp (port 26112 in zmigrate-20261123-...).
        return [re.sub(r"zmigrate-tls-[0-9a-f]{24}", "zmigrate-tls-KEYS",
                       re.sub(rf":{p.port}\b", ":PORT", line)) for _h, line in p.commands()]

    assert {k: sans_port(p) for k, p in ran.items()} == \
        {k: sans_port(p) for k, p in reviewed.items()}
    _copy_matches(root, f"{dst.name}/copy", plan.snapshot, tuple(rel[1:] for rel in TREE))


@pytest.mark.parametrize("host", ["lab-src", "local"])
def test_old_pool_to_new_pool_on_one_host(lab: Lab, tree: tuple[Pool, Pool, str],
                                          host: str) -> None:
    """The home-lab move from an old pool to a new one in the same box: over one SSH host
    (lab-src to lab-src) or on this computer, the stream goes through one local pipeline."""
    src, dst, root = tree
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/moved"
    r = lab.zmigrate("send", "-r", f"{host}:{root}@s1", f"{host}:{copy}", "--json",
                     "--buffer", "16M")
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    rels = tuple(rel[1:] for rel in TREE)
    plans = [e for e in events if e["event"] == "plan"]
    assert plans and all(p["transport"] == "local" for p in plans), plans
    assert events[-1]["datasets"] == {root + rel: "verified" for rel in rels}
    _copy_matches(root, copy, "s1", rels)
    assert _snapshots(f"{copy}/a") == ["old1", "old2", "s1"]
    assert _local(f"{copy}/b")["compression"] == "gzip"


def test_a_pool_root_whose_own_mountpoint_would_mount_over_itself_is_refused_first(
        lab: Lab, make_pool: Any) -> None:
    """`send -r OLDPOOL NEWPOOL` on one host whose zfs mounts what it receives (zfs-fuse): the
    old pool's root has a mountpoint of its own (zpool create -m: set on it, so -p carries
    it), and the copy's root would mount where the old pool is mounted. Refused before
    anything runs, naming the dataset whose mountpoint travels: it once failed halfway, the
    new pool unmounted and its root received, and "run it again" failed the same way."""
    old, new = make_pool("old"), make_pool("new")
    zfs("create", f"{old.name}/home")
    write_random_files(old.mountpoint / "home", 1, files=1)
    r = lab.zmigrate("send", "-r", f"lab-src:{old.name}", f"lab-dst:{new.name}", "--snapshot",
                     "--json", "--no-history")
    assert r.returncode == 1, r.stdout + r.stderr
    error = r.events[-1]
    assert error["reason"] == "mount_collision", error
    assert f"{new.name} would mount on {old.mountpoint}" in error["message"], error
    assert error["fix"].startswith(f"{old.name}'s own mountpoint is set on it"), error
    assert "another host" in error["fix"], error
    assert _snapshots(old.name) == [], "refused before the snapshot was taken"
    assert _snapshots(new.name) == [] and not dataset_exists(f"{new.name}/home")
    assert zfs("get", "-H", "-o", "value", "mounted,mountpoint", new.name).split() \
        == ["yes", str(new.mountpoint)], "the new pool as it was"


def test_mount_root_on_a_zfs_without_receive_o_checks_where_the_root_lands_first(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path) -> None:
    """zfs-fuse cannot set the mountpoint as it receives: the copy's root first mounts at its
    own (sent) mountpoint, so that directory is checked too, before anything runs."""
    src, dst, root = tree
    busy = tmp_path / "srv-root"
    zfs("set", f"mountpoint={busy}", root)
    assert any(busy.iterdir())
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/copy"
    r = lab.zmigrate("send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}", "--json",
                     "--no-history", "--mount-root", str(tmp_path / "restored"))
    assert r.returncode == 1, r.stdout + r.stderr
    error = r.events[-1]
    assert error["event"] == "error"
    assert f"{copy} would mount on {busy}" in error["message"]
    assert "no zfs receive -u" in error["fix"] and "another host" in error["fix"], error
    assert not dataset_exists(copy), "nothing ran"


def test_the_final_syncs_read_only_window_is_predicted_and_then_measured(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path) -> None:
    """A full copy and a catch-up time the tree; the final sync predicts its read-only window
    before the source turns read-only, and `done` reports the real one: they agree (within
    40 % or 1.5 s)."""
    src, _dst, root = tree
    copy = f"{_dst.name}/copy"
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}

    def send(*extra: str) -> list[dict[str, Any]]:
        r = zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                     "--buffer", "16M", "--json", *extra)
        assert r.returncode == 0, r.stderr + r.stdout
        return r.events

    send()
    # Two catch-ups, as a user's before their final sync: each stream's fixed cost is the
    # least of theirs (one slowed by a busy machine would count once per stream).
    for day in ("day1", "day1b"):
        write_random_files(src.mountpoint / "t/a" / day, 4, files=2)
        last = _snapshots(root)[-1]
        assert wait_until(lambda was=last: snapshot_name() != was, 3)
        send()
    before = {rel: _referenced(f"{src.name}/{rel}") for rel in ("t", "t/b", "t/c")}
    for rel in before:
        write_random_files(src.mountpoint / rel / "day2", 4, files=2)
    # What is written shows in `referenced` once its transaction group is on disk (seconds
    # later on zfs-fuse): the prediction reads what the pool says, as a user's hours later.
    assert wait_until(lambda: all(_referenced(f"{src.name}/{rel}") > before[rel] + 3 * 2**20
                                  for rel in before), 60, 0.5)
    last = _snapshots(root)[-1]
    assert wait_until(lambda: snapshot_name() != last, 3)
    ahead = send("--final", "--dry-run")[0]["readonly_window"]  # said, nothing changed
    assert ahead["datasets"] == 6 and ahead["changed"] >= 12 * 2**20, ahead
    assert _snapshots(root)[-1] == last
    (src.mountpoint / "t" / "still-writable").write_bytes(b"x")
    t0 = time.monotonic()
    events = send("--final")
    took = time.monotonic() - t0
    kinds = [e["event"] for e in events]
    predicted = next(e for e in events if e["event"] == "readonly_window")
    assert kinds.index("readonly_window") < kinds.index("tree_plan")  # said before it ran
    assert predicted["datasets"] == 6 and predicted["at_least"] is True  # zfs-fuse: no written
    # t/b carries t/b/y (one -R -I stream); t/a goes alone: the catch-ups before sent only t/a
    # (the rest was left as it was), so its base is newer than the others'.
    assert predicted["streams"] == 5
    assert predicted["changed"] >= 12 * 2**20
    done = next(e for e in events if e["event"] == "done")
    real = done["readonly_seconds"]
    print(f"\nREADONLY WINDOW (lab): predicted {predicted['seconds']:.1f} s, real {real:.1f} s "
          f"({predicted['changed'] / 2**20:.1f} MiB changed in {predicted['datasets']} datasets)"
          f"; predicted phases {predicted['phases']}, real {done.get('phases')}")
    # The window is real (the source was read-only for a while, within the run) and the
    # prediction is one to plan with: on the lab 1.4-4 s, predicted within 0.1-0.9 s in runs
    # alone (3.0 s predicted 4.8 s in a loaded CI run, from one catch-up's slow stream). 40 %
    # (1.5 s at least) keeps a loaded machine's spread and still fails a prediction of nothing
    # or of twice the window.
    assert 0.5 < real < took, (real, took)
    assert abs(predicted["seconds"] - real) <= max(0.4 * real, 1.5), predicted
    assert abs(ahead["seconds"] - predicted["seconds"]) <= max(0.4 * real, 1.5)
    shown = zmigrate(env, "history", "show", "4", timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert f"read-only    the source, {real:.1f} s (final sync" in shown.stdout, shown.stdout


def test_a_tree_goes_into_a_new_pools_root_as_the_pool_itself(
        lab: Lab, tree: tuple[Pool, Pool, str], make_pool: Any,
        loss_watch: type[LossWatch]) -> None:
    """`send -r SRC/t NEWPOOL`: t/a lands as NEWPOOL/a and t's own snapshots and properties on
    NEWPOOL itself (as `zfs send -R | zfs receive -Fdu` would); a catch-up goes into it again.
    A pool root holding a file is refused before anything runs."""
    src, new, root = tree
    zfs("set", "com.example:root=yes", root)
    watch = loss_watch(new.name)
    watch.start()
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{new.name}", "--snapshot",
                     "--json", "--buffer", "16M", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    watch.check_json(r.stdout)
    events = r.events
    plan = next(e for e in events if e["event"] == "tree_plan")
    # The pool's root takes the copy as itself: its (empty) content is named as replaced.
    assert [(x["kind"], x["name"]) for x in plan["destroys"]] == [("content", new.name)]
    first = plan["snapshot"]
    assert plan["datasets"][0]["into"] is True, plan["datasets"][0]
    assert all(s == "verified" for s in _states(events).values()), _states(events)
    assert snapshot_guid(f"{new.name}@{first}") == snapshot_guid(f"{root}@{first}")
    for rel in TREE[1:]:
        copy = f"{new.name}/{rel[2:]}"
        assert snapshot_guid(f"{copy}@{first}") == snapshot_guid(f"{src.name}/{rel}@{first}")
    assert not dataset_exists(f"{new.name}/t")
    assert _local(new.name).get("com.example:root") == "yes"
    assert _local(f"{new.name}/a").get("com.example:tag") == "blue"
    # A catch-up: incremental into the pool root and its children.
    write_random_files(src.mountpoint / "t" / "more", 1, files=1)
    assert wait_until(lambda: snapshot_name() != first, 3)
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{new.name}", "--snapshot",
                     "--json", "--buffer", "16M", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    second = next(e for e in r.events if e["event"] == "tree_plan")["snapshot"]
    assert snapshot_guid(f"{new.name}@{second}") == snapshot_guid(f"{root}@{second}")

    used = make_pool("used")
    (used.mountpoint / "keep.txt").write_text("mine\n")
    before = _snapshots(root)
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{used.name}", "--snapshot",
                     "--json", "--no-history")
    assert r.returncode != 0
    error = next(e for e in r.events if e["event"] == "error")
    assert error["reason"] == "pool_root", error
    assert "is a pool root that is not empty: it holds 1 file(s) or folder(s)" in error["message"]
    assert _snapshots(root) == before  # refused before the snapshot was taken
    assert (used.mountpoint / "keep.txt").read_text() == "mine\n"


def _origin(ds: str) -> str:
    return zfs("get", "-H", "-o", "value", "origin", ds).strip()


def _used(ds: str) -> int:
    return int(zfs("get", "-Hp", "-o", "value", "used", ds).strip())


@pytest.mark.parametrize("parallel", ["1", "3"])
def test_clones_arrive_as_clones_of_the_copied_origin_and_catch_up(
        lab: Lab, pools: tuple[Pool, Pool], parallel: str) -> None:
    """t/base@gold (4 MiB) and two clones of it, sorted before it (t/a, t/b; t/b with data
    and a snapshot of its own): each arrives as a clone of the copy's @gold, using the space
    the source uses, not a full copy; a catch-up afterwards sends each one's delta."""
    src, dst = pools
    root = base_and_clones(src.name, src.mountpoint, "t", ("a", "b"), 4)
    write_random_files(src.mountpoint / "t" / "b" / "own", 1, files=1)
    zfs("snapshot", f"{root}/b@own")
    copy = f"{dst.name}/copy"
    dry = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                       "--dry-run", "--no-history")
    assert dry.returncode == 0, dry.stderr + dry.stdout
    for clone in ("a", "b"):  # the plan as printed names each clone's origin
        assert re.search(rf"{root}/{clone}\b.*a clone of {root}/base@gold", dry.stdout), \
            dry.stdout
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                     "--buffer", "16M", "--no-history", "--parallel", parallel)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "tree_plan")
    origins = {d["source"]: d["origin"] for d in plan["datasets"]}
    assert origins[f"{root}/a"] == origins[f"{root}/b"] == f"{root}/base@gold"
    assert all(s == "verified" for s in _states(events).values()), _states(events)
    for clone in ("a", "b"):
        assert _origin(f"{copy}/{clone}") == f"{copy}/base@gold"
        # Its own data only: far below the 4 MiB of the origin it shares.
        assert _used(f"{copy}/{clone}") <= _used(f"{root}/{clone}") + 512 * 1024
    assert snapshot_guid(f"{copy}/b@own") == snapshot_guid(f"{root}/b@own")
    first = plan["snapshot"]
    for rel in ("base", "a", "b"):
        write_random_files(src.mountpoint / "t" / rel / "later", 1, files=1)
    assert wait_until(lambda: snapshot_name() != first, 3)
    r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                     "--buffer", "16M", "--no-history", "--parallel", parallel)
    assert r.returncode == 0, r.stderr + r.stdout
    plan = next(e for e in r.events if e["event"] == "tree_plan")
    second = plan["snapshot"]
    for rel in ("/base", "/a", "/b"):
        assert snapshot_guid(f"{copy}{rel}@{second}") == snapshot_guid(f"{root}{rel}@{second}")
    # t itself was not written to: left at the first snapshot, on both sides.
    assert next(d for d in plan["datasets"] if d["source"] == root)["action"] == "skip"
    assert second not in _snapshots(root) and _snapshots(copy)[-1] == first


def test_a_catch_up_sends_only_what_changed_a_changed_subtree_in_one_stream(
        lab: Lab, tree: tuple[Pool, Pool, str]) -> None:
    """After the first copy, files change in t/a, t/a/x and t/c, and another tool snapshots
    t/b. zfs-fuse cannot say what was written, so the catch-up takes its snapshot, finds t and
    t/b/y unchanged (an empty increment), removes the snapshot it just took from them and leaves
    them at the first one; t/a goes with t/a/x in one job (zfs send -R -I), t/c alone, and t/b
    too, to carry the other tool's snapshot. With t/b excluded and only t/a written to, t/a
    alone goes, without the root. With only t/c written to, the run's snapshot is taken back from
    the five others at once and t/c goes alone."""
    src, dst, root = tree
    copy = f"{dst.name}/copy"

    def send(*extra: str) -> list[dict[str, Any]]:
        assert wait_until(lambda: snapshot_name() not in "".join(_snapshots(root)), 3)
        r = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                         "--json", "--buffer", "16M", "--no-history", *extra)
        assert r.returncode == 0, r.stderr + r.stdout
        return r.events

    first = next(e for e in send() if e["event"] == "tree_plan")["snapshot"]
    for rel in ("t/a/later", "t/a/x/later", "t/c/later"):
        write_random_files(src.mountpoint / rel, 1, files=1)
    zfs("snapshot", f"{root}/b@other-tool")
    dry = lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot", "--json",
                       "--dry-run", "--no-history")
    assert dry.returncode == 0, dry.stderr + dry.stdout
    ahead = next(e for e in dry.events if e["event"] == "tree_plan")
    assert ahead["measures_empty"] is True, ahead  # said before: this plan may still shrink
    assert "each incremental is measured" in ahead["description"]
    events = send()
    plan = next(e for e in events if e["event"] == "tree_plan")
    second = plan["snapshot"]
    by = {d["source"]: d for d in plan["datasets"]}
    for rel in ("", "/b/y"):
        assert by[root + rel]["action"] == "skip", by[root + rel]
        assert by[root + rel]["reason"].startswith(f"unchanged since @{first}")
        assert second not in _snapshots(root + rel), "the run's empty snapshot is removed"
        assert _snapshots(copy + rel)[-1] == first
    assert by[f"{root}/a"]["replicate"] is True and by[f"{root}/a"]["action"] == "incremental"
    assert by[f"{root}/a/x"]["carried_by"] == f"{root}/a"
    assert by[f"{root}/c"]["carried_by"] is None and not by[f"{root}/c"]["replicate"]
    assert by[f"{root}/b"]["action"] == "incremental" and by[f"{root}/b"]["carried_by"] is None
    assert _snapshots(f"{copy}/b")[-3:] == [first, "other-tool", second]
    assert "catch up in one replication stream (zfs send -R -I)" in plan["description"]
    jobs = [e for e in events if e["event"] == "plan"]
    assert len(jobs) == 3, jobs  # t/a with t/a/x, t/b, t/c
    replicated = next(j for j in jobs if j["replicate"])
    assert first in str(replicated["base"]) and "-R" in replicated["send_flags"]
    states = _states(events)
    assert {states[root + rel] for rel in ("", "/b/y")} == {"skipped"}, states
    assert {states[root + rel] for rel in ("/a", "/a/x", "/b", "/c")} == {"verified"}, states
    assert any("2 dataset(s) unchanged since the copy's newest snapshot" in e.get("detail", "")
               for e in events if e["event"] == "stage"), "the run says what it left"
    counts = events[-1]["remote_commands"]
    print(f"\nREMOTE COMMANDS of a 6-dataset catch-up (4 to send): {counts}")
    # 13 on the source and 9 on the destination today over tcp: the unchanged two cost nothing,
    # the four go in three streams; a budget that fails if each dataset gets its own round
    # trips again. Over private each stream's keys take one more a host (handed to both at once).
    keys = len(jobs) if jobs[0]["transport"] == "private" else 0
    assert counts["source"] <= 16 + keys and counts["destination"] <= 12 + keys, counts
    _copy_matches(root, copy, second, ("/a", "/a/x", "/b", "/c"))
    _copy_matches(root, copy, first, ("", "/b/y"))

    write_random_files(src.mountpoint / "t/a/again", 1, files=1)
    events = send("--exclude", f"{root}/b")
    plan = next(e for e in events if e["event"] == "tree_plan")
    third = plan["snapshot"]
    by = {d["source"]: d for d in plan["datasets"]}
    assert f"{root}/b" not in by and by[f"{root}/a"]["action"] == "incremental"
    assert {rel: by[root + rel]["action"] for rel in ("", "/a/x", "/c")} == dict.fromkeys(
        ("", "/a/x", "/c"), "skip")
    assert len([e for e in events if e["event"] == "plan"]) == 1  # t/a alone
    assert _states(events)[f"{root}/a"] == "verified"
    _copy_matches(root, copy, third, ("/a",))
    assert third not in _snapshots(f"{copy}/b") and third not in _snapshots(f"{root}/b")

    # Most increments empty (only t/c written to): the tree's snapshot is destroyed at once
    # (destroy -r) and taken again on t/c alone.
    write_random_files(src.mountpoint / "t/c/again", 1, files=1)
    events = send()
    plan = next(e for e in events if e["event"] == "tree_plan")
    fourth = plan["snapshot"]
    actions = {d["source"]: d["action"] for d in plan["datasets"]}
    assert actions.pop(f"{root}/c") == "incremental" and set(actions.values()) == {"skip"}
    assert any("5 dataset(s) unchanged since the copy's newest snapshot" in e.get("detail", "")
               for e in events if e["event"] == "stage")
    assert [rel for rel in TREE if fourth in _snapshots(f"{src.name}/{rel}")] == ["t/c"]
    assert _states(events)[f"{root}/c"] == "verified"
    _copy_matches(root, copy, fourth, ("/c",))


def test_a_copy_with_its_root_mounted_takes_catch_ups_and_the_final_sync(
        lab: Lab, tree: tuple[Pool, Pool, str], tmp_path: Path) -> None:
    """`--mount-root`: the copy is mounted (nobody writes to it), then caught up twice and
    finally synced: each incremental is taken, none refused as "destination modified"."""
    src, dst, root = tree
    copy = f"{dst.name}/copy"
    where = tmp_path / "restored"

    def send(*extra: str) -> Any:
        return lab.zmigrate("send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                            "--buffer", "16M", "--no-history", "--mount-root", str(where),
                            *extra)

    r = send()
    assert r.returncode == 0, r.stderr + r.stdout
    assert zfs("get", "-H", "-o", "value", "mounted", copy).strip() == "yes"
    # Set as each arrived, before its children mounted in it: nothing wrote to it since.
    with pytest.raises(OSError, match="Read-only file system"):
        (where / "mine").write_bytes(b"x")
    for n in range(2):
        write_random_files(src.mountpoint / f"t/a/more{n}", 1, files=1)
        write_random_files(src.mountpoint / f"t/more{n}", 1, files=1)
        last = _snapshots(root)[-1]
        assert wait_until(lambda s=last: snapshot_name() != s, 3)
        r = send()
        assert r.returncode == 0, r.stderr + r.stdout
    write_random_files(src.mountpoint / "t/b/late", 1, files=1)
    last = _snapshots(root)[-1]
    assert wait_until(lambda: snapshot_name() != last, 3)
    r = send("--final")
    assert r.returncode == 0, r.stderr + r.stdout
    for rel in ("", "/a", "/b"):
        last = _snapshots(root + rel)[-1]
        assert snapshot_guid(f"{copy}{rel}@{last}") == snapshot_guid(f"{root}{rel}@{last}")
    assert (where / "a" / "more1").is_dir() and (where / "b" / "late").is_dir()

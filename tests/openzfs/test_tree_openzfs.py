"""Tree migration (`zmigrate send -r`) against a real OpenZFS 2.3 host, through the CLI.

Five end-to-end runs, each between the guest's two pools as two hosts (the aliases
`openzfs-vm` and `openzfs-dst`, so a tcp transfer between two control sessions):

* a tree with an encrypted child and grandchild: they go raw in one replication stream
  (zfs send -R -w) and arrive encrypted, keys not loaded, one encryption root as on the source;
  a child made later goes alone, and the run names the `zfs change-key -i` that re-joins it;
* a crash (SIGKILL of zmigrate) in the middle of the third of four datasets: the same command
  again skips the two complete ones, resumes the third from its receive_resume_token and sends
  the fourth;
* a crash while a clone's stream (from its copied origin) flows: the rerun resumes it from its
  token and the copy is still a clone of the copied origin, using the source's space;
* into a new pool's root: the tree arrives as the pool itself, and a pool holding a file is
  refused before anything runs;
* `--final`: the picked source datasets end read-only (set locally) and the destination holds
  the final snapshot with the same guid.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from lab.util import events_in

from zmigrate.engine.units import MiB

from .cli import Events, send, send_ok, start_send, two_hosts_config
from .losses import GuestLossWatch
from .test_openzfs import _guid, _leftovers, _prop, _wait
from .vm import Vm

pytestmark = pytest.mark.openzfs


def _make(vm: Vm, ds: str, mb: int, extra: str = "") -> None:
    vm.ssh(f"zfs create {extra} {ds} && head -c {mb}M /dev/urandom > /{ds}/f0")


def _one(events: Events, kind: str) -> dict[str, Any]:
    found = [e for e in events if e.get("event") == kind]
    assert len(found) == 1, (kind, found)
    return found[0]


def _plans(events: Events) -> dict[str, dict[str, Any]]:
    """Each dataset's job plan, by source dataset (a dataset that is not sent has none)."""
    out: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("event") == "plan":
            name = str(e["snapshot"]).split("@", 1)[0]
            assert name not in out, f"{name} was planned twice"
            out[name] = e
    return out


def _states(events: Events) -> dict[str, list[str]]:
    """The states each dataset went through, in order."""
    out: dict[str, list[str]] = {}
    for e in events:
        if e.get("event") == "dataset":
            out.setdefault(str(e["dataset"]), []).append(str(e["state"]))
    return out


def _same_guids(vm: Vm, tag: str, children: list[str], snap: str) -> None:
    for child in children:
        src, dst = f"srcpool/{tag}{child}@{snap}", f"dstpool/{tag}{child}@{snap}"
        assert _guid(vm, src) == _guid(vm, dst), (src, dst)


# -- an encrypted subtree is sent raw, keeping its encryption hierarchy ---------------------------
def test_tree_sends_its_encrypted_subtree_raw_keeping_one_key(vm: Vm, tree: str,
                                                               tmp_path: Path) -> None:
    tag = tree
    root, secret = f"srcpool/{tag}", f"srcpool/{tag}/secret"
    passphrase = f"lane-{tag}-passphrase"
    keyfile = f"file:///root/{tag}.pass"
    vm.ssh(f"umask 077; printf %s {passphrase} > /root/{tag}.pass")
    _make(vm, root, 1)
    _make(vm, secret, 2, extra="-o encryption=on -o keyformat=passphrase "
                               f"-o keylocation={keyfile}")
    _make(vm, f"{secret}/inner", 1)  # encrypted too: it inherits secret's key
    _make(vm, f"{root}/plain", 1)
    vm.ssh(f"zfs snapshot -r {root}@s1")
    assert _prop(vm, f"{secret}/inner", "encryptionroot") == secret
    sums = vm.ssh(f"sha256sum /{secret}/f0 /{secret}/inner/f0").stdout.split()[::2]
    config = two_hosts_config(vm, tmp_path)
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}@s1",
                     f"openzfs-dst:dstpool/{tag}")
    plans = _plans(events)
    # secret goes with inner in one raw replication stream: inner has no job of its own.
    assert set(plans) == {root, secret, f"{root}/plain"}
    assert plans[secret]["raw"] is True and {"-w", "-R"} <= set(plans[secret]["send_flags"])
    sender = [c["command"] for c in plans[secret]["commands"]
              if c["host"] == "openzfs-vm" and "zfs send" in c["command"]]
    assert sender and all(" -w " in f"{c} " and " -R " in f"{c} " for c in sender), sender
    for name in (root, f"{root}/plain"):
        assert plans[name]["raw"] is False and "-w" not in plans[name]["send_flags"], name
    done = _one(events, "done")
    assert done["verified"] is True
    assert set(done["datasets"].values()) == {"verified"}
    assert "own_encryption_roots" not in done
    _same_guids(vm, tag, ["", "/secret", "/secret/inner", "/plain"], "s1")
    # Raw: the copy is encrypted with the source's key, which never left the source, and keeps
    # the source's hierarchy: inner uses secret's key, so one load-key opens both.
    copy = f"dstpool/{tag}/secret"
    for ds in (copy, f"{copy}/inner"):
        assert _prop(vm, ds, "encryption") not in ("off", "-", ""), ds
        assert _prop(vm, ds, "keystatus") == "unavailable", ds
        assert _prop(vm, ds, "encryptionroot") == copy, ds
    assert _prop(vm, f"dstpool/{tag}", "encryption") == "off"
    assert _prop(vm, f"dstpool/{tag}/plain", "encryption") == "off"
    vm.ssh(f"zfs load-key -L {keyfile} {copy}")
    assert _prop(vm, f"{copy}/inner", "keystatus") == "available"
    mounted = f"/mnt/{tag}/secret"  # out of dstpool's own tree; the fixture removes it
    vm.ssh(f"zfs set mountpoint={mounted} {copy} && for d in {copy} {copy}/inner; do "
           f"[ \"$(zfs get -H -o value mounted $d)\" = yes ] || zfs mount $d || exit 1; done")
    got = vm.ssh(f"sha256sum {mounted}/f0 {mounted}/inner/f0").stdout.split()[::2]
    assert got == sums
    vm.ssh(f"zfs unmount {copy}/inner; zfs unmount {copy}; zfs unload-key -r {copy}")

    # Catch-up with a child made since: it can only go alone (its parent's copy exists), so it
    # arrives as an encryption root of its own. The run says so with the commands, and they work.
    _make(vm, f"{secret}/later", 1)
    vm.ssh(f"zfs snapshot -r {root}@s2")
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}@s2",
                     f"openzfs-dst:dstpool/{tag}")
    done = _one(events, "done")
    assert done["verified"] is True
    later = f"{copy}/later"
    assert done["own_encryption_roots"] == {later: copy}
    assert _prop(vm, later, "encryptionroot") == later
    vm.ssh(f"zfs load-key -L {keyfile} {copy} && zfs load-key -L {keyfile} {later} "
           f"&& zfs change-key -i {later}")
    assert _prop(vm, later, "encryptionroot") == copy
    print(f"\nENCRYPTED SUBTREE: {secret} and its child went raw in one -R -w stream; the copy "
          f"keeps one encryption root ({copy}), one load-key opens both, files equal; a child "
          "made later arrived alone, was named with `zfs change-key -i`, and that re-joined it")


# -- a crash in the middle of one dataset, then the same command again -----------------------------
def _crash_during(vm: Vm, config: Path, args: tuple[str, ...], tmp_path: Path,
                  dataset: str) -> tuple[Events, int]:
    """Run `zmigrate send ARGS` and SIGKILL it once `dataset` has streamed more than 5 MiB:
    (the events it printed, the port of that dataset's stream)."""
    log = tmp_path / "first.jsonl"
    with log.open("wb") as sink:
        cli = start_send(vm, config, *args, stdout=sink)
    try:
        def going() -> bool:
            ev = events_in(log.read_text(), cut_off_ok=True)
            sending = [e for e in ev if e.get("event") == "dataset"
                       and e["dataset"] == dataset and e["state"] == "sending"]
            if not sending:
                return False
            step = int(str(sending[0]["index"])) + 1
            before = sum(int(str(e["bytes"])) for e in ev if e.get("event") == "dataset"
                         and e["state"] == "received")
            return any(e.get("event") == "progress" and e["step"] == step
                       and int(str(e["done"])) > before + 5 * MiB for e in ev)
        assert _wait(going, 180), log.read_text()[-3000:] + (
            cli.stderr.read() if cli.poll() is not None and cli.stderr else "")
        first = events_in(log.read_text(), cut_off_ok=True)
        port = next(e["port"] for e in first if e.get("event") == "plan"
                    and str(e["snapshot"]).startswith(f"{dataset}@"))
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
        if cli.stderr:
            cli.stderr.close()
    return first, int(port)


def test_rerun_after_a_crash_skips_the_done_and_resumes_the_cut_one(
        vm: Vm, tree: str, tmp_path: Path) -> None:
    tag = tree
    root = f"srcpool/{tag}"
    # Parents first, then by name: root, a, big, z. At 3 MiB/s, big streams for ~8 s.
    _make(vm, root, 1)
    _make(vm, f"{root}/a", 1)
    _make(vm, f"{root}/big", 24)
    _make(vm, f"{root}/z", 1)
    vm.ssh(f"zfs snapshot -r {root}@s1")
    config = two_hosts_config(vm, tmp_path)
    # One at a time: cut in the third of four, the fourth has not started.
    args = ("-r", f"openzfs-vm:{root}@s1", f"openzfs-dst:dstpool/{tag}", "--bwlimit", "3M",
            "--parallel", "1")
    first, port = _crash_during(vm, config, args, tmp_path, f"{root}/big")
    # What the crash left: root and a complete (received; the kill came before the check of
    # all received datasets at the end), big cut with its resumable state, z untouched.
    assert _states(first)[f"{root}/a"][-1] == "received"
    assert _states(first)[f"{root}/big"][-1] == "sending"
    assert _wait(lambda: _leftovers(vm, tag, f":{port}") == [], 20), _leftovers(vm, tag)
    _same_guids(vm, tag, ["", "/a"], "s1")
    token = _prop(vm, f"dstpool/{tag}/big", "receive_resume_token")
    assert token not in ("", "-"), "the cut dataset lost its resumable state"
    assert vm.ssh(f"zfs list dstpool/{tag}/z", check=False).returncode != 0
    dst_a_txg = _prop(vm, f"dstpool/{tag}/a@s1", "createtxg")

    t0 = time.monotonic()
    events = send_ok(vm, config, *args)
    took = time.monotonic() - t0
    tree_plan = _one(events, "tree_plan")
    entries = {str(d["source"]): d for d in tree_plan["datasets"]}
    assert [entries[n]["action"] for n in (root, f"{root}/a")] == ["skip", "skip"]
    assert entries[f"{root}/big"]["resume"] is True
    assert entries[f"{root}/z"]["action"] == "full" and entries[f"{root}/z"]["resume"] is False
    # The complete ones are not sent again: no job, no stream, and the copy untouched.
    plans = _plans(events)
    assert set(plans) == {f"{root}/big", f"{root}/z"}
    states = _states(events)
    assert states[root] == ["skipped"] and states[f"{root}/a"] == ["skipped"]
    assert states[f"{root}/big"] == ["waiting", "sending", "received", "verified"]
    assert states[f"{root}/z"] == ["waiting", "sending", "received", "verified"]
    assert _prop(vm, f"dstpool/{tag}/a@s1", "createtxg") == dst_a_txg
    # The cut one continues from its token: only the rest is sent.
    big = plans[f"{root}/big"]
    resumed_from, rest = int(str(big["resumed_from"])), int(str(big["estimate"]))
    full = int(vm.ssh(f"zfs send -nP -c -L -e {root}/big@s1 | awk '$1==\"size\"{{print $2}}'")
               .stdout)
    assert big["resume"] is True and resumed_from > 4 * MiB
    assert resumed_from + rest == full
    sent = next(int(str(e["bytes"])) for e in events if e.get("event") == "dataset"
                and e["dataset"] == f"{root}/big" and e["state"] == "verified")
    assert sent <= rest * 1.05 + 256 * 1024, (sent, rest)
    done = _one(events, "done")
    assert done["verified"] is True and done["datasets"] == {
        root: "skipped", f"{root}/a": "skipped", f"{root}/big": "verified",
        f"{root}/z": "verified"}
    _same_guids(vm, tag, ["", "/a", "/big", "/z"], "s1")
    assert _prop(vm, f"dstpool/{tag}/big", "receive_resume_token") == "-"
    print(f"\nTREE RERUN: 2 skipped, big resumed after {resumed_from} B of {full} B "
          f"(sent {sent} B), z sent in full; rerun took {took:.1f} s")


def test_a_clone_cut_by_a_crash_resumes_and_still_arrives_as_a_clone(
        vm: Vm, tree: str, tmp_path: Path) -> None:
    """base@gold and a clone of it with 24 MiB of its own: zmigrate killed while the clone's
    stream (from the copy's base@gold) flows; the same command again resumes it from its token,
    and the copy is a clone of the copied origin, using the space the source's clone uses."""
    tag = tree
    root = f"srcpool/{tag}"
    _make(vm, root, 1)
    _make(vm, f"{root}/base", 2)
    vm.ssh(f"zfs snapshot {root}/base@gold && zfs clone {root}/base@gold {root}/cl && "
           f"head -c 24M /dev/urandom > /{root}/cl/own && zfs snapshot -r {root}@s1")
    config = two_hosts_config(vm, tmp_path)
    args = ("-r", f"openzfs-vm:{root}@s1", f"openzfs-dst:dstpool/{tag}", "--bwlimit", "3M",
            "--parallel", "1")
    first, port = _crash_during(vm, config, args, tmp_path, f"{root}/cl")
    assert _one(first, "tree_plan")["datasets"][2]["origin"] == f"{root}/base@gold"
    assert _wait(lambda: _leftovers(vm, tag, f":{port}") == [], 20), _leftovers(vm, tag)
    assert _prop(vm, f"dstpool/{tag}/cl", "receive_resume_token") not in ("", "-")

    events = send_ok(vm, config, *args)
    entries = {str(d["source"]): d for d in _one(events, "tree_plan")["datasets"]}
    assert entries[f"{root}/cl"]["resume"] is True
    assert _states(events)[f"{root}/cl"] == ["waiting", "sending", "received", "verified"]
    resumed_from = int(str(_plans(events)[f"{root}/cl"]["resumed_from"]))
    assert resumed_from > 4 * MiB
    _same_guids(vm, tag, ["", "/base", "/cl"], "s1")
    assert _prop(vm, f"dstpool/{tag}/cl", "origin") == f"dstpool/{tag}/base@gold"
    copy_used, src_used = (int(_prop(vm, f"{p}/{tag}/cl", "used"))
                           for p in ("dstpool", "srcpool"))
    assert copy_used <= src_used + 512 * 1024, (copy_used, src_used)
    print(f"\nCLONE RESUMED after {resumed_from} B: origin kept, used {copy_used} B "
          f"(source {src_used} B)")


def _copied_at_s1(vm: Vm, tag: str, tmp_path: Path,
                  children: list[str]) -> tuple[str, Path, str, Events]:
    """srcpool/TAG with `children` (1 MiB each), @s1 taken and copied to dstpool/TAG by
    `zmigrate send -r`: (root, ssh config, destination argument, the copy's events)."""
    root = f"srcpool/{tag}"
    for child in children:
        _make(vm, root + child, 1)
    vm.ssh(f"zfs snapshot -r {root}@s1")
    config = two_hosts_config(vm, tmp_path)
    dest = f"openzfs-dst:dstpool/{tag}"
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}@s1", dest)
    return root, config, dest, events


# -- into a new pool's root -----------------------------------------------------------------------
def test_a_tree_goes_into_a_new_pools_root_as_the_pool_itself(vm: Vm, tree: str,
                                                             tmp_path: Path) -> None:
    """`send -r srcpool/TAG NEWPOOL` on OpenZFS: TAG/a lands as NEWPOOL/a and TAG's own
    snapshot and user property on NEWPOOL itself (as `zfs send -R | zfs receive -Fdu` would),
    verified; a catch-up goes into it again. A new pool holding a file is refused before
    anything runs (no snapshot taken, the file kept). Both pools are file-backed in the guest
    and destroyed afterwards."""
    tag = tree
    root = f"srcpool/{tag}"
    children = ["", "/a", "/a/x", "/b"]
    for child in children:
        _make(vm, root + child, 1)
    vm.ssh(f"zfs set com.example:root=yes {root}")
    new, used = f"np{tag}", f"nu{tag}"
    pools = f"{new} {used}"
    try:
        vm.ssh(f"for p in {pools}; do truncate -s 256M /var/tmp/$p.img && "
               f"zpool create -O mountpoint=/mnt/$p $p /var/tmp/$p.img || exit 1; done")
        config = two_hosts_config(vm, tmp_path)
        events = send_ok(vm, config, "-r", f"openzfs-vm:{root}",
                         f"openzfs-dst:{new}", "--snapshot")
        plan = _one(events, "tree_plan")
        snap = str(plan["snapshot"])
        assert plan["datasets"][0]["into"] is True, plan["datasets"][0]
        assert _one(events, "done")["verified"] is True
        for child in children:
            assert _guid(vm, f"{root}{child}@{snap}") == _guid(vm, f"{new}{child}@{snap}")
        assert vm.ssh(f"zfs list {new}/{tag}", check=False).returncode != 0
        assert _prop(vm, new, "com.example:root") == "yes"
        # A catch-up: incremental into the pool root and its children.
        vm.ssh(f"head -c 256K /dev/urandom > /{root}/f1")
        time.sleep(1.1)  # snapshot names have one-second resolution
        events = send_ok(vm, config, "-r", f"openzfs-vm:{root}",
                         f"openzfs-dst:{new}", "--snapshot")
        snap2 = str(_one(events, "tree_plan")["snapshot"])
        assert _guid(vm, f"{root}@{snap2}") == _guid(vm, f"{new}@{snap2}")

        vm.ssh(f"echo mine > /mnt/{used}/keep.txt")
        before = vm.ssh(f"zfs list -H -t snapshot -o name -r {root}").stdout
        r = send(vm, config, "-r", f"openzfs-vm:{root}", f"openzfs-dst:{used}", "--snapshot")
        assert r.returncode != 0
        error = _one(r.events, "error")
        assert error["reason"] == "pool_root", error
        assert "is a pool root that is not empty" in str(error["message"]), error
        assert vm.ssh(f"zfs list -H -t snapshot -o name -r {root}").stdout == before
        assert vm.ssh(f"cat /mnt/{used}/keep.txt").stdout == "mine\n"
        print(f"\nINTO A NEW POOL'S ROOT: {len(children)} datasets at {new}, its own snapshot "
              f"and property on the root; a catch-up into it; a pool holding a file refused")
    finally:
        vm.ssh(f"for p in {pools}; do zpool destroy -f $p; rm -f /var/tmp/$p.img; "
               f"rmdir /mnt/$p; done; true", check=False)


# -- --final: the source ends read-only ------------------------------------------------------------
def test_final_sync_leaves_the_source_read_only(vm: Vm, tree: str, tmp_path: Path) -> None:
    tag = tree
    children = ["", "/c1", "/c1/c2"]
    root, config, dest, events = _copied_at_s1(vm, tag, tmp_path, children)
    assert "source_readonly_since" not in _one(events, "done")
    for child in children:  # a plain sync leaves the source writable
        assert _prop(vm, root + child, "readonly") == "off"
        vm.ssh(f"head -c 512K /dev/urandom > /{root}{child}/f1")

    before = time.time()
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}", dest, "--snapshot",
                     "--final")
    plan = _one(events, "tree_plan")
    snap = str(plan["snapshot"])
    assert snap.startswith("zmigrate-") and plan["readonly_command"]
    assert [d["action"] for d in plan["datasets"]] == ["incremental"] * 3
    done = _one(events, "done")
    assert done["verified"] is True and done["snapshot"] == snap
    assert float(str(done["source_readonly_since"])) >= before - 5
    assert set(done["datasets"].values()) == {"verified"}
    for child in children:
        ds = root + child
        got = vm.ssh(f"zfs get -H -o value,source readonly {ds}").stdout.split()
        assert got == ["on", "local"], (ds, got)
        # Read-only for real: nothing can change the source after the final snapshot.
        r = vm.ssh(f"touch /{ds}/after-final", check=False)
        assert r.returncode != 0 and "Read-only file system" in r.stderr, (ds, r.stderr)
        assert _guid(vm, f"{ds}@{snap}") == _guid(vm, f"dstpool/{tag}{child}@{snap}")
        # The snapshot was taken after readonly=on: nothing was written between the two.
        assert _prop(vm, ds, "written") == "0", ds
    _same_guids(vm, tag, children, "s1")
    print(f"\nFINAL SYNC: {len(children)} source datasets readonly=on (local), "
          f"@{snap} on both sides with equal guids")


# -- a catch-up pays for what changed ------------------------------------------------------------
def test_a_catch_up_leaves_unchanged_datasets_as_they_are(vm: Vm, tree: str,
                                                          tmp_path: Path) -> None:
    tag = tree
    children = ["", "/a", "/b", "/b/c"]
    root, config, dest, _ = _copied_at_s1(vm, tag, tmp_path, children)
    # Written a moment before the run: `written` shows it only once the pool syncs, which
    # the run makes it do before it trusts a 0.
    vm.ssh(f"head -c 512K /dev/urandom > /{root}/b/f1")
    watch = GuestLossWatch(vm, f"dstpool/{tag}")  # nothing lost unseen: here, nothing at all
    watch.start()
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}", dest, "--snapshot")
    plan = _one(events, "tree_plan")
    assert plan["destroys"] == [] and all(p["destroys"] == [] for p in _plans(events).values())
    watch.check([])
    snap = str(plan["snapshot"])
    actions = {d["source"]: (d["action"], d["reason"]) for d in plan["datasets"]}
    assert actions[f"{root}/b"][0] == "incremental", actions
    for child in ("", "/a", "/b/c"):
        action, reason = actions[root + child]
        assert action == "skip" and reason.startswith("unchanged since @s1"), (child, reason)
    assert plan["snapshot_command"] == f"zfs snapshot {root}/b@{snap}"
    assert set(_plans(events)) == {f"{root}/b"}  # one job: the changed dataset's
    done = _one(events, "done")
    assert done["verified"] is True
    assert _guid(vm, f"{root}/b@{snap}") == _guid(vm, f"dstpool/{tag}/b@{snap}")
    snaps = vm.ssh(f"zfs list -H -o name -t snapshot -r {root}").stdout.split()
    assert [s for s in snaps if s.endswith("@" + snap)] == [f"{root}/b@{snap}"]
    # Later, a dataset left unchanged changes: it goes from its own newest common snapshot.
    vm.ssh(f"head -c 256K /dev/urandom > /{root}/a/f2")
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}", dest, "--snapshot")
    plan = _one(events, "tree_plan")
    snap2 = str(plan["snapshot"])
    actions = {d["source"]: (d["action"], d["reason"]) for d in plan["datasets"]}
    assert actions[f"{root}/a"] == ("incremental", "from @s1"), actions
    assert actions[f"{root}/b"][0] == "skip" and f"unchanged since @{snap}" in \
        actions[f"{root}/b"][1]
    assert _one(events, "done")["verified"] is True
    assert _guid(vm, f"{root}/a@{snap2}") == _guid(vm, f"dstpool/{tag}/a@{snap2}")
    print(f"\nCATCH-UP: 1 of {len(children)} datasets changed, 1 job, the others left at "
          f"@s1 with no new snapshot; the next catch-up sent the next one from @s1")

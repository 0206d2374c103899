"""Nothing lost unseen, on OpenZFS 2.3: around a `send --force` into a diverged copy and a
forced tree catch-up, the guest's destination is listed before and after (datasets, snapshots,
files: tests/openzfs/losses.py, the lab's LossWatch read over ssh), and everything that
disappeared must be on the list the run's plan showed (its --json `destroys`). OpenZFS reports
`written`, so the files written on the copy since its newest snapshot are named too."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import Events, send, send_ok, two_hosts_config
from .losses import GuestLossWatch
from .test_openzfs import _guid
from .test_tree_openzfs import _copied_at_s1, _make
from .vm import Vm

pytestmark = pytest.mark.openzfs


def _destroys(events: Events, kind: str) -> list[tuple[str, str]]:
    """(kind, name) of every loss the plan events of one run showed."""
    return sorted((str(x["kind"]), str(x["name"])) for e in events if e.get("event") == kind
                  for x in e.get("destroys", []))


def _diverge(vm: Vm, copy: str) -> None:
    """The copy changes on its own (made writable, as the copy is read-only after a send):
    a file kept by a snapshot taken there, then a file written after it (synced, so `written`
    shows it: a write of the last seconds is another matter)."""
    vm.ssh(f"zfs set readonly=off {copy}; "
           f"[ \"$(zfs get -H -o value mounted {copy})\" = yes ] || zfs mount {copy}; "
           f"head -c 64K /dev/urandom > /{copy}/in-snap && zfs snapshot {copy}@local && "
           f"head -c 96K /dev/urandom > /{copy}/after && zpool sync dstpool")


def test_send_force_loses_only_what_its_plan_names(vm: Vm, tree: str, tmp_path: Path) -> None:
    tag = tree
    src, copy = f"srcpool/{tag}", f"dstpool/{tag}"
    _make(vm, src, 1)
    vm.ssh(f"zfs snapshot {src}@a")
    config = two_hosts_config(vm, tmp_path)
    events = send_ok(vm, config, f"openzfs-vm:{src}@a", f"openzfs-dst:{copy}")
    _diverge(vm, copy)
    vm.ssh(f"head -c 128K /dev/urandom > /{src}/f1 && zfs snapshot {src}@b")
    watch = GuestLossWatch(vm, copy)
    before = watch.start()
    assert {"in-snap", "after", "f0"} <= before.files[copy]
    events = send_ok(vm, config, "--force", f"openzfs-vm:{src}@b",
                     f"openzfs-dst:{copy}")
    assert _destroys(events, "plan") == [("content", copy), ("snapshot", f"{copy}@local")]
    with pytest.raises(AssertionError, match="local"):  # the invariant has teeth
        watch.check([])
    after = watch.check([x for e in events if e.get("event") == "plan"
                         for x in e["destroys"]])
    assert {"in-snap", "after"}.isdisjoint(after.files.get(copy, frozenset()))
    assert _guid(vm, f"{src}@b") == _guid(vm, f"{copy}@b")
    print(f"\nLOSSES send --force: {sorted(before.snapshots - after.snapshots)} and the copy's "
          f"written files, both on the plan's list; nothing else gone")


def test_a_forced_tree_catch_up_loses_only_what_its_plan_names(vm: Vm, tree: str,
                                                               tmp_path: Path) -> None:
    tag = tree
    root, config, dest, _ = _copied_at_s1(vm, tag, tmp_path, ["", "/a", "/b"])
    copy = f"dstpool/{tag}"
    _diverge(vm, f"{copy}/a")
    vm.ssh(f"head -c 256K /dev/urandom > /{root}/a/f1 && head -c 256K /dev/urandom > "
           f"/{root}/b/f1")
    watch = GuestLossWatch(vm, copy)
    before = watch.start()
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}", dest, "--snapshot",
                     "--force")
    shown = [x for e in events if e.get("event") in ("plan", "tree_plan")
             for x in e.get("destroys", [])]
    assert {("content", f"{copy}/a"), ("snapshot", f"{copy}/a@local")} <= {
        (str(x["kind"]), str(x["name"])) for x in shown}
    with pytest.raises(AssertionError, match="local"):
        watch.check([])
    after = watch.check(shown)
    assert before.datasets == after.datasets
    assert {"in-snap", "after"}.isdisjoint(after.files.get(f"{copy}/a", frozenset()))
    snap = next(str(e["snapshot"]) for e in events if e.get("event") == "tree_plan")
    for child in ("/a", "/b"):
        assert _guid(vm, f"{root}{child}@{snap}") == _guid(vm, f"{copy}{child}@{snap}"), child
    print(f"\nLOSSES tree catch-up --force: {len(shown)} loss(es) shown, nothing else gone")



def test_a_write_of_the_last_seconds_is_named_by_a_force_dry_run(vm: Vm, tree: str,
                                                                 tmp_path: Path) -> None:
    """A file written into the copy just before `send --force --dry-run`, not synced (the
    transaction group that counts it in `written` ends seconds later): the plan syncs the
    destination's pool before it reads `written`, so the list names those bytes."""
    tag = tree
    src, copy = f"srcpool/{tag}", f"dstpool/{tag}"
    _make(vm, src, 1)
    vm.ssh(f"zfs snapshot {src}@a")
    config = two_hosts_config(vm, tmp_path)
    send_ok(vm, config, f"openzfs-vm:{src}@a", f"openzfs-dst:{copy}")
    vm.ssh(f"zfs snapshot {src}@b; zfs set readonly=off {copy}; "
           f"[ \"$(zfs get -H -o value mounted {copy})\" = yes ] || zfs mount {copy}; "
           "zpool sync dstpool")
    vm.ssh(f"head -c 300K /dev/urandom > /{copy}/late")  # and at once:
    events = send_ok(vm, config, "--force", "--dry-run", f"openzfs-vm:{src}@b",
                     f"openzfs-dst:{copy}")
    (lost,) = [x for e in events if e.get("event") == "plan" for x in e["destroys"]]
    assert (lost["kind"], lost["name"]) == ("content", copy), lost
    written = int(lost["detail"].split("; ")[1].split(" bytes")[0])  # "written since @a; N bytes"
    assert written >= 300 * 1024, lost
    print(f"\nWRITTEN named by the dry run a moment after the write: {written} bytes")


def test_an_existing_volume_is_refused_as_one_and_force_replaces_it_as_its_plan_names(
        vm: Vm, tag: str, tmp_path: Path) -> None:
    """A VM's disk (a volume, as Proxmox keeps them) already at the destination: no file can be
    listed and no figure proves it unused, so it is refused, as a volume (no "receive below
    it" or "mount it", which a volume cannot); --force names it and replaces it, content equal."""
    src, disk = f"srcpool/{tag}/vm-100-disk-0", f"dstpool/{tag}-disk"
    vm.ssh(f"zfs create srcpool/{tag} && zfs create -V 16M {src} && udevadm settle && "
           f"dd if=/dev/urandom of=/dev/zvol/{src} bs=1M count=4 status=none && "
           f"zfs snapshot {src}@a && zfs create -V 16M {disk} && udevadm settle && "
           f"dd if=/dev/urandom of=/dev/zvol/{disk} bs=1M count=2 status=none && "
           "zpool sync dstpool")
    config = two_hosts_config(vm, tmp_path)
    r = send(vm, config, f"openzfs-vm:{src}@a", f"openzfs-dst:{disk}")
    errors = r.of("error")
    assert r.returncode != 0 and errors, r.stderr + r.stdout[-2000:]
    assert "it is a volume (a block device), whose content cannot be listed" in \
        errors[-1]["message"], errors[-1]
    assert errors[-1]["fix"] == (f"pick another name, or pass --force to replace the whole "
                                 f"content of {disk} with the copy (what it holds is lost)")
    watch = GuestLossWatch(vm, disk)
    watch.start()
    events = send_ok(vm, config, "--force", f"openzfs-vm:{src}@a", f"openzfs-dst:{disk}")
    assert _destroys(events, "plan") == [("content", disk)]
    watch.check([x for e in events if e.get("event") == "plan" for x in e["destroys"]])
    assert _guid(vm, f"{disk}@a") == _guid(vm, f"{src}@a")
    same = vm.ssh(f"udevadm settle; cmp /dev/zvol/{src} /dev/zvol/{disk} && echo same",
                  check=False)
    assert same.stdout.strip() == "same", same.stderr

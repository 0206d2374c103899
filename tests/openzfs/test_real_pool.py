"""The copy is what `zfs send -R` makes: a "real pool" copied once by the reference pipeline
(`zfs send -R -w | zfs receive -u`) and once by `zmigrate send -r`, compared dataset by
dataset and snapshot by snapshot on a real OpenZFS 2.3 host (issue: the pool arrives as a pool).

The pool: a filesystem tree with a 6-snapshot history, quota and refquota, recordsize=1M with
compression=zstd, a mountpoint=legacy and a canmount=noauto dataset, user properties, a 32 MiB
zvol with volblocksize=16k and two clones of it, a filesystem template with a clone carrying a
user property of its own, and an encrypted subtree (passphrase from a key file) with a child;
holds and a bookmark, which neither copy carries and the plan counts.

Compared: the properties above (zmigrate's canmount=noauto on the file systems it holds until
they go live the one difference), origin and encryptionroot of every dataset and snapshot, every
snapshot's guid, and the data: a sha256 of every file of every filesystem at the sent snapshot
(each @last mounted read-only, the encrypted subtree's key loaded) and of every zvol's device,
hashed on the guest in one command per copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .cli import send_ok, two_hosts_config
from .vm import Vm

# Two copies of a 20-dataset pool and its teardown on an emulated (TCG) guest: ~12 minutes.
pytestmark = [pytest.mark.openzfs, pytest.mark.timeout(1800)]

# Compared on every dataset (as `zfs get` shows them, locally set or received).
PROPS = ("type", "quota", "refquota", "recordsize", "compression", "mountpoint", "canmount",
         "volblocksize", "volsize", "com.example:role", "com.example:own")


@pytest.fixture
def real_pool(vm: Vm, tag: str) -> Iterator[str]:
    root = f"srcpool/{tag}"
    key = f"/root/{tag}.pass"
    script = f"""
set -e
umask 077; printf %s 'lane-{tag}-pass' > {key}; umask 022
zfs create -o com.example:role=root {root}
zfs create -o quota=256M -o refquota=128M {root}/home
zfs create -o recordsize=1M -o compression=zstd {root}/media
zfs create -o mountpoint=legacy {root}/legacy
zfs create -o canmount=noauto {root}/noauto
zfs create -o com.example:role=template {root}/tmpl
zfs create -V 32M -o volblocksize=16k {root}/vol
zfs create -o encryption=on -o keyformat=passphrase -o keylocation=file://{key} {root}/enc
zfs create {root}/enc/child
head -c 1M /dev/urandom > /{root}/enc/secret; head -c 512K /dev/urandom > /{root}/enc/child/inner
mkdir -p /mnt/{tag}-legacy; mount -t zfs {root}/legacy /mnt/{tag}-legacy
head -c 256K /dev/urandom > /mnt/{tag}-legacy/l; umount /mnt/{tag}-legacy; rmdir /mnt/{tag}-legacy
zfs mount {root}/noauto; head -c 256K /dev/urandom > /{root}/noauto/n; zfs unmount {root}/noauto
for i in 1 2 3 4 5 6; do
  head -c 1M /dev/urandom > /{root}/home/f$i
  yes "media line $i" | head -c 2M > /{root}/media/f$i
  zfs snapshot -r {root}@h$i
done
head -c 4M /dev/urandom > /{root}/tmpl/base
dd if=/dev/urandom of=/dev/zvol/{root}/vol bs=1M count=8 status=none 2>/dev/null || true
zfs snapshot -r {root}@gold
zfs clone {root}/vol@gold {root}/vol-c1
zfs clone {root}/vol@gold {root}/vol-c2
zfs clone -o com.example:own=yes {root}/tmpl@gold {root}/tc
head -c 1M /dev/urandom > /{root}/tc/mine
zfs snapshot -r {root}@last
zfs hold keep {root}/home@h1; zfs hold audit {root}/home@h1; zfs hold keep {root}/media@h2
zfs bookmark {root}/home@h3 {root}/home#b3
"""
    vm.ssh(script, timeout=600)
    yield tag
    vm.ssh(f"zfs release keep {root}/home@h1 {root}/media@h2; zfs release audit {root}/home@h1; "
           f"zfs destroy -R {root}; zfs destroy -R dstpool/{tag}-ref; "
           f"zfs destroy -R dstpool/{tag}-zm; rm -f {key}; true", check=False, timeout=600)


def _listing(vm: Vm, root: str) -> dict[str, dict[str, str]]:
    """name relative to `root` -> the compared properties, origin and encryptionroot made
    relative too (datasets and snapshots)."""
    out = vm.ssh(f"zfs get -H -p -r -t all -o name,property,value "
                 f"{','.join(PROPS)},origin,encryptionroot {root}", timeout=300).stdout
    found: dict[str, dict[str, str]] = {}
    for line in out.splitlines():
        name, prop, value = line.split("\t")
        rel = name[len(root):] or "."
        if prop in ("origin", "encryptionroot") and value.startswith(root):
            value = "ROOT" + value[len(root):]
        if prop == "mountpoint" and value.startswith(f"/{root}"):
            value = "/ROOT" + value[len(root) + 1:]  # inherited from the copy's own root
        found.setdefault(rel, {})[prop] = value
    return found


def _guids(vm: Vm, root: str) -> dict[str, str]:
    """snapshot name relative to `root` -> its guid."""
    out = vm.ssh(f"zfs get -H -p -r -t snapshot -o name,value guid {root}", timeout=300).stdout
    rows = (line.split("\t") for line in out.splitlines())
    return {name[len(root):]: guid for name, guid in rows}


def _contents(vm: Vm, root: str, key: str) -> dict[str, str]:
    """'dataset relative to root:path' -> sha256 of every file of every filesystem at @last and
    of every zvol's device ('dataset:zvol'), hashed on the guest in one command. Each snapshot
    is mounted read-only on its own directory (mountpoint, legacy or canmount=noauto alike) and
    unmounted again; the encrypted subtree's key is loaded first (raw copies arrive without)."""
    where = f"/mnt/zmcmp-{root.replace('/', '-')}"
    script = f"""
set -e -o pipefail
R={root}; M={where}
mkdir -p $M
done_() {{
  for d in $M/*; do umount $d 2>/dev/null || true; rmdir $d 2>/dev/null || true; done
  rmdir $M 2>/dev/null || true
}}
trap done_ EXIT
[ "$(zfs get -H -o value keystatus $R/enc)" = available ] || zfs load-key -L file://{key} $R/enc
udevadm settle
i=0
for ds in $(zfs list -H -o name -t filesystem -r $R); do
  i=$((i+1)); mkdir $M/$i; mount -t zfs -o ro $ds@last $M/$i
  (cd $M/$i && find . -type f -exec sha256sum {{}} + | sed "s|^|${{ds#$R}}:|")
  umount $M/$i
done
for ds in $(zfs list -H -o name -t volume -r $R); do
  for n in $(seq 60); do [ -e /dev/zvol/$ds ] && break; sleep 1; done
  sha256sum /dev/zvol/$ds | sed "s|^|${{ds#$R}}:|"
done
"""
    out = vm.ssh(script, timeout=600).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        rel, rest = line.split(":", 1)
        digest, path = rest.split("  ", 1)
        found[f"{rel or '.'}:{'zvol' if path.startswith('/dev/zvol/') else path}"] = digest
    return found


def _used(vm: Vm, ds: str) -> int:
    return int(vm.ssh(f"zfs get -H -p -o value used {ds}").stdout.strip())


def test_the_copy_is_what_zfs_send_R_makes(vm: Vm, real_pool: str, tmp_path: Path) -> None:
    tag = real_pool
    root, ref, copy = f"srcpool/{tag}", f"dstpool/{tag}-ref", f"dstpool/{tag}-zm"
    vm.ssh(f"zfs send -R -w {root}@last | zfs receive -u {ref}", timeout=900)
    config = two_hosts_config(vm, tmp_path)
    events = send_ok(vm, config, "-r", f"openzfs-vm:{root}@last",
                     f"openzfs-dst:{copy}", "--no-readonly", timeout=1200)
    plan = next(e for e in events if e.get("event") == "tree_plan")
    origins = {d["source"]: d["origin"] for d in plan["datasets"]}
    assert origins[f"{root}/vol-c1"] == origins[f"{root}/vol-c2"] == f"{root}/vol@gold"
    assert origins[f"{root}/tc"] == f"{root}/tmpl@gold"
    # Neither copy carries holds or bookmarks (zfs send cannot): the plan says so, counted.
    assert plan["not_carried"] == {"holds": 3, "held_snapshots": 2, "bookmarks": 1}
    assert "3 hold(s) on 2 snapshot(s)" in plan["description"]
    want, got = _listing(vm, ref), _listing(vm, copy)
    # One difference by design: zmigrate's copy is held until it goes live
    # (tree/planning/plan.held), each new file system received canmount=noauto where `zfs
    # receive -u`'s would mount at the next boot (the encrypted subtree, one replication
    # stream, keeps the source's).
    held = {name for name, props in got.items() if props.get("canmount") == "noauto"
            and want.get(name, {}).get("canmount") != "noauto"}
    assert held == {".", "/home", "/media", "/legacy", "/tmpl", "/tc"}, sorted(held)
    assert all(want[name]["canmount"] == "on" for name in held), sorted(held)
    for name in held:
        got[name]["canmount"] = "on"
    differences = sorted(
        f"{name} {prop}: reference {want.get(name, {}).get(prop)!r}, zmigrate "
        f"{got.get(name, {}).get(prop)!r}"
        for name in set(want) | set(got)
        for prop in set(want.get(name, {})) | set(got.get(name, {}))
        if want.get(name, {}).get(prop) != got.get(name, {}).get(prop))
    print(f"\nREAL POOL: {len(want)} datasets and snapshots compared, "
          f"{len(differences)} differences; used: reference {_used(vm, ref)}, "
          f"zmigrate {_used(vm, copy)}")
    assert differences == []
    # The same snapshots: each one's guid, as zfs send -R keeps it.
    want_guids, got_guids = _guids(vm, ref), _guids(vm, copy)
    assert len(want_guids) >= 6 * 9 and got_guids == want_guids
    # The same data: every file of every filesystem at @last and every zvol, byte for byte.
    want_data = _contents(vm, ref, f"/root/{tag}.pass")
    got_data = _contents(vm, copy, f"/root/{tag}.pass")
    print(f"REAL POOL: {len(want_guids)} snapshot guids, {len(want_data)} files and zvols hashed")
    assert {f"/{v}:zvol" for v in ("vol", "vol-c1", "vol-c2")} <= set(want_data)
    assert {"/home:./f6", "/media:./f6", "/tmpl:./base", "/tc:./base", "/tc:./mine",
            "/enc:./secret", "/enc/child:./inner", "/legacy:./l", "/noauto:./n"} <= set(want_data)
    mismatched = sorted(k for k in set(want_data) | set(got_data)
                        if want_data.get(k) != got_data.get(k))
    assert mismatched == []
    assert _used(vm, copy) <= 1.05 * _used(vm, ref)

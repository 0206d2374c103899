"""zmigrate send -r on a tree of 30 small datasets against a hand-written shell loop of the same
30 mbuffer pipelines, side by side; and what --parallel gains.

Runs on the lab (root, zfs-fuse, two sshd on 127.0.0.1). The hand loop receives dataset after
dataset, parents first, with the same block and buffer sizes, twice: once on this machine with
no ssh at all (the floor), once as a user runs it between two hosts, each pipeline started by
`ssh HOST '...'` over ControlMaster connections opened beforehand; zmigrate goes through its two SSH
control sessions and plans, verifies and records each dataset. Prints the wall times, the ratio
(target <= 1.5) and zmigrate's overhead per dataset (target < 0.3 s). Not a timed test.

    sudo .venv/bin/python bench/bench_tree.py [--datasets 30] [--rounds 3] [--parallel 4]

`--catch-up` measures instead the catch-up of a 200-dataset tree (`--datasets 200`) where 5
changed (`--changed 5`): zmigrate `send -r --snapshot` against the ssh hand loop that sends
only the changed ones (`zfs send -i`), each on its own copy, rotating order (target: <= 15 s
and <= 1.0x the loop).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402
from lab.sshd import Lab  # noqa: E402
from lab.util import free_port, port_listening, quiet_machine, wait_until, zfs  # noqa: E402

from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.hosts.pair import connect_both
from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.transports import Transport  # noqa: E402
from zmigrate.engine.tree import TreeJob, TreeRequest, snapshot_name  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402

BLOCK, BUFFER = "128k", "16M"


# How the hand loop starts a line on a host ("lab-src" or "lab-dst"): an argv.
On = Callable[[str, str], list[str]]


def here(_host: str, line: str) -> list[str]:
    """On this machine, where both lab hosts are (the no-ssh floor)."""
    return ["sh", "-c", line]


def hand_loop(names: list[str], root: str, target: str, on: On = here) -> float:
    """One mbuffer pipeline per dataset, parents first, as a shell loop would run them, each
    line started by `on`."""
    t0 = time.monotonic()
    for name in names:
        dest = target + name[len(root):]
        port = free_port()
        rx = subprocess.Popen(
            on("lab-dst", f"mbuffer -q -s {BLOCK} -m {BUFFER} -I 127.0.0.1:{port} "
                          f"| zfs receive {dest}"), stderr=subprocess.DEVNULL)
        wait_until(lambda port=port: port_listening(port), 10, 0.01)
        subprocess.run(
            on("lab-src", f"zfs send -p {name}@bench | mbuffer -q -s {BLOCK} -m {BUFFER} "
                          f"-O 127.0.0.1:{port}"), check=True, stderr=subprocess.DEVNULL)
        if rx.wait(120) != 0:
            raise RuntimeError(f"the hand-built receive into {dest} failed")
        if name == root:
            # As zmigrate does on zfs-fuse: the copy's root does not mount, so no child's
            # mount point directory modifies a parent.
            subprocess.run(on("lab-dst", f"zfs set mountpoint=none {dest}"), check=True)
    return time.monotonic() - t0


def ssh_hand_loop(lab: Lab, names: list[str], root: str, target: str) -> float:
    """The same loop as a user runs it between two hosts: each pipeline started with `ssh HOST
    '...'`, over OpenSSH ControlMaster connections opened beforehand (the fastest hand-written
    way: no key exchange per dataset)."""
    mux = Path(tempfile.mkdtemp(prefix="zmigrate-bench-mux-"))
    base = ["ssh", "-F", str(lab.ssh_config), "-o", f"UserKnownHostsFile={lab.known_hosts}",
            "-o", "ControlMaster=auto", "-o", f"ControlPath={mux}/%r@%h:%p",
            "-o", "ControlPersist=120"]
    try:
        for alias in ("lab-src", "lab-dst"):
            subprocess.run([*base, alias, "true"], check=True, timeout=30)
        return hand_loop(names, root, target, lambda host, line: [*base, host, line])
    finally:
        for alias in ("lab-src", "lab-dst"):
            subprocess.run([*base, "-O", "exit", alias], capture_output=True, timeout=30)
        shutil.rmtree(mux, ignore_errors=True)


def with_zmigrate(root: str, target: str, parallel: int | None,
                  snapshot: str | None = "bench", transport: Transport | None = None) -> float:
    """`send -r` of `root` up to @`snapshot` (None: one taken now), as the CLI runs it."""
    t0 = time.monotonic()
    src, dst = connect_both(HostSpec("lab-src"), HostSpec("lab-dst"))  # as the CLI does
    try:
        options = Options(buffer_size=16 * MiB, readonly=False, transport=transport)
        TreeJob(src, dst, TreeRequest(root, target, snapshot, options=options,
                                      parallel=parallel)).run()
    finally:
        src.close()
        dst.close()
    return time.monotonic() - t0


def make_tree(src_name: str, mountpoint: Path, count: int, kib: int = 1024) -> list[str]:
    """`count` datasets over three levels (t, t/gN, t/gN/dM), each with one file of `kib`."""
    root = f"{src_name}/t"
    zfs("create", root)
    names = [root]
    for i in range(count - 1):
        group = f"{root}/g{i % 5}"
        name = group if group not in names else f"{group}/d{i}"
        zfs("create", name)
        names.append(name)
    for name in names:
        write_file(mountpoint / name[len(src_name) + 1:] / "f", kib * 1024)
    return names


def write_file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))


def ssh_catch_up(lab: Lab, changed: list[str], root: str, target: str,
                 bases: dict[str, str], snap: str) -> float:
    """The hand loop of a catch-up: a snapshot of the tree, then `zfs send -i` of the changed
    datasets only, each from its newest snapshot on the copy (`bases`, updated)."""
    t0 = time.monotonic()
    zfs("snapshot", "-r", f"{root}@{snap}")
    mux = Path(tempfile.mkdtemp(prefix="zmigrate-bench-mux-"))
    base = ["ssh", "-F", str(lab.ssh_config), "-o", f"UserKnownHostsFile={lab.known_hosts}",
            "-o", "ControlMaster=auto", "-o", f"ControlPath={mux}/%r@%h:%p",
            "-o", "ControlPersist=120"]
    try:
        for alias in ("lab-src", "lab-dst"):
            subprocess.run([*base, alias, "true"], check=True, timeout=30)
        for name in changed:
            dest = target + name[len(root):]
            port = free_port()
            rx = subprocess.Popen(
                # -F: zfs-fuse mounts what it receives, and a mounted copy counts as modified.
                [*base, "lab-dst", f"mbuffer -q -s {BLOCK} -m {BUFFER} -I 127.0.0.1:{port} "
                                   f"| zfs receive -F {dest}"], stderr=subprocess.DEVNULL)
            wait_until(lambda port=port: port_listening(port), 10, 0.01)
            subprocess.run(
                [*base, "lab-src", f"zfs send -i @{bases[name]} {name}@{snap} | mbuffer -q "
                                   f"-s {BLOCK} -m {BUFFER} -O 127.0.0.1:{port}"],
                check=True, stderr=subprocess.DEVNULL)
            if rx.wait(120) != 0:
                raise RuntimeError(f"the hand-built receive into {dest} failed")
            bases[name] = snap
    finally:
        for alias in ("lab-src", "lab-dst"):
            subprocess.run([*base, "-O", "exit", alias], capture_output=True, timeout=30)
        shutil.rmtree(mux, ignore_errors=True)
    return time.monotonic() - t0


def catch_up_case(lab: Lab, pools: Callable[..., Any], count: int, changed: int,
                  rounds: int) -> None:
    """The catch-up of a `count`-dataset tree where `changed` changed, side by side."""
    src = pools("bcsrc", size_mb=256 + count)
    dst = pools("bcdst", size_mb=256 + 3 * count)
    names = make_tree(src.name, src.mountpoint, count, kib=64)
    root = f"{src.name}/t"
    zfs("snapshot", "-r", f"{root}@bench")
    copies = {"zmigrate": f"{dst.name}/zm", "hand loop over ssh": f"{dst.name}/hand"}
    with_zmigrate(root, copies["zmigrate"], None)
    hand = copies["hand loop over ssh"]
    subprocess.run(f"zfs send -R {root}@bench | zfs receive {hand}",  # noqa: S602 - lab names
                   shell=True, check=True)
    bases = dict.fromkeys(names, "bench")
    times: dict[str, list[float]] = {v: [] for v in copies}
    step = max(1, len(names) // changed)
    for r in range(rounds):
        touched = names[r % step::step][:changed]
        for name in touched:
            write_file(src.mountpoint / name[len(src.name) + 1:] / f"r{r}", 256 * 1024)
        for v in (list(copies) if r % 2 == 0 else list(reversed(copies))):
            # Each one on a quiet pool: the hand loop's untimed clean-up (195 destroys) is
            # still being written out for seconds after it, and would land on the next run.
            quiet_machine()
            if v == "zmigrate":
                wait_until(lambda: snapshot_name() not in zfs("list", "-H", "-t", "snapshot",
                                                              "-o", "name", "-r", root), 3)
                times[v].append(with_zmigrate(root, copies[v], None, snapshot=None))
            else:
                times[v].append(ssh_catch_up(lab, touched, root, copies[v], bases, f"h{r}"))
                # (Untimed) the hand loop's snapshot off the datasets it did not send: left,
                # it would be another tool's newer snapshot that zmigrate's copy must carry.
                for name in names:
                    if name not in touched:
                        zfs("destroy", f"{name}@h{r}")
        print(f"round {r + 1}: " + "   ".join(f"{v} {times[v][-1]:.2f} s" for v in copies),
              flush=True)
    med = {v: statistics.median(times[v]) for v in copies}
    print(f"\ncatch-up of {len(names)} datasets, {changed} changed, {rounds} rounds (medians)")
    for v in copies:
        print(f"  {v:22s} {med[v]:6.2f} s")
    print(f"ratio zmigrate / hand loop over ssh (changed ones only): "
          f"{med['zmigrate'] / med['hand loop over ssh']:.2f} (target <= 1.0); "
          f"zmigrate {med['zmigrate']:.1f} s (target <= 15 s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--catch-up", action="store_true")
    ap.add_argument("--changed", type=int, default=5)
    args = ap.parse_args()
    if args.catch_up:
        with bench_lab("zmigrate-bench-catchup-") as (lab, pools):
            catch_up_case(lab, pools, args.datasets or 200, args.changed, args.rounds)
        return 0
    args.datasets = args.datasets or 30
    with bench_lab("zmigrate-bench-tree-") as (lab, pools):
        src = pools("btsrc", size_mb=256 + 2 * args.datasets)
        dst = pools("btdst", size_mb=256 + 8 * args.datasets)
        root = f"{src.name}/t"
        names = make_tree(src.name, src.mountpoint, args.datasets)
        zfs("snapshot", "-r", f"{root}@bench")
        variants = ("hand loop", "hand loop over ssh", "zmigrate",
                    f"zmigrate --parallel {args.parallel}", "zmigrate --parallel 1")
        times: dict[str, list[float]] = {v: [] for v in variants}
        for r in range(args.rounds + 1):  # round 0 warms the caches, not counted
            k = r % len(variants)
            order = variants[k:] + variants[:k]
            for v in order:
                target = f"{dst.name}/r{r}-{variants.index(v)}"
                if v == "hand loop":
                    took = hand_loop(names, root, target)
                elif v == "hand loop over ssh":
                    took = ssh_hand_loop(lab, names, root, target)
                else:
                    parallel = (None if v == "zmigrate" else 1 if v.endswith(" 1")
                                else args.parallel)  # the default: as the hosts' memory allows
                    took = with_zmigrate(root, target, parallel)
                zfs("destroy", "-r", target)
                if r:
                    times[v].append(took)
            if r:
                print(f"round {r}: " + "   ".join(f"{v} {times[v][-1]:.2f} s" for v in variants),
                      flush=True)
        med = {v: statistics.median(times[v]) for v in variants}
        n = len(names)
        print(f"\n{n} datasets of 1 MiB, {args.rounds} rounds (medians)")
        for v in variants:
            print(f"  {v:22s} {med[v]:6.2f} s")
        by_ssh = med["hand loop over ssh"]
        print(f"ratio zmigrate (default) / hand loop over ssh: {med['zmigrate'] / by_ssh:.2f} "
              "(target <= 1.0; the same pipelines between two hosts, as a user runs them)")
        print(f"ratio zmigrate / hand loop on one machine: "
              f"{med['zmigrate'] / med['hand loop']:.2f} (no ssh at all: the floor)")
        print(f"overhead per dataset: {(med['zmigrate'] - med['hand loop']) / n:.3f} s "
              f"(target < 0.3 s), of which ssh by hand: {(by_ssh - med['hand loop']) / n:.3f} s")
        par, seq = variants[3], variants[4]
        print(f"--parallel {args.parallel}: {med[par]:.2f} s; --parallel 1: {med[seq]:.2f} s, "
              f"{med[seq] / by_ssh:.2f}x the ssh loop; the default is "
              f"{med[seq] / med['zmigrate']:.2f}x faster than one at a time")
    return 0


if __name__ == "__main__":
    sys.exit(main())

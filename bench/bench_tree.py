"""zmigrate send -r on a tree of 30 small datasets against a hand-written shell loop of the same
30 mbuffer pipelines, side by side; and what --parallel gains.

Runs on the lab (root, zfs-fuse, two sshd on 127.0.0.1). The hand loop receives dataset after
dataset, parents first, with the same block and buffer sizes, twice: once on this machine with
no ssh at all (the floor), once as a user runs it between two hosts, each pipeline started by
`ssh HOST '...'` over ControlMaster connections opened beforehand; zmigrate goes through its two SSH
control sessions and plans, verifies and records each dataset. Prints the wall times, the ratio
(target <= 1.5) and zmigrate's overhead per dataset (target < 0.3 s). Not a timed test.

    sudo .venv/bin/python bench/bench_tree.py [--datasets 30] [--rounds 3] [--parallel 4]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402
from lab.sshd import Lab  # noqa: E402
from lab.util import free_port, port_listening, wait_until, write_random_files, zfs  # noqa: E402

from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.ssh import HostSpec, connect  # noqa: E402
from zmigrate.engine.tree import TreeJob, TreeRequest  # noqa: E402
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


def with_zmigrate(root: str, target: str, parallel: int | None) -> float:
    t0 = time.monotonic()
    src, dst = connect(HostSpec("lab-src")), connect(HostSpec("lab-dst"))
    try:
        options = Options(buffer_size=16 * MiB, readonly=False)
        TreeJob(src, dst, TreeRequest(root, target, "bench", options=options,
                                      parallel=parallel)).run()
    finally:
        src.close()
        dst.close()
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parallel", type=int, default=4)
    args = ap.parse_args()
    with bench_lab("zmigrate-bench-tree-") as (lab, pools):
        src = pools("btsrc", size_mb=256 + 2 * args.datasets)
        dst = pools("btdst", size_mb=256 + 8 * args.datasets)
        root = f"{src.name}/t"
        zfs("create", root)
        names = [root]
        for i in range(args.datasets - 1):
            # Three levels: t, t/gN, t/gN/dM.
            group = f"{root}/g{i % 5}"
            name = group if group not in names else f"{group}/d{i}"
            zfs("create", name)
            names.append(name)
        for name in names:
            write_random_files(src.mountpoint / name[len(src.name) + 1:] / "f", 1, files=1)
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

"""zmigrate send -r against a hand-written shell loop of the same mbuffer pipelines, side by side.

A tree of N small datasets (1 MiB each) on the lab (root, zfs-fuse, two sshd on 127.0.0.1) is
copied by zmigrate over its two SSH control sessions, and by a loop that runs, per dataset,
`mbuffer -I | zfs receive` and `zfs send | mbuffer -O` (the field notes' recipe, no checks).
Rounds alternate the order. Prints each round's times, the ratio zmigrate / loop (target
<= 1.5) and zmigrate's overhead per dataset (target < 0.3 s).

    sudo .venv/bin/python bench/bench_tree.py [--datasets 30] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lab.sshd import SshdLab  # noqa: E402
from lab.util import free_port, port_listening, wait_until, write_random_files, zfs  # noqa: E402
from lab.zfsfuse import PoolFactory, ensure_daemon, stop_daemon  # noqa: E402

from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.ssh import HostSpec, connect  # noqa: E402
from zmigrate.engine.tree import TreeJob, TreeRequest  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402

BLOCK, BUFFER = "128k", "16M"


def _destroy(name: str) -> None:
    for _ in range(50):
        if subprocess.run(["zfs", "destroy", "-rf", name], capture_output=True).returncode == 0:
            break
        time.sleep(0.2)  # zfs-fuse may call a just-received dataset busy for a moment
    os.sync()


def hand_loop(names: list[str], root: str, target: str) -> float:
    """The datasets one by one, each its own listener and sender; returns seconds."""
    t0 = time.monotonic()
    for name in names:
        dest = target + name[len(root):]
        port = free_port()
        rx = subprocess.Popen(  # noqa: S602 - fixed bench pipeline over lab names
            f"mbuffer -q -s {BLOCK} -m {BUFFER} -I 127.0.0.1:{port} | zfs receive {dest}",
            shell=True, stderr=subprocess.DEVNULL)
        wait_until(lambda p=port: port_listening(p), 10, 0.01)  # type: ignore[misc]
        subprocess.run(  # noqa: S602
            f"zfs send {name}@s | mbuffer -q -s {BLOCK} -m {BUFFER} -O 127.0.0.1:{port}",
            shell=True, check=True, stderr=subprocess.DEVNULL)
        if rx.wait(120) != 0:
            raise RuntimeError(f"the hand-built receive into {dest} failed")
    return time.monotonic() - t0


def with_zmigrate(root: str, target: str) -> float:
    src, dst = connect(HostSpec("lab-src")), connect(HostSpec("lab-dst"))
    try:
        job = TreeJob(src, dst, TreeRequest(root, target, snapshot="s", options=Options(
            buffer_size=16 * MiB, readonly=False)))
        t0 = time.monotonic()
        job.run()
        return time.monotonic() - t0
    finally:
        src.close()
        dst.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    daemon = ensure_daemon()
    work = Path(tempfile.mkdtemp(prefix="zmigrate-bench-tree-"))
    lab = SshdLab(work / "lab")
    pools = PoolFactory(work / "pools")
    try:
        the_lab = lab.start()
        os.environ["ZMIGRATE_SSH_CONFIG"] = str(the_lab.ssh_config)
        os.environ["ZMIGRATE_KNOWN_HOSTS"] = str(the_lab.known_hosts)
        src, dst = pools("src", size_mb=512), pools("dst", size_mb=512)
        root = f"{src.name}/t"
        zfs("create", root)
        names = [root] + [f"{root}/d{i:02d}" for i in range(args.datasets - 1)]
        for name in names[1:]:
            zfs("create", name)
        for name in names:
            write_random_files(src.mountpoint / name[len(src.name) + 1:] / "f", 1, files=1)
        zfs("snapshot", "-r", f"{root}@s")
        ours, loop = [], []
        for r in range(args.rounds):
            order = ("zmigrate", "loop") if r % 2 == 0 else ("loop", "zmigrate")
            for which in order:
                target = f"{dst.name}/{which}"
                if which == "zmigrate":
                    ours.append(with_zmigrate(root, target))
                else:
                    loop.append(hand_loop(names, root, target))
                _destroy(target)
            print(f"round {r + 1}: zmigrate {ours[-1]:.2f} s, hand loop {loop[-1]:.2f} s, "
                  f"ratio {ours[-1] / loop[-1]:.2f}")
        z, h = statistics.median(ours), statistics.median(loop)
        print(f"\n{len(names)} datasets of 1 MiB, median of {args.rounds} rounds:")
        print(f"  zmigrate {z:.2f} s, hand loop {h:.2f} s: ratio {z / h:.2f} (target <= 1.5)")
        print(f"  zmigrate's overhead per dataset: {(z - h) / len(names):.3f} s (target < 0.3)")
        return 0
    finally:
        pools.cleanup()
        lab.stop()
        stop_daemon(daemon)


if __name__ == "__main__":
    sys.exit(main())

"""The relay transport against tcp and ssh on the lab, side by side.

Relay moves the stream through this computer (up the source's SSH control session, down the
destination's), so it is slower than tcp; it should stay within 2x of the ssh transport (the
source's own ssh to the destination), which also encrypts. Runs on the lab (root, zfs-fuse, two
sshd on 127.0.0.1), same data and buffers, rotating order so drift on a shared machine hits each
transport alike. Prints each median and the ratios relay/tcp and relay/ssh (target >= 0.5).

    sudo .venv/bin/python bench/bench_relay.py [--mb 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402
from bench_send import _destroy  # noqa: E402
from lab.sshd import Lab  # noqa: E402
from lab.util import write_random_files, zfs  # noqa: E402

from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request  # noqa: E402
from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.transports import Transport  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402

TRANSPORTS = (Transport.TCP, Transport.SSH, Transport.RELAY)


def send(lab: Lab, snapshot: str, target: str, transport: Transport) -> float:
    """One zmigrate send; returns the streaming seconds as the job measured them."""
    ssh_options = tuple("-o" + o for o in lab.ssh_options()[1::2])
    options = Options(transport=transport, buffer_size=128 * MiB, readonly=False,
                      ssh_options=ssh_options if transport is Transport.SSH else ())
    src, dst = connect(HostSpec("lab-src")), connect(HostSpec("lab-dst"))
    try:
        return Job(src, dst, Request(snapshot, target, options)).run().seconds
    finally:
        src.close()
        dst.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with bench_lab("zmigrate-bench-relay-") as (lab, pools):
        src = pools("rsrc", size_mb=args.mb * 2 + 256)
        dst = pools("rdst", size_mb=args.mb * 3 + 512)
        zfs("create", f"{src.name}/data")
        write_random_files(src.mountpoint / "data", args.mb, files=20)
        snapshot = f"{src.name}/data@bench"
        zfs("snapshot", snapshot)
        size = args.mb * MiB
        for t in TRANSPORTS:  # warm-up, not counted
            send(lab, snapshot, f"{dst.name}/warm-{t.value}", t)
            _destroy(f"{dst.name}/warm-{t.value}")
        seconds: dict[Transport, list[float]] = {t: [] for t in TRANSPORTS}
        for i in range(args.rounds):
            order = TRANSPORTS[i % 3:] + TRANSPORTS[:i % 3]
            line = []
            for t in order:
                target = f"{dst.name}/r{i}-{t.value}"
                took = send(lab, snapshot, target, t)
                _destroy(target)
                seconds[t].append(took)
                line.append(f"{t.value} {size / took / MiB:6.1f} MiB/s")
            print(f"round {i + 1}: " + "   ".join(line), flush=True)
        rate = {t: size / statistics.median(seconds[t]) for t in TRANSPORTS}
        print(f"\n{args.mb} MiB, {args.rounds} rounds")
        for t in TRANSPORTS:
            print(f"  {t.value:6s} median {rate[t] / MiB:6.1f} MiB/s")
        print(f"relay/tcp {rate[Transport.RELAY] / rate[Transport.TCP]:.2f}; "
              f"relay/ssh {rate[Transport.RELAY] / rate[Transport.SSH]:.2f} (target >= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

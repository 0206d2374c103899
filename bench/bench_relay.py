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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab, side_by_side  # noqa: E402

from zmigrate.engine.transports import Transport  # noqa: E402

TRANSPORTS = (Transport.TCP, Transport.SSH, Transport.RELAY)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with bench_lab("zmigrate-bench-relay-") as (lab, pools):
        _snapshot, _dst, rate = side_by_side(lab, pools, args.mb, args.rounds, TRANSPORTS)
        print(f"relay/tcp {rate[Transport.RELAY] / rate[Transport.TCP]:.2f}; "
              f"relay/ssh {rate[Transport.RELAY] / rate[Transport.SSH]:.2f} (target >= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""zmigrate send (tcp) against the hand-built pipeline from the field notes, side by side.

Runs on the lab (root, zfs-fuse, two sshd on 127.0.0.1): the same pools, the same data, the same
block and buffer sizes, in rotating order so drift on a shared machine hits each variant alike.
Prints the throughput ratio (target >= 0.96), the same with the optional md5 check of the stream,
zmigrate's fixed cost (its wall time, connecting to both hosts included, less the stream's time;
target <= 0.5 s) beside the hand pipeline's, the wall time ratio, and the time from start to
first byte.

    sudo .venv/bin/python bench/bench_send.py [--mb 300] [--rounds 6]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402
from bench_lab import destroy_copy as _destroy  # noqa: E402
from lab.util import (  # noqa: E402
    established_to,
    free_port,
    port_listening,
    wait_until,
    write_random_files,
    zfs,
)

from zmigrate.engine.events import PlanReady, StageChanged  # noqa: E402
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.hosts.pair import connect_both
from zmigrate.engine.job import Job, Request  # noqa: E402
from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.units import MiB

BLOCK, BUFFER = "128k", "256M"


WALL: dict[str, list[float]] = {"zmigrate": [], "hand-built": []}  # each run's wall seconds


def hand_built(snapshot: str, target: str) -> float:
    """The seeds' four-terminal recipe, as two local pipelines; returns the streaming seconds
    (from starting the sender until the receiver exits), like zmigrate's own figure."""
    began = time.monotonic()
    port = free_port()
    rx = subprocess.Popen(  # noqa: S602 - fixed bench pipeline over validated lab names
        f"mbuffer -q -s {BLOCK} -m {BUFFER} -I 127.0.0.1:{port} | zfs receive {target}",
        shell=True, stderr=subprocess.DEVNULL)
    wait_until(lambda: port_listening(port), 10, 0.02)
    t0 = time.monotonic()
    subprocess.run(  # noqa: S602
        f"zfs send {snapshot} | mbuffer -q -s {BLOCK} -m {BUFFER} -O 127.0.0.1:{port}",
        shell=True, check=True, stderr=subprocess.DEVNULL)
    if rx.wait(120) != 0:
        raise RuntimeError(f"the hand-built receive into {target} failed")
    WALL["hand-built"].append(time.monotonic() - began)
    return time.monotonic() - t0


def with_zmigrate(snapshot: str, target: str, *, verify_hash: bool = False
                  ) -> tuple[float, float, float]:
    """zmigrate over two SSH control sessions.

    Returns (streaming seconds as the job measured them, from starting the sender until both
    ends are done; seconds from start to the sender starting, the listener being up; seconds from
    start to the stream's TCP connection being established - the first byte follows at once,
    `zfs send` writes its first byte in well under 10 ms here).
    """
    marks: dict[str, float] = {}
    done = threading.Event()
    t0 = time.monotonic()

    def connected(port: int) -> None:
        # ss every ~15 ms from this process: when the sender's mbuffer gets through.
        while not done.is_set() and time.monotonic() - t0 < 60:
            if established_to(port):
                marks.setdefault("connected", time.monotonic() - t0)
                return
            time.sleep(0.01)

    def watch(event: object) -> None:
        now = time.monotonic() - t0
        if isinstance(event, PlanReady) and event.plan.port is not None:
            threading.Thread(target=connected, args=(event.plan.port,), daemon=True).start()
        if isinstance(event, StageChanged) and event.stage == "sending":
            marks.setdefault("sending", now)

    src, dst = connect_both(HostSpec("lab-src"), HostSpec("lab-dst"))  # as the CLI does
    try:
        options = Options(buffer_size=256 * MiB, readonly=False, verify_hash=verify_hash)
        summary = Job(src, dst, Request(snapshot, target, options), watch).run()
    finally:
        done.set()
        src.close()
        dst.close()
    if not verify_hash:
        WALL["zmigrate"].append(time.monotonic() - t0)
    return (summary.seconds, marks.get("sending", float("nan")),
            marks.get("connected", float("nan")))


VARIANTS = ("zmigrate", "hand-built", "zmigrate --hash")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--rounds", "--pairs", type=int, default=6,
                    help="rounds of the three variants; each round starts with the next one")
    args = ap.parse_args()
    with bench_lab("zmigrate-bench-") as (lab, pools):
        src = pools("bsrc", size_mb=args.mb * 2 + 256)
        dst = pools("bdst", size_mb=args.mb * 3 + 512)
        zfs("create", f"{src.name}/data")
        write_random_files(src.mountpoint / "data", args.mb, files=30)
        snapshot = f"{src.name}/data@bench"
        zfs("snapshot", snapshot)
        size = args.mb * MiB
        # A warm-up run of each kind, not counted: the first read of the pool's image files.
        for variant in VARIANTS:
            target = f"{dst.name}/warm-{VARIANTS.index(variant)}"
            if variant == "hand-built":
                hand_built(snapshot, target)
            else:
                with_zmigrate(snapshot, target, verify_hash=variant.endswith("--hash"))
            _destroy(target)
        seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for runs in WALL.values():
            runs.clear()  # the warm-up runs
        starts: list[float] = []
        firsts: list[float] = []
        for i in range(args.rounds):
            # Each round in another order (a Latin square over the rounds), so neither a cold
            # cache nor a pool filling up within a round favours one variant.
            order = VARIANTS[i % 3:] + VARIANTS[:i % 3]
            line = []
            for variant in order:
                target = f"{dst.name}/r{i}-{VARIANTS.index(variant)}"
                if variant == "hand-built":
                    took = hand_built(snapshot, target)
                else:
                    took, start, first = with_zmigrate(snapshot, target,
                                                       verify_hash=variant.endswith("--hash"))
                    if variant == "zmigrate":
                        starts.append(start)
                        firsts.append(first)
                _destroy(target)
                seconds[variant].append(took)
                line.append(f"{variant} {size / took / MiB:6.1f} MiB/s")
            print(f"round {i + 1}: " + "   ".join(line), flush=True)

        def ratios(variant: str) -> list[float]:
            # Throughput ratio variant / hand-built = time_hand / time_variant, round by round.
            return [h / v for h, v in zip(seconds["hand-built"], seconds[variant], strict=True)]

        def spread(xs: list[float]) -> str:
            return (f"median {statistics.median(xs):.3f} (min {min(xs):.3f}, "
                    f"max {max(xs):.3f})")

        print(f"\n{args.mb} MiB, {args.rounds} rounds, block {BLOCK}, buffer {BUFFER}")
        for variant in VARIANTS:
            print(f"  {variant:16s} median {size / statistics.median(seconds[variant]) / MiB:6.1f}"
                  " MiB/s")
        print(f"throughput ratio zmigrate/hand-built: {spread(ratios('zmigrate'))}; "
              "target >= 0.96")
        print("  with --hash (md5 of the stream on both ends): "
              f"{spread(ratios('zmigrate --hash'))}")
        fixed = [w - t for w, t in zip(WALL["zmigrate"], seconds["zmigrate"], strict=True)]
        hand_fixed = [w - t for w, t in zip(WALL["hand-built"], seconds["hand-built"],
                                            strict=True)]
        walls = [h / z for h, z in zip(WALL["hand-built"], WALL["zmigrate"], strict=True)]
        print(f"fixed cost (wall time less the stream's, connecting and checking included): "
              f"zmigrate {spread(fixed)} s, target <= 0.5 s; the hand-built pipeline "
              f"{spread(hand_fixed)} s")
        print(f"wall time ratio hand-built/zmigrate: {spread(walls)}")
        print(f"zmigrate start to first byte (target < 1.5 s; connecting both hosts, probing, "
              f"planning, listener up): sender started after median "
              f"{statistics.median(starts):.2f} s (min {min(starts):.2f}, max {max(starts):.2f}); "
              f"its stream connected after median {statistics.median(firsts):.2f} s "
              f"(max {max(firsts):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

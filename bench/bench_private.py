"""The private transport against cleartext tcp (and ssh) on the lab's loopback, side by side.

Two measures in one run, rotating order so drift on a shared machine hits each alike:
- the stage alone: the same bytes from /dev/urandom's copy in memory through mbuffer -O/-I
  (tcp's wire) and through openssl s_client/s_server with the private transport's own options
  (its wire), no zfs: what the TLS stage costs on this CPU;
- whole jobs: zmigrate sends of one dataset over tcp, private and ssh (zfs-fuse included).
Prints each median and the ratios private/tcp (issue 33's target: >= 0.9) and private/ssh.

With --shaped RATE (tc notation, e.g. 400mbit) it also sends over the lab's shaped veth to
lab-far (tests/lab/shaped.py), tcp and private side by side.

With --tree N it also sends a tree of N small datasets (64 KiB each) with `send -r`, tcp and
private side by side, whole jobs: what a step's start (the keys made and handed over, the
handshake) costs where a pool move has hundreds of datasets.

After each side-by-side run, `zmigrate doctor --transport private` on the same path: its
predicted private/tcp (report.private_cost) beside the measured one (issue 33: within 25 %).

    sudo .venv/bin/python bench/bench_private.py [--mb 200] [--rounds 3] [--shaped 400mbit]
                                                 [--tree 30]

What the loopback ratio is made of (2-core lab, 400 MiB through the wire alone, CPU of all its
processes, 2026-11-30): tcp 0.40-0.57 s; the same two mbuffers with socat ends and no TLS
(`TCP:`/`TCP-LISTEN:`) 1.06-1.20 s; with TLS 1.18-1.35 s (user time 0.27-0.35 s: AES-GCM itself
runs 6 GB/s a core here). So most of what private adds is the stream's two extra hops between
processes (mbuffer to the TLS end and back, 16 KiB records read and written one at a time), not
the cipher; on loopback both hosts' ends share the same two cores with zfs-fuse, and a whole job
gives it up (0.77 of tcp's rate at 300 MiB). A Python TLS end reading 1 MiB at a time through a
memory BIO, with 1 MiB pipes, cost more (1.59-1.66 s). socat's ends with 1 MiB pipes on both
hops (F_SETPIPE_SZ, set by a helper on the pipe each end shares with its mbuffer) changed
nothing in whole jobs (2026-11-30, 4 rounds of 200 MiB side by side: 0.78 against 0.80): the
pipe's wake-ups are not the cost, its copies are. Nor are the system calls (2026-12-01, 400 MiB
through the wire alone, CPU of all its processes by getrusage): tcp 0.22 s; socat's ends 0.84 s;
socat's sender with `openssl s_server` as the listener, which makes none of socat's per-record
diagnostic recv()s, 0.82 s; and with `-max_pipelines 2` (OpenSSL's read-ahead: 3,235 reads
instead of 52,510, and 1,603 selects instead of 25,603) still 0.83 s. AES-128-GCM runs 4.4 GB/s
a core here (`openssl speed`): 0.19 s of the 0.62 s private adds; the rest is the four extra
copies of each byte through the two pipes. This kernel has no TLS offload (tcp_available_ulp
lists only mptcp), the one way to spare them. Between two machines each host carries only its
own end: the shaped 400 Mbit/s link measures 1.00.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab, side_by_side  # noqa: E402
from bench_lab import destroy_copy as _destroy  # noqa: E402
from bench_link import with_zmigrate  # noqa: E402
from bench_tree import make_tree  # noqa: E402
from bench_tree import with_zmigrate as tree_send  # noqa: E402
from lab.shaped import ShapedLab  # noqa: E402
from lab.sshd import Lab  # noqa: E402
from lab.util import zfs  # noqa: E402
from lab.zfsfuse import PoolFactory  # noqa: E402

from zmigrate.engine.transports import Transport  # noqa: E402
from zmigrate.engine.transports.private import bundle, make_keys, unpack_line  # noqa: E402
from zmigrate.engine.transports.tls_ends import client_stage, keys_at, server_stage  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402

TRANSPORTS = (Transport.TCP, Transport.PRIVATE, Transport.SSH)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stage(wire: str, data: Path) -> float:
    """Seconds for `data` through one wire on loopback: "tcp" (mbuffer -O to mbuffer -I), or
    the private transport's own stages by one tool ("socat", "openssl"), keys handed over as in
    a job."""
    port = _port()
    mb = "mbuffer -q -s 128k -m 16M"
    dirs = []
    if wire == "tcp":
        receiver = f"{mb} -I {port} > /dev/null"
        sender = f"{mb} -O 127.0.0.1:{port} < {data}"
    else:
        keys = make_keys()
        base = tempfile.mkdtemp(prefix="zm-bench-")
        src_d, dst_d = f"{base}/s", f"{base}/d"
        dirs.append(base)
        for d, files in ((src_d, keys.source), (dst_d, keys.destination)):
            subprocess.run(["sh", "-c", unpack_line(d)], input=bundle(files), check=True)
        receiver = f"{keys_at(dst_d)}{server_stage(port, wire)} | {mb} > /dev/null"
        sender = f"{keys_at(src_d)}{mb} < {data} | {client_stage(f'127.0.0.1:{port}', wire)}"
    rx = subprocess.Popen(["sh", "-c", receiver])
    try:
        time.sleep(0.5)
        t0 = time.monotonic()
        subprocess.run(["sh", "-c", sender], check=True)
        rx.wait(120)
        return time.monotonic() - t0
    finally:  # a failed round leaves neither its receiver nor its keys
        if rx.poll() is None:
            rx.kill()
            rx.wait(10)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def stages(mb: int, rounds: int) -> None:
    """The wire stages alone, side by side."""
    with tempfile.NamedTemporaryFile(prefix="zm-bench-") as f:
        f.write(os.urandom(mb * MiB))
        f.flush()
        wires = ("tcp", "socat", "openssl")
        seconds: dict[str, list[float]] = {w: [] for w in wires}
        for i in range(rounds):
            for w in wires[i % 3:] + wires[:i % 3]:
                seconds[w].append(stage(w, Path(f.name)))
        rate = {w: mb / statistics.median(seconds[w]) for w in wires}
        print(f"stage alone ({mb} MiB in memory, {rounds} rounds): "
              + ", ".join(f"{w} {rate[w]:.1f} MiB/s" for w in wires)
              + f"; socat/tcp {rate['socat'] / rate['tcp']:.2f}, "
              f"openssl/tcp {rate['openssl'] / rate['tcp']:.2f}", flush=True)


def doctor_prediction(env: dict[str, str], source: str, destination: str,
                      measured: float) -> None:
    """The doctor's predicted private/tcp on this path, beside the measured one."""
    argv = [sys.executable, "-m", "zmigrate", "doctor", source, destination, "--seconds", "3",
            "--transport", "private", "--no-ssh", "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, check=False,
                       stdin=subprocess.DEVNULL, timeout=600)
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    cost = events[-1].get("private_cost") if events else None
    if not cost:
        print(f"  doctor: no prediction (exit {r.returncode}): {r.stderr.strip()[-300:]}")
        return
    off = cost["ratio"] / measured - 1
    print(f"  doctor predicts tcp {cost['tcp'] / MiB:.1f}, private {cost['private'] / MiB:.1f} "
          f"MiB/s: private/tcp {cost['ratio']:.2f} predicted, {measured:.2f} measured "
          f"({off:+.0%}; target within 25 %); TLS CPU a GiB: {cost['extra_cpu_per_gib']}",
          flush=True)


def shaped(lab: Lab, snapshot: str, pool: str, args: argparse.Namespace) -> None:
    """tcp and private to lab-far over the shaped veth, side by side."""
    far = ShapedLab(Path(lab.ssh_config).parent / "far-private", lab, rate=args.shaped)
    far.start()
    try:
        ways = ("tcp", "private")
        seconds: dict[str, list[float]] = {w: [] for w in ways}
        for i in range(args.rounds):
            for w in ways[i % 2:] + ways[:i % 2]:
                target = f"{pool}/far{i}-{w}"
                took, _ = with_zmigrate(far, snapshot, target, ["--transport", w])
                _destroy(target)
                seconds[w].append(took)
        rate = {w: args.mb / statistics.median(seconds[w]) for w in ways}
        ratio = rate["private"] / rate["tcp"]
        print(f"shaped {args.shaped}: tcp {rate['tcp']:.1f} MiB/s, private "
              f"{rate['private']:.1f} MiB/s, private/tcp {ratio:.2f}", flush=True)
        doctor_prediction(far.env(), f"lab-src:{snapshot}", f"lab-far:{pool}", ratio)
    finally:
        far.stop()


def tree(pools: PoolFactory, count: int, rounds: int) -> None:
    """`send -r` of a tree of `count` small datasets over tcp and private, side by side."""
    src = pools("ptsrc", size_mb=256 + count)
    dst = pools("ptdst", size_mb=256 + 3 * count)
    make_tree(src.name, src.mountpoint, count, kib=64)
    root = f"{src.name}/t"
    zfs("snapshot", "-r", f"{root}@bench")
    ways = (Transport.TCP, Transport.PRIVATE)
    seconds: dict[Transport, list[float]] = {w: [] for w in ways}
    for i in range(rounds):
        for w in ways[i % 2:] + ways[:i % 2]:
            target = f"{dst.name}/t{i}-{w.value}"
            seconds[w].append(tree_send(root, target, None, transport=w))
            _destroy(target)
    took = {w: statistics.median(seconds[w]) for w in ways}
    print(f"tree of {count} datasets, whole jobs: tcp {took[Transport.TCP]:.1f} s, private "
          f"{took[Transport.PRIVATE]:.1f} s, private/tcp time "
          f"{took[Transport.PRIVATE] / took[Transport.TCP]:.2f}; private's extra a dataset "
          f"{(took[Transport.PRIVATE] - took[Transport.TCP]) / count * 1000:.0f} ms", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shaped", default="", metavar="RATE")
    ap.add_argument("--no-stage", action="store_true", help="skip the stages alone")
    ap.add_argument("--tree", type=int, default=0, metavar="N",
                    help="also a tree of N small datasets, whole jobs")
    args = ap.parse_args()
    if not args.no_stage:
        stages(args.mb, args.rounds)
    with bench_lab("zmigrate-bench-private-") as (lab, pools):
        snapshot, dst, rate = side_by_side(lab, pools, args.mb, args.rounds, TRANSPORTS)
        ratio = rate[Transport.PRIVATE] / rate[Transport.TCP]
        print(f"private/tcp {ratio:.2f} (target >= 0.9); "
              f"private/ssh {rate[Transport.PRIVATE] / rate[Transport.SSH]:.2f}", flush=True)
        doctor_prediction(lab.env(), f"lab-src:{snapshot}", f"lab-dst:{dst}", ratio)
        if args.shaped:
            shaped(lab, snapshot, dst, args)
        if args.tree:
            tree(pools, args.tree, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

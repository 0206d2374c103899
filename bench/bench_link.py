"""The field notes on a link like theirs: 1 Gbit/s, MTU 1500 (the lab's shaped veth to lab-far).

Side by side, in rotating order, the same snapshot into the same pool:
- `zfs send | ssh HOST zfs receive` (the default cipher), and with aes128-gcm;
- zmigrate over ssh (default cipher, then aes128-gcm) and over tcp (its default);
- the hand-built mbuffer pipeline of the field notes (128k blocks, a 1 GiB buffer each side).
It prints each one's rate, its ratio to the hand-built pipeline, and what zmigrate's doctor
(once, before) and the final verdict of each zmigrate run said. Not a timed test.

    sudo .venv/bin/python bench/bench_link.py [--mb 800] [--rounds 2] [--rate 1gbit] [--mtu 1500]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402
from lab.shaped import ShapedLab  # noqa: E402
from lab.util import LabCommandError, free_port, wait_until, write_random_files, zfs  # noqa: E402

from zmigrate.engine.units import MiB  # noqa: E402

FAST = "aes128-gcm@openssh.com"
BLOCK, BUFFER = "128k", "1G"


def _ssh_base(far: ShapedLab) -> list[str]:
    return ["ssh", "-F", str(far.ssh_config), "-o", f"UserKnownHostsFile={far.known_hosts}",
            "-o", "BatchMode=yes"]


def hand_ssh(far: ShapedLab, snapshot: str, target: str, cipher: str | None) -> float:
    ssh = _ssh_base(far) + (["-c", cipher] if cipher else [])
    line = (f"zfs send {snapshot} | {' '.join(ssh)} lab-far zfs receive {target}")
    t0 = time.monotonic()
    subprocess.run(line, shell=True, check=True)  # noqa: S602 - fixed bench pipeline
    return time.monotonic() - t0


def hand_mbuffer(far: ShapedLab, snapshot: str, target: str) -> float:
    port = free_port()
    far_ip = f"{far.net}.2"
    rx = subprocess.Popen(  # noqa: S602
        f"nsenter --net=/run/netns/{far.namespace} sh -c 'mbuffer -q -s {BLOCK} -m {BUFFER} "
        f"-I {port} | zfs receive {target}'", shell=True, stderr=subprocess.DEVNULL)

    def listening() -> bool:
        out = subprocess.run(["ip", "netns", "exec", far.namespace, "ss", "-Hltn"],
                             capture_output=True, text=True, check=False).stdout
        return f":{port} " in out

    wait_until(listening, 10, 0.02)
    t0 = time.monotonic()
    subprocess.run(  # noqa: S602
        f"zfs send {snapshot} | mbuffer -q -s {BLOCK} -m {BUFFER} -O {far_ip}:{port}",
        shell=True, check=True, stderr=subprocess.DEVNULL)
    if rx.wait(600) != 0:
        raise RuntimeError(f"the hand-built receive into {target} failed")
    return time.monotonic() - t0


def with_zmigrate(far: ShapedLab, snapshot: str, target: str,
                  extra: list[str]) -> tuple[float, str]:
    """zmigrate's own time for the transfer, and the final verdict's kind."""
    argv = [sys.executable, "-m", "zmigrate", "send", f"lab-src:{snapshot}", f"lab-far:{target}",
            "--json", "--no-history", "--buffer", BUFFER, *extra]
    r = subprocess.run(argv, capture_output=True, text=True, env=far.env(), check=False)
    if r.returncode != 0:
        raise RuntimeError(r.stderr + r.stdout)
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    done = events[-1]
    final = [e for e in events if e["event"] == "verdict" and e.get("final")]
    return done["seconds"], final[-1]["kind"] if final else "?"


def _destroy(target: str) -> None:
    """zfs-fuse calls a dataset busy for a moment after a receive: try again."""
    for _ in range(20):
        try:
            zfs("destroy", "-r", target)
            return
        except LabCommandError:
            time.sleep(0.5)
    zfs("destroy", "-r", target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=800)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--mtu", type=int, default=1500)
    args = ap.parse_args()
    with bench_lab("zmigrate-bench-link-") as (lab, pools):
        far = ShapedLab(Path(lab.ssh_config).parent / "far", lab, rate=args.rate, mtu=args.mtu)
        far.start()
        try:
            return _run(args, far, pools)
        finally:
            far.stop()


def _run(args: argparse.Namespace, far: ShapedLab, pools: object) -> int:
    assert callable(pools)
    src = pools("blsrc", size_mb=args.mb * 2 + 256)
    dst = pools("bldst", size_mb=args.mb * 4 + 512)
    ds = f"{src.name}/data"
    zfs("create", ds)
    write_random_files(src.mountpoint / "data", args.mb, files=16)
    zfs("snapshot", f"{ds}@s")
    snapshot = f"{ds}@s"
    ssh_opts = [f"--ssh-option=IdentityFile={far.lab.identity}",
                f"--ssh-option=UserKnownHostsFile={far.known_hosts}",
                "--ssh-option=IdentitiesOnly=yes"]
    doctor = subprocess.run(
        [sys.executable, "-m", "zmigrate", "doctor", f"lab-src:{snapshot}", f"lab-far:{dst.name}",
         "--seconds", "5", "--json", "--cipher", FAST, *ssh_opts],
        capture_output=True, text=True, env=far.env(), check=False)
    report = json.loads(doctor.stdout.splitlines()[-1]) if doctor.stdout else {}
    variants: dict[str, object] = {
        "zfs send | ssh | zfs receive": lambda t: (hand_ssh(far, snapshot, t, None), "-"),
        f"... | ssh -c {FAST} | ...": lambda t: (hand_ssh(far, snapshot, t, FAST), "-"),
        "hand-built mbuffer (tcp)": lambda t: (hand_mbuffer(far, snapshot, t), "-"),
        "zmigrate --transport ssh": lambda t: with_zmigrate(
            far, snapshot, t, ["--transport", "ssh", *ssh_opts]),
        f"zmigrate ssh, {FAST}": lambda t: with_zmigrate(
            far, snapshot, t, ["--transport", "ssh", *ssh_opts,
                               f"--ssh-option=Ciphers={FAST}"]),
        "zmigrate (tcp)": lambda t: with_zmigrate(far, snapshot, t, []),
    }
    names = list(variants)
    times: dict[str, list[float]] = {n: [] for n in names}
    kinds: dict[str, str] = {}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            target = f"{dst.name}/r{r}v{names.index(name)}"
            run = variants[name]
            assert callable(run)
            took, kind = run(target)
            times[name].append(took)
            kinds[name] = kind
            _destroy(target)
            print(f"round {r + 1}: {name}: {args.mb / took:.0f} MiB/s", flush=True)
    size = args.mb * MiB
    base = statistics.median(times["hand-built mbuffer (tcp)"])
    print(f"\n{args.mb} MiB over a {args.rate} link, MTU {args.mtu}, {args.rounds} rounds "
          "(medians)")
    stages = {s["name"]: s["rate"] for s in report.get("stages", [])}
    print("doctor: bottleneck " + str(report.get("bottleneck")) + ", expects "
          + (f"{report['expected_rate'] / MiB:.0f} MiB/s" if report.get("expected_rate")
             else "no end-to-end figure") + "; stages "
          + ", ".join(f"{k} {v / MiB:.0f}" for k, v in stages.items() if v))
    for name in names:
        med = statistics.median(times[name])
        print(f"  {name:36s} {size / med / MiB:7.1f} MiB/s  {base / med:5.2f}x hand mbuffer"
              f"  verdict: {kinds[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

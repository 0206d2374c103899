"""Remote commands and wall time of a tree's first copy and catch-up: zmigrate against syncoid.

Runs on the lab (root, zfs-fuse, two sshd on 127.0.0.1). A tree of `--datasets` small datasets
(default 4, the issue's tree) is copied once and caught up once (one dataset changed) by
`zmigrate send -r --snapshot` and by `syncoid -r` (apt install sanoid), each to a copy of its
own, on the lab or (`--openzfs /var/tmp/openzfs-vm`) between the OpenZFS guest's two pools, a
slow host where each command costs most. syncoid 2.1.0 cannot list zfs-fuse's snapshots on a
remote host (its fallback for a zfs without `get -t` puts ssh twice in the line): on the lab
only zmigrate's column is filled.

zmigrate's counts come from its `done` event (`remote_commands`: commands run on each host,
each one a round trip through a shell kept open); syncoid's from an `ssh` wrapper first in its
PATH that logs every ssh it starts (each one a command on a host, over its ControlMaster
connection; the master itself is not counted). Prints both, per dataset, side by side.

    sudo .venv/bin/python bench/bench_commands.py [--datasets 4] [--openzfs WORK]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_lab import bench_lab  # noqa: E402


@dataclass
class Hosts:
    """Where the bench runs: two ssh aliases in `config`, a pool on each."""

    config: Path
    known_hosts: Path
    src: str
    dst: str
    src_pool: str
    dst_pool: str

    def on(self, alias: str, line: str) -> None:
        subprocess.run(["ssh", "-F", str(self.config), alias, line], check=True,
                       capture_output=True, timeout=300)

    def env(self) -> dict[str, str]:
        return {**os.environ, "ZMIGRATE_SSH_CONFIG": str(self.config),
                "ZMIGRATE_KNOWN_HOSTS": str(self.known_hosts)}


def zmigrate_run(h: Hosts, root: str, target: str) -> tuple[float, int]:
    """(wall seconds, remote commands on both hosts) of `send -r --snapshot`."""
    time.sleep(1.1)  # zmigrate's snapshot names have one-second resolution
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "zmigrate", "send", "-r", f"{h.src}:{root}",
                        f"{h.dst}:{target}", "--snapshot", "--json", "--no-history",
                        "--buffer", "16M"], capture_output=True, text=True, env=h.env())
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"zmigrate failed: {r.stderr[-2000:]}")
    done = [json.loads(x) for x in r.stdout.splitlines() if '"event": "done"' in x][-1]
    return took, sum(done["remote_commands"].values())


def syncoid_run(h: Hosts, wrapper_dir: Path, log: Path, root: str,
                target: str) -> tuple[float, int] | str:
    """(wall seconds, ssh commands) of `syncoid -r`, both ends remote as for zmigrate; or why
    it could not run."""
    log.write_text("")
    env = {**os.environ, "PATH": f"{wrapper_dir}:{os.environ['PATH']}"}
    t0 = time.monotonic()
    r = subprocess.run(["syncoid", "-r", "--no-privilege-elevation", f"root@{h.src}:{root}",
                        f"root@{h.dst}:{target}"], env=env, capture_output=True, text=True)
    took = time.monotonic() - t0
    if r.returncode != 0:
        return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    calls = [line for line in log.read_text().splitlines() if line.strip()]
    # The ControlMaster's own start and exit carry no command.
    return took, sum(1 for c in calls if " -M " not in f" {c} " and " -O exit" not in c)


def ssh_wrapper(h: Hosts) -> tuple[Path, Path]:
    """A directory with an `ssh` that logs its arguments and runs the real one with the
    bench's ssh_config."""
    where = Path(tempfile.mkdtemp(prefix="zmigrate-bench-ssh-"))
    log = where / "calls.log"
    real = shutil.which("ssh")
    (where / "ssh").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n"
                               f"exec {real} -F {h.config} \"$@\"\n")
    (where / "ssh").chmod(0o755)
    return where, log


def compare(h: Hosts, count: int) -> None:
    """Both tools, first copy then catch-up, each to a copy of its own; prints the table."""
    root = f"{h.src_pool}/zmbench-t"
    names = [root] + [f"{root}/d{i}" for i in range(count - 1)]
    h.on(h.src, "; ".join(f"zfs create {n} && head -c 262144 /dev/urandom > "
                          f"\"$(zfs get -H -o value mountpoint {n})/f\"" for n in names))
    wrapper, log = ssh_wrapper(h)
    rows: list[tuple[str, tuple[float, int], tuple[float, int] | str]] = []
    try:
        for what in ("first copy", "catch-up"):
            if what == "catch-up":
                h.on(h.src, f"head -c 262144 /dev/urandom > "
                            f"\"$(zfs get -H -o value mountpoint {root}/d0)/later\"")
            zm = zmigrate_run(h, root, f"{h.dst_pool}/zmbench-zm")
            sy = syncoid_run(h, wrapper, log, root, f"{h.dst_pool}/zmbench-sy")
            rows.append((what, zm, sy))
    finally:
        h.on(h.src, f"zfs destroy -r {root}; true")
        h.on(h.dst, f"zfs destroy -r {h.dst_pool}/zmbench-zm; zfs destroy -r "
                    f"{h.dst_pool}/zmbench-sy; true")
        shutil.rmtree(wrapper, ignore_errors=True)
    print(f"\n{count} datasets; remote commands (per dataset) and wall seconds")
    print(f"{'':12s} {'zmigrate':>24s}   {'syncoid':>24s}")
    for what, (zt, zc), sy in rows:
        theirs = (f"{sy[1]:5d} ({sy[1] / count:4.1f}) {sy[0]:7.2f} s" if isinstance(sy, tuple)
                  else f"could not run: {sy}")
        print(f"{what:12s} {zc:5d} ({zc / count:4.1f}) {zt:7.2f} s   {theirs}")


def vm_hosts(vm_work: Path, where: Path) -> Hosts:
    """The OpenZFS guest as two hosts: openzfs-vm (srcpool) and openzfs-dst (dstpool)."""
    config = where / "ssh_config"
    base = (vm_work / "ssh_config").read_text()
    port = next(line.split()[1] for line in base.splitlines() if line.strip().startswith("Port"))
    config.write_text(base + f"\nHost openzfs-dst\n  HostName 127.0.0.1\n  Port {port}\n"
                      f"  User root\n  IdentityFile {vm_work / 'id_ed25519'}\n"
                      f"  IdentitiesOnly yes\n  UserKnownHostsFile {vm_work / 'known_hosts'}\n"
                      "  BatchMode yes\n")
    return Hosts(config, vm_work / "known_hosts", "openzfs-vm", "openzfs-dst", "srcpool",
                 "dstpool")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--openzfs", metavar="WORK", type=Path,
                    help="the running OpenZFS guest's work directory (/var/tmp/openzfs-vm)")
    args = ap.parse_args()
    if shutil.which("syncoid") is None:
        print("syncoid is not installed: apt install sanoid", file=sys.stderr)
        return 2
    if args.openzfs is not None:
        compare(vm_hosts(args.openzfs, Path(tempfile.mkdtemp(prefix="zmigrate-bench-"))),
                args.datasets)
        return 0
    with bench_lab("zmigrate-bench-commands-") as (lab, pools):
        src, dst = pools("bcmsrc", size_mb=256), pools("bcmdst", size_mb=512)
        compare(Hosts(lab.ssh_config, lab.known_hosts, "lab-src", "lab-dst", src.name,
                      dst.name), args.datasets)
    return 0


if __name__ == "__main__":
    sys.exit(main())

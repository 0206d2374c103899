"""ZFS on a host: capabilities, inventory (datasets, snapshots, guids) and command builders.

Hosts differ: OpenZFS 2.x, illumos and zfs-fuse. `zfs get -Hp` works on all of them, so the
inventory is built from it; richer calls (`send -nvP`, resume tokens) are used only where the
probe found them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import shell
from .errors import CommandError, ZmigrateError
from .hosts import Host

BASE_PROPERTIES = ("type", "guid", "used", "referenced", "available", "creation", "createtxg")
OPENZFS_PROPERTIES = ("receive_resume_token", "written", "encryption", "keystatus")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot (or bookmark) with what the planner needs."""

    name: str
    guid: int
    creation: int
    createtxg: int
    used: int
    referenced: int

    @property
    def dataset(self) -> str:
        return self.name.split("@", 1)[0].split("#", 1)[0]

    @property
    def short(self) -> str:
        return re.split(r"[@#]", self.name, maxsplit=1)[1]


@dataclass(slots=True)
class Dataset:
    """A filesystem or volume and its snapshots, oldest first."""

    name: str
    type: str
    guid: int
    used: int
    referenced: int
    available: int
    creation: int
    snapshots: list[Snapshot] = field(default_factory=list)
    resume_token: str | None = None
    encryption: str | None = None

    @property
    def newest(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def snapshot(self, short: str) -> Snapshot | None:
        for s in self.snapshots:
            if s.short == short:
                return s
        return None

    @property
    def pool(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def depth(self) -> int:
        return self.name.count("/")


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def parse_get(text: str) -> dict[str, dict[str, str]]:
    """Parse `zfs get -Hp -o name,property,value` output into {name: {property: value}}."""
    result: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        name, prop, value = parts
        result.setdefault(name, {})[prop] = value
    return result


def build_inventory(props: dict[str, dict[str, str]]) -> list[Dataset]:
    """Turn parsed properties into datasets with their snapshots sorted oldest first."""
    datasets: dict[str, Dataset] = {}
    snaps: list[Snapshot] = []
    for name, p in props.items():
        kind = p.get("type", "")
        if kind in ("filesystem", "volume"):
            token = p.get("receive_resume_token", "-")
            enc = p.get("encryption", "-")
            datasets[name] = Dataset(
                name=name,
                type=kind,
                guid=_int(p.get("guid", "0")),
                used=_int(p.get("used", "0")),
                referenced=_int(p.get("referenced", "0")),
                available=_int(p.get("available", "0")),
                creation=_int(p.get("creation", "0")),
                resume_token=None if token in ("-", "") else token,
                encryption=None if enc in ("-", "", "off") else enc,
            )
        elif kind in ("snapshot", "bookmark"):
            snaps.append(
                Snapshot(
                    name=name,
                    guid=_int(p.get("guid", "0")),
                    creation=_int(p.get("creation", "0")),
                    createtxg=_int(p.get("createtxg", "0")),
                    used=_int(p.get("used", "0")),
                    referenced=_int(p.get("referenced", "0")),
                )
            )
    for s in sorted(snaps, key=lambda s: (s.createtxg, s.creation, s.name)):
        ds = datasets.get(s.dataset)
        if ds is not None and "@" in s.name:
            ds.snapshots.append(s)
    return sorted(datasets.values(), key=lambda d: d.name)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a host can do, probed once per connection."""

    dialect: str  # "openzfs", "zfs-fuse", "illumos", "unknown"
    zfs_version: str | None
    has_zfs: bool
    send_estimate: bool  # zfs send -nvP
    resumable: bool  # zfs receive -s / zfs send -t
    raw_send: bool  # zfs send -w
    mbuffer_version: str | None
    mbuffer_hash: bool
    pv: bool
    setsid: bool
    ss: bool
    mem_available: int | None
    system: str
    uid: int | None
    ssh_client_ip: str | None  # our address as the host sees it
    ssh_server_ip: str | None  # the host's address as we reach it

    @property
    def properties(self) -> tuple[str, ...]:
        return BASE_PROPERTIES + (OPENZFS_PROPERTIES if self.dialect == "openzfs" else ())

    def describe(self) -> str:
        zfs = f"{self.dialect} {self.zfs_version or ''}".strip() if self.has_zfs else "no zfs"
        mb = f"mbuffer {self.mbuffer_version}" if self.mbuffer_version else "no mbuffer"
        mem = f", {self.mem_available / 2**30:.1f} GiB free" if self.mem_available else ""
        return f"{zfs}; {mb}{'; pv' if self.pv else ''}{mem}"


_PROBE_SECTIONS = {
    "uname": "uname -sr",
    "id": "id -u",
    "zfs": "command -v zfs",
    "mbuffer": "mbuffer -V 2>&1 | head -n 1",
    "hash": "printf x | mbuffer -q --hash md5 2>&1 >/dev/null",
    "pv": "command -v pv",
    "setsid": "command -v setsid",
    "ss": "command -v ss",
    "meminfo": "grep -E '^(MemAvailable|MemFree):' /proc/meminfo 2>/dev/null",
    "sshconn": 'echo "$SSH_CONNECTION"',
}


def _probe_script(host: Host) -> str:
    zfs = host.privileged(["zfs"])
    sections = dict(_PROBE_SECTIONS)
    sections["zfsversion"] = shell.join([*zfs, "version"]) + " 2>&1"
    sections["sendusage"] = shell.join([*zfs, "send"]) + " 2>&1"
    sections["recvusage"] = shell.join([*zfs, "receive"]) + " 2>&1"
    return "; ".join(f"echo '@@{k}'; {v}" for k, v in sections.items())


def parse_probe(text: str) -> Capabilities:
    """Read the probe script's output (sections headed `@@name`) into Capabilities."""
    sec: dict[str, str] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("@@"):
            current = line[2:]
            sec[current] = ""
        elif current:
            sec[current] += line + "\n"
    send_usage = sec.get("sendusage", "")
    recv_usage = sec.get("recvusage", "")
    version_text = sec.get("zfsversion", "")
    system = sec.get("uname", "").strip()
    m = re.search(r"zfs(?:-kmod)?-(\d[\w.~+-]*)", version_text)
    zfs_version = m.group(1) if m else None
    has_zfs = bool(sec.get("zfs", "").strip())
    if zfs_version or "-t <receive_resume_token>" in send_usage:
        dialect = "openzfs"
    elif "send [-RDp]" in send_usage:
        dialect = "zfs-fuse"
    elif system.startswith("SunOS"):
        dialect = "illumos"
    else:
        dialect = "unknown"
    flags = re.search(r"send \[-([A-Za-z]+)\]", send_usage)
    send_flags = flags.group(1) if flags else ""
    mb = re.search(r"mbuffer version (\S+)", sec.get("mbuffer", ""))
    mem = None
    for key in ("MemAvailable", "MemFree"):
        mm = re.search(rf"{key}:\s+(\d+) kB", sec.get("meminfo", ""))
        if mm:
            mem = int(mm.group(1)) * 1024
            break
    conn = sec.get("sshconn", "").split()
    uid_text = sec.get("id", "").strip()
    return Capabilities(
        dialect=dialect,
        zfs_version=zfs_version,
        has_zfs=has_zfs,
        send_estimate="n" in send_flags and "P" in send_flags,
        resumable="-t <receive_resume_token>" in send_usage and "-s" in recv_usage,
        raw_send="w" in send_flags,
        mbuffer_version=mb.group(1) if mb else None,
        mbuffer_hash="MD5 hash:" in sec.get("hash", ""),
        pv=bool(sec.get("pv", "").strip()),
        setsid=bool(sec.get("setsid", "").strip()),
        ss=bool(sec.get("ss", "").strip()),
        mem_available=mem,
        system=system,
        uid=int(uid_text) if uid_text.isdigit() else None,
        ssh_client_ip=conn[0] if len(conn) == 4 else None,
        ssh_server_ip=conn[2] if len(conn) == 4 else None,
    )


def probe(host: Host) -> Capabilities:
    """Probe `host` in one round trip."""
    result = host.run(_probe_script(host), timeout=60)
    return parse_probe(result.stdout)


def require_zfs(host: Host, caps: Capabilities) -> None:
    if not caps.has_zfs:
        raise ZmigrateError(
            "zfs is not installed or not on the PATH",
            host=host.label,
            fix="install ZFS there (OpenZFS: apt install zfsutils-linux) or check the PATH",
        )


def inventory(host: Host, caps: Capabilities, root: str | None = None) -> list[Dataset]:
    """Datasets (and their snapshots) on `host`, under `root` when given, else all pools."""
    argv = host.privileged(["zfs", "get", "-Hp", "-r", "-o", "name,property,value"])
    argv.append(",".join(caps.properties))
    if root is not None:
        argv.append(shell.dataset(root))
    result = host.execute(argv, timeout=300)
    if not result.ok:
        if root is not None and "does not exist" in result.stderr:
            return []
        raise classify_zfs_error(result.host, "listing datasets", result.stderr, result.command,
                                 result.status)
    return build_inventory(parse_get(result.stdout))


def inventory_shallow(host: Host, caps: Capabilities, name: str) -> list[Dataset]:
    """Just `name` itself (no children, no snapshots), or [] if it does not exist."""
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "name,property,value",
                            ",".join(caps.properties), shell.dataset(name)])
    result = host.execute(argv, timeout=120)
    if not result.ok:
        return []
    return build_inventory(parse_get(result.stdout))


def dataset_info(host: Host, caps: Capabilities, name: str) -> Dataset | None:
    """One dataset and its snapshots, or None if it does not exist."""
    for ds in inventory(host, caps, name):
        if ds.name == name:
            return ds
    return None


def exists(host: Host, name: str) -> bool:
    """Whether a dataset or snapshot `name` exists on `host`."""
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "value", "type", name])
    return host.execute(argv, timeout=60).ok


def guid(host: Host, name: str) -> int:
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "value", "guid", name])
    r = host.execute(argv, timeout=60).check(f"reading the guid of {name}")
    return int(r.stdout.strip())


def classify_zfs_error(host: str, what: str, stderr: str, command: str = "",
                       status: int | None = None) -> CommandError:
    """A CommandError whose fix fits the zfs message (permissions, missing datasets...)."""
    lines = [x for x in stderr.strip().splitlines() if x.strip()]
    tail = lines[-1] if lines else "unknown error"
    fix = None
    low = stderr.lower()
    if "permission denied" in low or "must be superuser" in low or "operation not permitted" in low:
        fix = "run as root, turn on sudo for this host, or delegate with `zfs allow`"
    elif "sudo:" in low and "password" in low:
        fix = "let this user run zfs without a password (sudoers NOPASSWD) or connect as root"
    elif "command not found" in low or "not found" in low and "zfs" in low:
        fix = "install ZFS on that host"
    elif "does not exist" in low:
        fix = "check the name with `zmigrate list`"
    elif "modified since most recent snapshot" in low:
        fix = "the destination was changed after its last snapshot: pass --force to roll it back"
    return CommandError(f"{what} failed: {tail}", host=host, fix=fix, command=command,
                        status=status, stderr=stderr)


# -- command builders ---------------------------------------------------------------------------
def send_argv(
    host: Host,
    snapshot: str,
    *,
    base: str | None = None,
    intermediates: bool = True,
    resume_token: str | None = None,
    flags: Sequence[str] = (),
) -> list[str]:
    """`zfs send` for a full stream, an incremental from `base` (-I or -i), or a resume."""
    if resume_token is not None:
        if not re.fullmatch(r"[0-9a-zA-Z-]+", resume_token):
            raise ZmigrateError("the resume token has unexpected characters")
        return host.privileged(["zfs", "send", *flags, "-t", resume_token])
    argv = host.privileged(["zfs", "send", *flags])
    if base is not None:
        argv += ["-I" if intermediates else "-i", base]
    argv.append(shell.snapshot(snapshot))
    return argv


def receive_argv(host: Host, dataset: str, *, force: bool = False, resumable: bool = False,
                 extra: Iterable[str] = ()) -> list[str]:
    """`zfs receive` into `dataset`; -F only when the user asked for it."""
    argv = host.privileged(["zfs", "receive"])
    if force:
        argv.append("-F")
    if resumable:
        argv.append("-s")
    argv += list(extra)
    argv.append(shell.dataset(dataset))
    return argv

"""ZFS on a host: capabilities, inventory (datasets, snapshots, guids) and command builders.

Hosts differ: OpenZFS 2.x, illumos and zfs-fuse. `zfs get -Hp` works on all of them, so the
inventory is built from it; richer calls (`send -nvP`, resume tokens) are used only where the
probe found them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from . import cmdline
from .errors import CommandError, PreflightError, PreflightReason, ZmigrateError
from .hosts import CommandResult, Host
from .hosts import tools as capabilities
from .hosts.tools import HostTools
from .remedies import Remedy

BASE_PROPERTIES = ("type", "guid", "used", "referenced", "available", "creation", "createtxg",
                   "compression", "origin", "userrefs")
OPENZFS_PROPERTIES = ("receive_resume_token", "written", "encryption", "keystatus",
                      "encryptionroot")
# What each zfs operation needs under `zfs allow` delegation (OpenZFS on Linux and FreeBSD).
PERMISSIONS: dict[str, tuple[str, ...]] = {
    "send": ("send",),
    "snapshot": ("snapshot",),
    "bookmark": ("bookmark",),
    # `zfs send -I` and `send -R` take temporary holds as the user (released on their own):
    # without `hold` they fail "cannot hold: permission denied" (verified, OpenZFS 2.3.2).
    "hold": ("hold",),
    "receive": ("create", "mount", "receive"),
    # Verified on OpenZFS 2.3.2 with a delegated user (tests/openzfs/test_delegation.py):
    # `zfs rollback -r` needs `rollback`, and `destroy` + `mount` for the snapshots it destroys.
    # (`receive -F` of a plain stream needs nothing beyond "receive": the kernel rolls back.)
    "force": ("rollback", "destroy", "mount"),
    # `receive -F` of an incremental -R stream destroys snapshots pruned on the source (in
    # libzfs, as the user: without `destroy` it fails with no message).
    "force_replicate": ("destroy", "mount"),
    # `zfs receive -A` destroys the partial dataset (or DATASET/%recv): `destroy` + `mount`;
    # `receive` is not needed.
    "discard": ("destroy", "mount"),
    "readonly": ("readonly",),
    # A raw `-R` stream of an encryption root and its encrypted children: receive then joins
    # the children to the root's key as on the source (a `zfs change-key -i`), which needs
    # `change-key`; without it the data arrives, each child its own encryption root, and zfs
    # exits 1 saying nothing (verified, OpenZFS 2.3.2).
    "raw_replicate": ("change-key",),
}


def property_permission(name: str) -> str:
    """The `zfs allow` permission that lets a login set property `name` (with `zfs set`, a
    receive's `-o`, or a `-p`/`-R` stream carrying it): a native property's own name, `userprop`
    for any user property. Without it OpenZFS 2.3.2 receives the data and exits 0, saying
    only "cannot receive NAME property on DS: permission denied" (verified on the guest)."""
    return "userprop" if ":" in name else name


def property_permissions(given: Iterable[str], left_out: Iterable[str],
                         carried: Iterable[str]) -> list[str]:
    """The permissions a receive needs for the properties it sets: each `-o` it is `given`
    (but `origin`, which names a clone's origin and needs none) and each property the stream
    `carried` (-p, -R) that no `-x` leaves out. A `-x` alone needs nothing: without the
    permission zfs sets nothing, which leaves the property as inherited, as `-x` asks."""
    out = set(left_out)
    names = [*(n for n in given if n != "origin"), *sorted(set(carried) - out)]
    return list(dict.fromkeys(property_permission(n) for n in names))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot (or bookmark) with what the planner needs."""

    name: str
    guid: int
    creation: int
    createtxg: int
    used: int
    referenced: int
    # Bytes written between the snapshot before it and this one (OpenZFS; None elsewhere): an
    # incremental stream from that one is about this size.
    written: int | None = None
    holds: int = 0  # `zfs hold` tags on this snapshot (userrefs): zfs send does not carry them

    @property
    def dataset(self) -> str:
        return self.name.split("@", 1)[0].split("#", 1)[0]

    @property
    def short(self) -> str:
        # Asked tens of thousands of times on a big pool: no regular expression.
        at, mark = self.name.find("@"), self.name.find("#")
        cut = at if mark < 0 or 0 <= at < mark else mark
        return self.name[cut + 1:]


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
    keystatus: str | None = None
    bookmarks: list[Snapshot] = field(default_factory=list)
    encryption_root: str | None = None  # the dataset whose key this one uses (itself: a root)
    written: int | None = None  # bytes written since the newest snapshot (OpenZFS)
    compression: str | None = None  # how it is stored: "off", "lz4", "zstd"...
    origin: str | None = None  # a clone's origin snapshot (`pool/base@gold`)

    @property
    def newest(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def snapshot(self, short: str) -> Snapshot | None:
        for s in self.snapshots:
            if s.short == short:
                return s
        return None

    def written_after(self, base: Snapshot, upto: Snapshot | None) -> int | None:
        """What was written after `base` up to `upto` (None: up to now, a snapshot to be
        taken): each snapshot's `written` and, up to now, the dataset's own - about an
        incremental stream's size, and what it adds where it lands. None where the host does
        not say (zfs-fuse)."""
        after = [s for s in self.snapshots if s.createtxg > base.createtxg
                 and (upto is None or s.createtxg <= upto.createtxg)]
        parts = [s.written for s in after] + ([self.written] if upto is None else [])
        if any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None)

    @property
    def encrypted(self) -> bool:
        return self.encryption is not None

    @property
    def pool(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def depth(self) -> int:
        return self.name.count("/")


def _maybe_int(value: str | None) -> int | None:
    """A numeric property, or None where the host does not have it ('-', missing)."""
    return int(value) if value is not None and value.isdigit() else None


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
            key = p.get("keystatus", "-")
            eroot = p.get("encryptionroot", "-")
            origin = p.get("origin", "-")
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
                keystatus=None if key in ("-", "") else key,
                encryption_root=None if eroot in ("-", "") else eroot,
                written=_maybe_int(p.get("written")),
                compression=p.get("compression") or None,
                origin=None if origin in ("-", "") else origin,
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
                    written=_maybe_int(p.get("written")),
                    holds=_maybe_int(p.get("userrefs")) or 0,
                )
            )
    for s in sorted(snaps, key=lambda s: (s.createtxg, s.creation, s.name)):
        ds = datasets.get(s.dataset)
        if ds is not None and "@" in s.name:
            ds.snapshots.append(s)
        elif ds is not None and "#" in s.name:
            ds.bookmarks.append(s)
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
    compressed_send: bool = False  # zfs send -c
    large_blocks: bool = False  # zfs send -L
    embedded_send: bool = False  # zfs send -e
    receive_properties: bool = False  # zfs receive -o/-x
    receive_unmounted: bool = False  # zfs receive -u
    discard_partial: bool = False  # zfs receive -A
    bookmarks: bool = False  # zfs bookmark, send -i pool/ds#mark
    user: str | None = None  # login name on the host
    tools: HostTools = field(default_factory=HostTools)  # the userland beyond zfs

    @property
    def properties(self) -> tuple[str, ...]:
        return BASE_PROPERTIES + (OPENZFS_PROPERTIES if self.dialect == "openzfs" else ())

    @property
    def root(self) -> bool:
        return self.uid == 0

    @property
    def unmounts_to_replace(self) -> bool:
        """Whether a mounted dataset is unmounted before a full `receive -F` replaces it:
        zfs-fuse's own unmount and mount around it fail now and then ("cannot receive new
        filesystem stream: I/O error", 6 of 25 in the lab, 0 of 25 unmounted first). OpenZFS
        swaps the mounted file system's contents itself (as a delegated user, too)."""
        return self.dialect == "zfs-fuse"

    def describe(self) -> str:
        zfs = f"{self.dialect} {self.zfs_version or ''}".strip() if self.has_zfs else "no zfs"
        mb = f"mbuffer {self.mbuffer_version}" if self.mbuffer_version else "no mbuffer"
        mem = f", {self.mem_available / 2**30:.1f} GiB memory free" if self.mem_available else ""
        system = self.system.split()[0] if self.system else "unknown OS"
        return (f"{zfs}; {mb}{'; pv' if self.pv else ''}{mem}; {system}: "
                f"{self.tools.describe()}")


_PROBE_SECTIONS = {
    "uname": "uname -sr",
    "id": "id -u",
    "user": "id -un",
    "zfs": "command -v zfs",
    "mbuffer": "mbuffer -V 2>&1 | head -n 1",
    "hash": "printf x | mbuffer -q --hash md5 2>&1 >/dev/null",
    "pv": "command -v pv",
    **capabilities.PROBE_SECTIONS,
    "sshconn": 'echo "$SSH_CONNECTION"',
}


def _probe_script(host: Host) -> str:
    zfs = host.privileged(["zfs"])
    sections = dict(_PROBE_SECTIONS)
    sections["zfsversion"] = cmdline.join([*zfs, "version"]) + " 2>&1"
    sections["sendusage"] = cmdline.join([*zfs, "send"]) + " 2>&1"
    sections["recvusage"] = cmdline.join([*zfs, "receive"]) + " 2>&1"
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
    rflags = re.search(r"receive \[-([A-Za-z]+)\]", recv_usage)
    recv_flags = rflags.group(1) if rflags else ""
    mb = re.search(r"mbuffer version (\S+)", sec.get("mbuffer", ""))
    tools = capabilities.parse_tools(sec)
    conn = sec.get("sshconn", "").split()
    uid_text = sec.get("id", "").strip()
    return Capabilities(
        dialect=dialect,
        zfs_version=zfs_version,
        has_zfs=has_zfs,
        send_estimate="n" in send_flags and "P" in send_flags,
        resumable="-t <receive_resume_token>" in send_usage
        and ("s" in recv_flags or "-s" in recv_usage),
        raw_send="w" in send_flags,
        mbuffer_version=mb.group(1) if mb else None,
        mbuffer_hash="MD5 hash:" in sec.get("hash", ""),
        pv=bool(sec.get("pv", "").strip()),
        setsid=tools.setsid,
        ss="ss" in tools.tools,
        mem_available=tools.mem_available,
        system=system,
        uid=int(uid_text) if uid_text.isdigit() else None,
        ssh_client_ip=conn[0] if len(conn) == 4 else None,
        ssh_server_ip=conn[2] if len(conn) == 4 else None,
        compressed_send="c" in send_flags,
        large_blocks="L" in send_flags,
        embedded_send="e" in send_flags,
        receive_properties="-x <property>" in recv_usage,
        receive_unmounted="u" in recv_flags,
        discard_partial="receive -A" in recv_usage,
        bookmarks="bookmark" in send_usage,
        user=sec.get("user", "").strip() or None,
        tools=tools,
    )


def probe(host: Host) -> Capabilities:
    """Probe `host` in one round trip."""
    result = host.run(_probe_script(host), timeout=60)
    return parse_probe(result.stdout)


def require_zfs(host: Host, caps: Capabilities) -> None:
    """Refuse a host without zfs (a missing tool), with its install line."""
    if not caps.has_zfs:
        install = capabilities.install_hint(caps.system, "zfs")
        raise PreflightError("zfs is not installed or not on the PATH", host=host.label,
                             fix=install, reason=PreflightReason.MISSING_TOOL,
                             figures={"tool": "zfs", "install": install})


def _inventory_argv(host: Host, caps: Capabilities, root: str | None) -> list[str]:
    argv = host.privileged(["zfs", "get", "-Hp", "-r", "-o", "name,property,value"])
    if caps.bookmarks:
        argv += ["-t", "filesystem,volume,snapshot,bookmark"]
    argv.append(",".join(caps.properties))
    if root is not None:
        argv.append(cmdline.dataset(root))
    return argv


def sync_line(host: Host, caps: Capabilities, pool: str) -> str:
    """A shell line that commits `pool`'s open transaction group, so that figures read after
    it (`written`, `referenced`) count the writes of the last seconds; its failure is
    silent (the figures may then lag by one transaction group).

    `zpool sync POOL` where zfs has it (OpenZFS 0.8+). zfs-fuse has none: measured on the lab
    (zfs-fuse 0.7), a 300 kB file shows in `referenced` only when the transaction group
    closes, 30 s later; `sync` (and `sync -f`) change nothing, while any administrative
    change commits at once (0.02 s): `zfs inherit` of a user property that is not set is one
    that changes nothing (it is only logged in `zpool history -i`). It is also the fallback
    where `zpool` is refused (the documented sudoers grants zfs only), then `sync`."""
    pool = cmdline.dataset(pool.split("/", 1)[0])
    inherit = cmdline.join(host.privileged(["zfs", "inherit", "zmigrate:sync", pool]))
    if caps.dialect == "zfs-fuse":
        line = inherit
    else:
        line = f"{cmdline.join(host.privileged(['zpool', 'sync', pool]))} || {inherit} || sync"
    return f"{{ {line}; }} >/dev/null 2>&1"


def inventory_with_parent(host: Host, caps: Capabilities, parent: str,
                          name: str, *, synced: bool = False) -> list[Dataset]:
    """`name` with its descendants, snapshots and bookmarks, and `parent` alone: one command
    (either may not exist); `synced`: its pool synced first (`sync_line`), so that what was
    written there in the last seconds is counted."""
    shallow = host.privileged(["zfs", "get", "-Hp", "-o", "name,property,value",
                               ",".join(caps.properties), cmdline.dataset(parent)])
    first = f"{sync_line(host, caps, name)}; " if synced else ""
    result = host.run(f"{first}{cmdline.join(shallow)}; "
                      f"{cmdline.join(_inventory_argv(host, caps, name))}", timeout=300)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    if not result.ok and not all("does not exist" in line for line in errors):
        raise classify_zfs_error(result.host, "listing datasets", result.stderr, result.command,
                                 result.status)
    return build_inventory(parse_get(result.stdout))


def inventory(host: Host, caps: Capabilities, root: str | None = None) -> list[Dataset]:
    """Datasets (with snapshots and bookmarks) on `host`, under `root` when given, else all."""
    result = host.execute(_inventory_argv(host, caps, root), timeout=300)
    if not result.ok:
        if root is not None and "does not exist" in result.stderr:
            return []
        raise classify_zfs_error(result.host, "listing datasets", result.stderr, result.command,
                                 result.status)
    return build_inventory(parse_get(result.stdout))


def _raise_unless_only_missing(result: CommandResult, what: str) -> None:
    """A read of named datasets may name some that do not exist (left out of its answer);
    any other failure is raised."""
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    if not result.ok and not (errors and all("does not exist" in e for e in errors)):
        raise classify_zfs_error(result.host, what, result.stderr, result.command,
                                 result.status)


def inventory_named(host: Host, caps: Capabilities, names: Sequence[str],
                    snapshot: str) -> list[Dataset]:
    """The datasets `names`, each with only its snapshot @`snapshot`, those missing left out:
    one command, nothing recursive (a catch-up's check of what it sent; on zfs-fuse a recursive
    read of a big tree costs a second)."""
    if not names:
        return []
    targets = [x for n in names for x in (cmdline.dataset(n), cmdline.snapshot(f"{n}@{snapshot}"))]
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "name,property,value",
                            ",".join(caps.properties), *targets])
    result = host.execute(argv, timeout=300)
    _raise_unless_only_missing(result, "listing datasets")
    return build_inventory(parse_get(result.stdout))


def dataset_info(host: Host, caps: Capabilities, name: str) -> Dataset | None:
    """One dataset and its snapshots, or None if it does not exist."""
    for ds in inventory(host, caps, name):
        if ds.name == name:
            return ds
    return None


def local_properties(host: Host, root: str, prop: str = "all", *, sources: str = "local",
                     only: Sequence[str] | None = None) -> dict[str, dict[str, str]]:
    """{dataset: {property: value}} of the properties set on `root` and its descendants (not
    inherited, not defaults): what `zfs send -p` carries. One `zfs get -r` for the tree, or
    one `zfs get` of just the datasets `only` names (those missing left out)."""
    if only is None:
        recursive, names = ["-r"], [cmdline.dataset(root)]
    elif not only:
        return {}
    else:
        recursive, names = [], [cmdline.dataset(n) for n in only]
    argv = host.privileged(["zfs", "get", "-Hp", *recursive, "-s", sources, "-o",
                            "name,property,value", prop, *names])
    result = host.execute(argv, timeout=300)
    _raise_unless_only_missing(result, "reading properties")
    return {name: props for name, props in parse_get(result.stdout).items() if "@" not in name}


def exists(host: Host, name: str) -> bool:
    """Whether a dataset or snapshot `name` exists on `host`."""
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "value", "type", name])
    return host.execute(argv, timeout=60).ok


def guid(host: Host, name: str) -> int:
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "value", "guid", name])
    r = host.execute(argv, timeout=60).check(f"reading the guid of {name}")
    return int(r.stdout.strip())


def classify_zfs_error(host: str, what: str, stderr: str, command: str = "",
                       status: int | None = None,
                       permission: tuple[Sequence[str], str, str] | None = None) -> CommandError:
    """A CommandError whose fix fits the zfs message (permissions, missing datasets...).

    `permission` is (permissions, dataset, user): what the operation needs under `zfs allow`,
    named in the fix when the message is a permission error.
    """
    lines = [x for x in stderr.strip().splitlines() if x.strip()]
    tail = lines[-1] if lines else "unknown error"
    fix = None
    low = stderr.lower()
    if "permission denied" in low or "must be superuser" in low or "operation not permitted" in low:
        fix = "run as root, turn on sudo for this host, or delegate with `zfs allow`"
        if permission is not None:
            perms, target, user = permission
            fix = (f"this needs the permission(s) {','.join(perms)} on {target}; grant them "
                   f"with: {allow_line(user, perms, target)} (or use sudo/root)")
    elif "sudo:" in low and "password" in low:
        fix = "let this user run zfs without a password (sudoers NOPASSWD) or connect as root"
    elif "command not found" in low or "not found" in low and "zfs" in low:
        fix = "install ZFS on that host"
    remedies: tuple[Remedy, ...] = ()
    if fix is None and "does not exist" in low:
        remedies = (Remedy.CHECK_NAME,)
    elif fix is None and "modified since most recent snapshot" in low:
        remedies = (Remedy.ROLL_BACK,)
    return CommandError(f"{what} failed: {tail}", host=host, fix=fix,
                        command=command, status=status, stderr=stderr, remedies=remedies)


# -- command builders ---------------------------------------------------------------------------
def is_bookmark(name: str) -> bool:
    """`pool/ds#mark`, not `pool/ds@snap`."""
    return "#" in name


def send_argv(
    host: Host,
    snapshot: str,
    *,
    base: str | None = None,
    intermediates: bool = True,
    resume_token: str | None = None,
    flags: Sequence[str] = (),
) -> list[str]:
    """`zfs send` for a full stream, an incremental from `base`, or a resume.

    From a snapshot base, -I (with the intermediate snapshots) unless `intermediates` is off;
    from a bookmark always -i: zfs send -I takes no bookmark.
    """
    if resume_token is not None:
        return host.privileged(["zfs", "send", *flags, "-t", _token_ok(resume_token)])
    argv = host.privileged(["zfs", "send", *flags])
    if base is not None:
        argv += ["-I" if intermediates and not is_bookmark(base) else "-i", base]
    argv.append(cmdline.snapshot(snapshot))
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
    argv.append(cmdline.dataset(dataset))
    return argv


# -- resumable receives -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ResumeInfo:
    """What a `receive_resume_token` holds, decoded by `zfs send -nvP -t` on the source."""

    token: str
    toname: str  # the snapshot the interrupted stream sends
    toguid: int
    fromguid: int | None  # the incremental base, None for a full stream
    received: int  # bytes of the stream already on the destination
    remaining: int | None  # exact size of what is left to send (None if not reported)
    raw: bool = False
    compressed: bool = False

    @property
    def total(self) -> int | None:
        return None if self.remaining is None else self.received + self.remaining


def _token_ok(token: str) -> str:
    if not re.fullmatch(r"[0-9a-zA-Z-]+", token):
        raise ZmigrateError("the resume token has unexpected characters")
    return token


def _token_fields(text: str) -> dict[str, str]:
    """The `name = value` lines of the token's nvlist dump (`zfs send -nv -t`)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(\w+) = (.*)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    return fields


# `zfs send -t` refusing a token whose snapshots are gone (libzfs_sendrecv.c,
# zfs_send_resume_impl: after the nvlist dump of -v, before any stream).
_STALE = re.compile(r"cannot resume send: (?:'(?P<name>[^']+)' (?:used in the initial send no "
                    r"longer exists|is no longer the same snapshot used in the initial send)"
                    r"|incremental source (?P<base>\S+) no longer exists)")


@dataclass(frozen=True, slots=True)
class StaleToken:
    """A resume token whose stream can no longer be sent: the snapshot it sends (`toname`),
    or its incremental base (`base`, a guid), is no longer on the source."""

    toname: str
    base: str | None = None  # the base's guid as zfs printed it, when that is what is gone


def stale_token(text: str, source: Iterable[Dataset] = ()) -> StaleToken | None:
    """Whether `zfs send -nvP -t TOKEN`'s output (stdout and stderr) shows a stale token: zfs
    says what is gone, or the snapshot the token sends (its `toguid`) is not among the
    snapshots of its dataset as read from the source (`source`, where it was read). None
    where the token can still be sent."""
    fields = _token_fields(text)
    toname = fields.get("toname", "")
    m = _STALE.search(text)
    if m:
        return StaleToken(m.group("name") or toname, m.group("base"))
    toguid = fields.get("toguid")
    read = next((d for d in source if d.name == toname.split("@", 1)[0]), None)
    if read is not None and toguid is not None:
        guid = int(toguid, 16) if toguid.startswith("0x") else int(toguid)
        if guid not in {s.guid for s in read.snapshots}:
            return StaleToken(toname)
    return None


def stale_error(stale: StaleToken, host: str, destination: str) -> PreflightError:
    """The refusal for a stale token: only discarding helps (resuming cannot send it)."""
    gone = (f"its incremental base (guid {stale.base}) for {stale.toname}" if stale.base
            else stale.toname)
    return PreflightError(
        f"the interrupted transfer into {destination} cannot be resumed: its resume token "
        f"is stale ({gone} no longer exists on {host})",
        host=host, reason=PreflightReason.STALE_TOKEN, figures={"dataset": destination},
        fix=f"drop it with --discard-partial (zfs receive -A {destination}) and send again")


def parse_resume_info(token: str, text: str) -> ResumeInfo:
    """Parse `zfs send -nvP -t TOKEN` output (the nvlist dump, then `full`/`incremental`/`size`)."""
    fields = _token_fields(text)
    sizes = re.findall(r"^size\s+(\d+)", text, re.M)

    def num(key: str) -> int | None:
        value = fields.get(key)
        if value is None:
            return None
        return int(value, 16) if value.startswith("0x") else int(value)

    toguid = num("toguid")
    if toguid is None or "toname" not in fields:
        raise ZmigrateError("the resume token could not be decoded",
                            fix="discard the partial receive (zfs receive -A) and send again")
    return ResumeInfo(
        token=token,
        toname=fields["toname"],
        toguid=toguid,
        fromguid=num("fromguid"),
        received=num("bytes") or 0,
        remaining=int(sizes[-1]) if sizes else None,
        raw="rawok" in fields,
        compressed="compressok" in fields,
    )


def resume_info(host: Host, token: str, destination: str = "",
                source: Iterable[Dataset] = ()) -> ResumeInfo:
    """Decode `token` on the source `host` (which must still hold the snapshot it names);
    a stale token (what it sends is gone from the source) raises `stale_error`."""
    argv = host.privileged(["zfs", "send", "-nvP", "-t", _token_ok(token)])
    r = host.execute(argv, timeout=120)
    text = r.stdout + "\n" + r.stderr
    stale = stale_token(text, source)
    if stale is not None:
        raise stale_error(stale, host.label, destination or "the destination")
    if not r.ok:
        raise classify_zfs_error(host.label, "reading the resume token", r.stderr, r.command,
                                 r.status)
    return parse_resume_info(token, text)


def discard_partial_argv(host: Host, dataset: str) -> list[str]:
    """`zfs receive -A`: drop the partial state of an interrupted resumable receive."""
    return host.privileged(["zfs", "receive", "-A", cmdline.dataset(dataset)])


def discard_partial(host: Host, dataset: str, user: str | None = None) -> None:
    """Discard the interrupted receive into `dataset` on `host` (its resume token goes away)."""
    r = host.execute(discard_partial_argv(host, dataset), timeout=120)
    if not r.ok:
        perm = (PERMISSIONS["discard"], dataset, user) if user else None
        raise classify_zfs_error(host.label, f"discarding the partial receive into {dataset}",
                                 r.stderr, r.command, r.status, permission=perm)


def partial_receive(host: Host, caps: Capabilities, dataset: str) -> str | None:
    """The `receive_resume_token` of `dataset` on `host`, or None (none, or not supported)."""
    if caps.dialect != "openzfs":
        return None
    argv = host.privileged(["zfs", "get", "-Hp", "-o", "value", "receive_resume_token",
                            cmdline.dataset(dataset)])
    r = host.execute(argv, timeout=60)
    token = r.stdout.strip()
    return token if r.ok and token not in ("", "-") else None


def pool_features(host: Host, pool: str) -> dict[str, str] | None:
    """{feature: "active" | "enabled" | "disabled"} of `pool` (`zpool get all`: a feature this
    zfs does not know is not there); None where it cannot be read."""
    argv = host.privileged(["zpool", "get", "-Hp", "-o", "property,value", "all",
                            cmdline.dataset(pool)])
    r = host.execute(argv, timeout=60)
    return parse_pool_features(r.stdout) if r.ok else None


def parse_pool_features(text: str) -> dict[str, str]:
    """{feature: state} of `zpool get -Hp -o property,value all POOL`'s output."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.partition("\t")
        if name.startswith("feature@"):
            out[name[len("feature@"):]] = value.strip()
    return out


def feature_on(features: Mapping[str, str] | None, name: str) -> bool:
    """Whether a pool of `features` can hold what feature `name` brings (enabled or active)."""
    return features is not None and features.get(name) in ("enabled", "active")


def bookmark_argv(host: Host, snapshot: str, mark: str) -> list[str]:
    """`zfs bookmark pool/ds@snap pool/ds#mark`."""
    return host.privileged(["zfs", "bookmark", cmdline.snapshot(snapshot), cmdline.bookmark(mark)])


# -- delegation (zfs allow) ---------------------------------------------------------------------
def allow_line(user: str, permissions: Sequence[str], dataset: str) -> str:
    """The command an administrator runs to delegate `permissions` on `dataset` to `user`."""
    return cmdline.join(["zfs", "allow", "-u", user, ",".join(permissions), dataset])


@dataclass(frozen=True, slots=True)
class Delegation:
    """One `zfs allow` grant as listed for a dataset."""

    dataset: str
    scope: str  # "local", "descendent" or "local+descendent"
    who: str  # "user", "group", "everyone"
    name: str  # user or group name ("" for everyone)
    permissions: frozenset[str]


def parse_allow(text: str) -> list[Delegation]:
    """Parse `zfs allow DATASET` output (the dataset and its ancestors; sets expanded)."""
    grants: list[Delegation] = []
    sets: dict[str, set[str]] = {}
    dataset = ""
    scope = ""
    for line in text.splitlines():
        head = re.match(r"^-+ Permissions on (.+?) -*$", line.strip())
        if head:
            dataset = head.group(1)
            scope = ""
            continue
        low = line.strip().lower()
        if low.startswith("permission sets"):
            scope = "sets"
            continue
        if low.endswith("permissions:"):
            scope = low[:-len(" permissions:")].replace(" ", "")
            continue
        fields = line.split()
        if not fields or not dataset:
            continue
        if scope == "sets" and fields[0].startswith("@") and len(fields) >= 2:
            sets.setdefault(fields[0], set()).update(fields[1].split(","))
            continue
        if scope in ("local", "descendent", "local+descendent") and fields:
            if fields[0] == "everyone" and len(fields) >= 2:
                who, name, perms = "everyone", "", fields[1]
            elif fields[0] in ("user", "group") and len(fields) >= 3:
                who, name, perms = fields[0], fields[1], fields[2]
            else:
                continue
            grants.append(Delegation(dataset, scope, who, name, frozenset(perms.split(","))))
    # Expand permission sets (they apply wherever the grant names them).
    out = []
    for g in grants:
        expanded = set(g.permissions)
        for p in g.permissions:
            expanded |= sets.get(p, set())
        expanded = {p for p in expanded if not p.startswith("@")}
        out.append(Delegation(g.dataset, g.scope, g.who, g.name, frozenset(expanded)))
    return out


def effective_permissions(grants: Sequence[Delegation], dataset: str, user: str,
                          groups: Sequence[str] = ()) -> set[str]:
    """The permissions `user` (member of `groups`) holds on `dataset` through `grants`."""
    perms: set[str] = set()
    for g in grants:
        if g.who == "user" and g.name != user:
            continue
        if g.who == "group" and g.name not in groups:
            continue
        on_itself = g.dataset == dataset
        below = cmdline.below(dataset, g.dataset)
        if (on_itself and "local" in g.scope) or (below and "descendent" in g.scope):
            perms |= g.permissions
    return perms


@dataclass(frozen=True, slots=True)
class Grants:
    """What `zfs allow` shows on some datasets and the login's groups (`read_grants`), for a
    login without root or sudo: which permissions it lacks is decided on them (`missing`)."""

    user: str
    allows: dict[str, str | None]  # dataset -> `zfs allow` output; None: unreadable
    groups: tuple[str, ...] = ()

    def missing(self, dataset: str, needed: Sequence[str], *, read_on: str | None = None
                ) -> list[str]:
        """Which of `needed` the login lacks on `dataset` (none where it could not be read:
        no way to tell, not Linux/FreeBSD OpenZFS?, so zfs itself says). `read_on`: the
        dataset whose `zfs allow` was read, `dataset` itself or an ancestor (a dataset not
        made yet inherits what is granted there for descendants)."""
        text = self.allows.get(read_on or dataset)
        if text is None:
            return []
        have = effective_permissions(parse_allow(text), dataset, self.user, self.groups)
        return [p for p in needed if p not in have]


def read_grants(host: Host, caps: Capabilities, datasets: Sequence[str]) -> Grants | None:
    """`zfs allow` of each of `datasets` and the login's groups; None for a login that needs
    no delegation (root, sudo) or whose user is unknown (nothing is read)."""
    if caps.root or host.sudo or not caps.user:
        return None
    allows: dict[str, str | None] = {}
    for dataset in dict.fromkeys(datasets):
        r = host.execute(["zfs", "allow", cmdline.dataset(dataset)], timeout=60)
        allows[dataset] = r.stdout if r.ok else None
    g = host.execute(["id", "-Gn"], timeout=30) if any(
        v is not None for v in allows.values()) else None
    return Grants(caps.user, allows, tuple(g.stdout.split()) if g is not None and g.ok else ())

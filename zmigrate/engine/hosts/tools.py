"""What a host's userland offers beyond ZFS: process groups, socket listing, memory and CPU figures.

Hosts run Linux (util-linux, procps, iproute2), FreeBSD/TrueNAS CORE (base tools: no setsid, no
ss, no /proc) or illumos. The probe finds which tool each job can use; the remote side
(hosts.wrap_in_group, job.step.port.wait_listening, doctor.cpu) falls back in the same order, and
`HostTools.describe()` says what was found and what fell back, for `zmigrate list` and the GUI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Probe sections (run inside zfs's one-round-trip probe script; each prints under `@@name`).
PROBE_SECTIONS = {
    # midclt: TrueNAS's middleware client (CORE and SCALE), which takes no packages of its own.
    "tools": "for t in setsid ss netstat sockstat flock ps pkill pgrep zstd lz4 midclt; do "
             "command -v $t >/dev/null 2>&1 && echo $t; done",
    # Job control without a tty: FreeBSD sh and bash allow it in a non-interactive shell, dash
    # turns it off ("can't access tty") - and then `$-` has no "m".
    "jobctl": "sh -c 'set -m 2>/dev/null; case $- in *m*) echo yes;; esac' </dev/null 2>/dev/null",
    "meminfo": "grep -E '^(MemTotal|MemAvailable|MemFree):' /proc/meminfo 2>/dev/null",
    "sysctlmem": "[ -r /proc/meminfo ] || "
                 "sysctl hw.physmem hw.pagesize vm.stats.vm.v_free_count 2>/dev/null",
    # Which machine (kernel boot) this is: two "hosts" that print the same share one CPU
    # (containers, network namespaces), which the doctor's predictions must count once.
    "boot": "cat /proc/sys/kernel/random/boot_id 2>/dev/null || "
            "{ hostname; sysctl -n kern.boottime; } 2>/dev/null",
    # The private transport's tool: `OpenSSL 3.0.13 30 Jan 2024` (LibreSSL says so).
    "openssl": "openssl version 2>/dev/null",
    # Its faster end where there (transports/tls_ends.py): `socat version 1.7.4.4 on ...` and,
    # when it was built with OpenSSL, `#define WITH_OPENSSL 1`.
    "socat": "socat -V 2>/dev/null | grep -E '^socat version|WITH_OPENSSL'",
    "cpu": "if [ -r /proc/stat ]; then echo /proc/stat; "
           "elif sysctl -n kern.cp_time >/dev/null 2>&1; then echo kern.cp_time; fi",
}

# The listening TCP sockets, headed by the tool that listed them (`parse_listening` reads it):
# ss (Linux), else netstat -an (Linux net-tools, FreeBSD, illumos; LISTEN lines only - Linux
# also lists unix sockets as LISTENING), else FreeBSD's sockstat -l (its TCP lines).
LISTENING = (
    "if command -v ss >/dev/null 2>&1 && ss -Hltn >/dev/null 2>&1; then echo '#ss'; ss -Hltn; "
    "elif command -v netstat >/dev/null 2>&1; then echo '#netstat'; "
    "netstat -an 2>/dev/null | grep -E 'LISTEN([[:space:]]|$)'; "
    "elif command -v sockstat >/dev/null 2>&1; then echo '#sockstat'; "
    "sockstat -l 2>/dev/null | grep -E '[[:space:]]tcp[46]*[[:space:]]'; "
    "else echo '#none'; fi"
)


@dataclass(frozen=True, slots=True)
class HostTools:
    """The userland tools of one host, as probed, and which fallback each job uses."""

    tools: frozenset[str] = frozenset()
    probed: bool = False  # False for a probe without these sections (recorded older output)
    job_control: bool = False  # `set -m` works in its sh without a tty
    mem_available: int | None = None
    mem_total: int | None = None
    memory_source: str | None = None  # "/proc/meminfo", "sysctl" or None
    cpu_source: str | None = None  # "/proc/stat", "kern.cp_time" or None
    machine: str | None = None  # this boot of this machine (boot_id; hostname and boot time)
    openssl: tuple[int, int] | None = None  # OpenSSL's (major, minor); None: none, or LibreSSL
    socat: tuple[int, ...] | None = None  # socat's version where built with OpenSSL; else None

    @property
    def setsid(self) -> bool:
        return "setsid" in self.tools

    @property
    def truenas(self) -> bool:
        """A TrueNAS appliance (its middleware's client is there): no package manager for us."""
        return "midclt" in self.tools

    @property
    def socket_tool(self) -> str | None:
        """The tool that lists listening sockets, in the order `LISTENING` tries them."""
        for tool in ("ss", "netstat", "sockstat"):
            if tool in self.tools:
                return tool
        return None

    @property
    def process_groups(self) -> str:
        """How a pipeline gets a process group of its own there (see hosts.wrap_in_group)."""
        if self.setsid:
            return "setsid"
        if self.job_control:
            return "sh job control"
        return "ssh session group"

    def can_stop(self) -> bool:
        """Whether a cancelled pipeline can be found and stopped (ps, pkill, pgrep)."""
        return not self.probed or {"ps", "pkill", "pgrep"} <= self.tools

    def same_machine(self, other: HostTools) -> bool:
        """Whether `other` was probed on this very machine (its CPU is this one's)."""
        return self.machine is not None and self.machine == other.machine

    def can_see_listener(self) -> bool:
        return not self.probed or self.socket_tool is not None

    def describe(self) -> str:
        """One line: every probe result and the fallback in use."""
        parts = [f"groups: {self.process_groups}"]
        tool = self.socket_tool
        parts.append(f"sockets: {tool}" if tool else "sockets: none")
        parts.append(f"memory: {self.memory_source}" if self.memory_source
                     else "memory: unknown")
        parts.append(f"cpu: {self.cpu_source}" if self.cpu_source else "cpu: unknown")
        missing = [t for t in ("setsid", "ss", "flock") if t not in self.tools]
        if missing:
            parts.append("without " + ", ".join(missing))
        return "; ".join(parts)


# zstd and lz4 (compression in transit): FreeBSD has both in its base system from 12.0 (lz4
# from 11), so missing there means an old release or a PATH without /usr/bin.
COMPRESSOR_HINTS = {
    "zstd": {"Linux": "install it there: apt install zstd, or dnf install zstd",
             "FreeBSD": "zstd is part of FreeBSD's base system from 12.0: make sure the PATH of "
                        "a non-interactive login holds /usr/bin, or pkg install zstd",
             "SunOS": "install it there (OmniOS: pkg install compress/zstd; pkgsrc: pkgin "
                      "install zstd)",
             "": "install zstd there with the system's package manager"},
    "lz4": {"Linux": "install it there: apt install lz4, or dnf install lz4",
            "FreeBSD": "lz4 is part of FreeBSD's base system: make sure the PATH of a "
                       "non-interactive login holds /usr/bin, or pkg install lz4",
            "SunOS": "install it there (OmniOS: pkg install compress/lz4; pkgsrc: pkgin "
                     "install lz4)",
            "": "install lz4 there with the system's package manager"},
}
for _hints in COMPRESSOR_HINTS.values():
    _hints["illumos"] = _hints["SunOS"]


def install_hint(system: str, need: str, *, truenas: bool = False) -> str:
    """How a user of `system` (uname -s) gets `need` ("procps", "sockets", "zfs", "mbuffer", "tls",
    "zstd" or "lz4"), in their terms: never a Linux package name on FreeBSD, nor a package on
    a TrueNAS appliance (`truenas`), where the system takes none."""
    name = system.split()[0] if system else ""
    if need == "tls" and truenas:
        # SCALE 23.10 on (Debian 12) has OpenSSL 3: this is CORE (FreeBSD 13, OpenSSL 1.1.1)
        # or an older SCALE (Debian 11).
        return ("TrueNAS takes no packages: the private transport needs OpenSSL 3, which "
                "TrueNAS has from SCALE 23.10 on; until then the ssh transport encrypts")
    if need == "tls":
        # The private transport's ends: socat (the faster) or OpenSSL 3's own command.
        # openssl's package follows the release: Debian 11 and Proxmox 7 keep OpenSSL 1.1.
        return {"Linux": "install socat there: apt install socat, or dnf install socat; or, on "
                         "a release with OpenSSL 3 (Debian 12, Ubuntu 22.04, Proxmox 8 on), "
                         "apt install openssl",
                "FreeBSD": "install socat there: pkg install socat (FreeBSD 14 has OpenSSL 3 "
                           "in its base system too)"}.get(
            name, "install socat or OpenSSL 3 there with the system's package manager")
    if need == "openssl":
        return {"Linux": "install it there: apt install openssl, or dnf install openssl",
                "FreeBSD": "FreeBSD 14 has OpenSSL 3 in its base system; on older releases: "
                           "pkg install openssl and put /usr/local/bin first in the PATH of a "
                           "non-interactive login"}.get(
            name, "install OpenSSL 3 there with the system's package manager")
    if need in COMPRESSOR_HINTS:
        return COMPRESSOR_HINTS[need].get(name, COMPRESSOR_HINTS[need][""])
    if name == "Linux":
        return {"procps": "install procps there: apt install procps, or dnf install procps-ng",
                "sockets": "install iproute2 (ss) or net-tools (netstat) there",
                "zfs": "install OpenZFS there (Debian, Ubuntu, Proxmox: apt install "
                       "zfsutils-linux) and load it (modprobe zfs); if it is installed, connect "
                       "as root or tick sudo: zfs often lives in /usr/sbin, outside a user's PATH",
                "mbuffer": "install it there: apt install mbuffer, or dnf install mbuffer"}[need]
    if name == "FreeBSD":
        if need == "mbuffer":
            return "install it there: pkg install misc/mbuffer"
        if need == "zfs":
            return ("zfs is part of FreeBSD's base system: load it (kldload zfs, or "
                    "zfs_enable=\"YES\" in /etc/rc.conf) and make sure the PATH of a "
                    "non-interactive login holds /sbin")
    if name in ("SunOS", "illumos"):
        if need == "mbuffer":
            return "install it there (OmniOS: pkg install mbuffer; pkgsrc: pkgin install mbuffer)"
        if need == "zfs":
            return ("zfs is part of the base system: make sure the PATH of a non-interactive "
                    "login there holds /usr/sbin")
    if name in ("FreeBSD", "SunOS", "illumos"):
        # Base tools there: missing means the login's PATH lacks /bin:/usr/bin:/usr/sbin.
        return ("they are part of the base system: make sure the PATH of a non-interactive "
                "login there holds /bin, /usr/bin and /usr/sbin")
    if need == "zfs":
        return "install ZFS there, or add its directory to a non-interactive login's PATH"
    if need == "mbuffer":
        return "install mbuffer there with the system's package manager"
    return "install them there or add their directory to a non-interactive login's PATH"


def parse_sysctl(text: str) -> dict[str, str]:
    """`sysctl name...` output (`name: value` lines, FreeBSD sysctl(8)) into {name: value}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() and " " not in name.strip():
            out[name.strip()] = value.strip()
    return out


def parse_memory(meminfo: str, sysctl: str) -> tuple[int | None, int | None, str | None]:
    """(available, total, source) from /proc/meminfo lines or FreeBSD's sysctl figures.

    FreeBSD has no /proc/meminfo: free memory is `vm.stats.vm.v_free_count` pages of
    `hw.pagesize` bytes, the total `hw.physmem` bytes.
    """
    fields = {m.group(1): int(m.group(2)) * 1024
              for m in re.finditer(r"^(\w+):\s+(\d+) kB", meminfo, re.M)}
    if fields:
        avail = fields.get("MemAvailable", fields.get("MemFree"))
        return avail, fields.get("MemTotal"), "/proc/meminfo"
    values = parse_sysctl(sysctl)

    def num(name: str) -> int | None:
        value = values.get(name, "")
        return int(value) if value.isdigit() else None

    total, page, free = num("hw.physmem"), num("hw.pagesize"), num("vm.stats.vm.v_free_count")
    if total is None and (page is None or free is None):
        return None, None, None
    avail = free * page if free is not None and page is not None else None
    return avail, total, "sysctl"


def parse_tools(sections: dict[str, str]) -> HostTools:
    """HostTools from the probe's `PROBE_SECTIONS` output."""
    avail, total, source = parse_memory(sections.get("meminfo", ""),
                                        sections.get("sysctlmem", ""))
    cpu = sections.get("cpu", "").strip() or None
    return HostTools(
        # Older probes (recorded outputs) had one `@@setsid` / `@@ss` section per tool.
        tools=frozenset(sections.get("tools", "").split())
        | {t for t in ("setsid", "ss") if sections.get(t, "").strip()},
        probed="tools" in sections,
        job_control=sections.get("jobctl", "").strip() == "yes",
        mem_available=avail,
        mem_total=total,
        memory_source=source,
        cpu_source=cpu,
        machine=" ".join(sections.get("boot", "").split()) or None,
        openssl=parse_openssl(sections.get("openssl", "")),
        socat=parse_socat(sections.get("socat", "")),
    )


def parse_openssl(text: str) -> tuple[int, int] | None:
    """(major, minor) from `openssl version`; None for none or another library (LibreSSL)."""
    m = re.match(r"\s*OpenSSL (\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse_socat(text: str) -> tuple[int, ...] | None:
    """socat's version from `socat -V`, where it was built with OpenSSL; else None."""
    m = re.search(r"^socat version (\d+(?:\.\d+)*)", text, re.M)
    if m is None or not re.search(r"WITH_OPENSSL\s+1", text):
        return None
    return tuple(int(x) for x in m.group(1).split("."))


def _port(address: str) -> int | None:
    """The port of a local address: `0.0.0.0:22`, `[::]:22`, `*:22` or BSD's `*.22`, `::1.22`."""
    m = re.search(r"[.:](\d+)$", address)
    return int(m.group(1)) if m else None


def parse_listening(text: str) -> set[int]:
    """TCP ports in LISTEN state from `LISTENING`'s output (ss, netstat in its Linux, BSD and
    illumos forms, or sockstat -l)."""
    ports: set[int] = set()
    tool = "netstat"
    for line in text.splitlines():
        if line.startswith("#"):
            tool = line[1:].strip()
            continue
        fields = line.split()
        if not fields:
            continue
        address: str | None = None
        if tool == "ss" and len(fields) >= 4 and fields[0] == "LISTEN":
            address = fields[3]
        elif tool == "netstat" and fields[-1] == "LISTEN":
            # Linux and BSD: proto recv-q send-q local foreign state; illumos: local first.
            address = fields[3] if fields[0].lower().startswith("tcp") and len(fields) >= 6 \
                else fields[0]
        elif tool == "sockstat" and len(fields) >= 7 and fields[4].startswith("tcp"):
            address = fields[5]  # USER COMMAND PID FD PROTO LOCAL FOREIGN
        port = _port(address) if address else None
        if port is not None:
            ports.add(port)
    return ports


def listening_grep(port: int) -> str:
    """A shell test: true when `port` is among the listening TCP ports (any `LISTENING` form)."""
    return f"{{ {LISTENING}; }} | grep -Eq '[.:]{int(port)}([[:space:]]|$)'"


# -- CPU for the doctor -------------------------------------------------------------------------
def parse_cp_time(text: str) -> tuple[int, int] | None:
    """(busy, total) ticks from FreeBSD's `sysctl -n kern.cp_time`: user nice sys intr idle."""
    try:
        ticks = [int(x) for x in text.split()]
    except ValueError:
        return None
    if len(ticks) != 5:
        return None
    total = sum(ticks)
    return total - ticks[4], total


__all__ = ["LISTENING", "PROBE_SECTIONS", "HostTools", "install_hint", "listening_grep",
           "parse_cp_time", "parse_listening", "parse_memory", "parse_sysctl", "parse_tools"]

"""The one shell script that reads a host's side of the path to its peer (POSIX sh: Linux and
FreeBSD alike). Its sections (`@@name` lines) are read by `parse.parse_link`."""

from __future__ import annotations

from .. import cmdline

PROBE_WAIT = 1  # seconds a path MTU probe waits for its echo reply

# $R: the host's route to the peer $A; $IF: the interface it leaves by (empty: unknown).
ROUTE = r"""
if command -v ip >/dev/null 2>&1; then
  R=$(ip route get "$A" 2>/dev/null)
  IF=$(printf '%s\n' "$R" | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n 1)
else
  R=$(route -n get "$A" 2>/dev/null)
  IF=$(printf '%s\n' "$R" | sed -n 's/^ *interface: *//p' | head -n 1)
fi
"""

# Each section is `@@name` then what one command printed; a missing tool prints nothing.
_BODY = "echo @@system; uname -s 2>/dev/null" + ROUTE + r"""echo @@route; printf '%s\n' "$R"
M=
if [ -n "$IF" ]; then
  if [ -d /sys/class/net ]; then
    echo @@link; ip -d -o link show dev "$IF" 2>/dev/null
    M=$(ip -o link show dev "$IF" 2>/dev/null | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
    echo @@speed; cat "/sys/class/net/$IF/speed" 2>/dev/null
    echo @@duplex; cat "/sys/class/net/$IF/duplex" 2>/dev/null
    echo @@mtu; cat "/sys/class/net/$IF/mtu" 2>/dev/null
    echo @@device; [ -e "/sys/class/net/$IF/device" ] && echo yes
    if command -v tc >/dev/null 2>&1; then
      echo @@tc; tc qdisc show dev "$IF" 2>/dev/null; tc class show dev "$IF" 2>/dev/null
    fi
  else
    echo @@ifconfig; ifconfig "$IF" 2>/dev/null
    M=$(ifconfig "$IF" 2>/dev/null | sed -n 's/.* mtu \([0-9]*\).*/\1/p' | head -n 1)
  fi
  if command -v ethtool >/dev/null 2>&1; then
    echo @@ethtool; ethtool "$IF" 2>/dev/null
    echo @@rings; ethtool -g "$IF" 2>/dev/null
  fi
fi
echo @@cpufreq
cat /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq 2>/dev/null | tr '\n' ' '
echo; cat /sys/devices/system/cpu/cpu[0-9]*/cpufreq/cpuinfo_max_freq 2>/dev/null | tr '\n' ' '
echo; sysctl -n dev.cpu.0.freq dev.cpu.0.freq_levels 2>/dev/null
# Path MTU: the largest IP packet that reaches the peer with Don't Fragment set. The
# interface's MTU first (most paths carry it whole), else bisect between the minimum and it.
H=28; case "$A" in *:*) H=48;; esac
pm() {
  if [ "$S" = Linux ]; then ping -c 1 -W __WAIT__ -M do -s $(($1 - H)) "$A" >/dev/null 2>&1
  else ping -c 1 -t __WAIT__ -D -s $(($1 - H)) "$A" >/dev/null 2>&1; fi
}
echo @@pmtu
case "$R" in local*) IF=;; esac  # one machine: no wire to probe
if [ -n "$IF" ] && command -v ping >/dev/null 2>&1 && [ "${M:-0}" -gt 576 ] 2>/dev/null; then
  if pm "$M"; then echo "$M"
  elif pm 576; then
    lo=576; hi=$M
    while [ $((hi - lo)) -gt 1 ]; do
      mid=$(((lo + hi) / 2)); if pm $mid; then lo=$mid; else hi=$mid; fi
    done
    echo "$lo"
  else echo none; fi
fi
"""


def wire_script(peer: str, *, probe_mtu: bool = True) -> str:
    """The script that reads this host's side of the path to `peer` (validated here)."""
    body = _BODY.replace("__WAIT__", str(PROBE_WAIT))
    if not probe_mtu:
        body = body.split("# Path MTU:", 1)[0]
    return (f"A={cmdline.join([cmdline.address(peer)])}; S=$(uname -s 2>/dev/null)\n"
            + body.strip() + "\n")

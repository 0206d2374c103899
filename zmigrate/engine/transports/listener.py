"""The listener is ours or nothing: the probe beside a listening transport's receiver.

A probe runs in the listener's own process group and says on stderr when the port listens -
and only once the process holding it is one of that group (`ss -Hltnp`'s pid on Linux,
`sockstat`'s on FreeBSD). A port held by anyone else is named (`TAKEN_MARK`) and the step
stops before the sender starts, so no byte of the stream reaches a squatter. Where neither tool
can name a socket's owner the probe says so (`UNCHECKED_WORD`) instead of passing silently.
"""

from __future__ import annotations

from ..hosts import tools as capabilities

LISTEN_TIMEOUT = 20.0
LISTENING_MARK = "@@zmigrate-listening"  # printed by the listener's own readiness probe
# Follows LISTENING_MARK when no tool there names a socket's process: "listening, unchecked".
UNCHECKED_WORD = "unchecked"
# Printed instead when another process holds the port: `TAKEN_MARK pid user args` (pid "?"
# when the host does not show it: another user's process).
TAKEN_MARK = "@@zmigrate-taken"
# Printed by the same probe once the port stops listening: mbuffer -I closes its listening
# socket when it accepts the sender (one that it rejects leaves it open), so the source has
# connected - even before `zfs send` has written its first byte.
CONNECTED_MARK = "@@zmigrate-connected"
# Checks in a row that must find the port's socket without a visible process before it counts
# as another user's (one check may race a socket made while ss was reading the processes).
UNSEEN_CHECKS = 5
# How long the probe keeps watching for that connection (the step fails long before).
CONNECTED_WATCH = 600.0


def owners(port: int) -> str:
    """A shell line printing one word per TCP socket listening on `port`: the pid holding it,
    or `?` when the host hides it; `#unchecked` alone when neither ss nor sockstat is there."""
    p = int(port)
    ss = ("ss -Hltnp 2>/dev/null | awk -v p=" + str(p) + " '$4 ~ (\"[.:]\" p \"$\") "
          "{ if (match($0, /pid=[0-9]+/)) print substr($0, RSTART + 4, RLENGTH - 4); "
          "else print \"?\" }'")
    # FreeBSD: USER COMMAND PID FD PROTO LOCAL FOREIGN; -p matches either end, so test LOCAL.
    sockstat = (f"sockstat -l -P tcp -p {p} 2>/dev/null | awk -v p={p} "
                "'$6 ~ (\"[.:]\" p \"$\") { print ($3 ~ /^[0-9]+$/) ? $3 : \"?\" }'")
    return ("{ if command -v ss >/dev/null 2>&1 && ss -Hltnp >/dev/null 2>&1; then " + ss
            + "; elif command -v sockstat >/dev/null 2>&1; then " + sockstat
            + "; else echo '#unchecked'; fi; }")


def probe(port: int, seconds: float = LISTEN_TIMEOUT, *, connected: bool = True) -> str:
    """The probe's shell line, run in the background of the listener's own group: it prints
    LISTENING_MARK once a process of that group holds `port` and nobody else does (then, with
    `connected`, CONNECTED_MARK once the port no longer listens), or TAKEN_MARK and stops when
    someone else holds it."""
    tries = max(1, round(seconds / 0.02))
    watch = max(1, round(CONNECTED_WATCH / 0.1))
    grep = capabilities.listening_grep(port)
    # $$ is the listener's shell (a subshell keeps it): its group is the listener's group.
    check = (f"o=$({owners(port)}); case $o in '#unchecked') "
             f"{grep} && {{ echo {LISTENING_MARK} {UNCHECKED_WORD} >&2; break; }};; "
             "?*) m=; s=; for q in $o; do "
             "h=$(ps -o pgid= -p \"$q\" 2>/dev/null); h=$(echo $h); "
             "if [ -n \"$h\" ] && [ \"$h\" = \"$g\" ]; then m=1; else s=$q; fi; done; "
             # ss lists processes before sockets: a socket made between the two has no owner
             # yet. Only one that stays ownerless for UNSEEN_CHECKS checks is another's.
             f"if [ \"$s\" = '?' ]; then u=$((u+1)); [ $u -lt {UNSEEN_CHECKS} ] && {{ s=; m=; }}; "
             "else u=0; fi; "
             f"if [ -n \"$s\" ]; then echo {TAKEN_MARK} $s "
             "$(ps -o user=,args= -p \"$s\" 2>/dev/null | head -n 1) >&2; exit 1; fi; "
             f"[ -n \"$m\" ] && {{ echo {LISTENING_MARK} >&2; break; }};; esac; ")
    return ("( set -f; g=$(ps -o pgid= -p $$); g=$(echo $g); i=0; u=0; "
            f"while [ $i -lt {tries} ]; do "
            f"{check}i=$((i+1)); sleep 0.02 2>/dev/null || sleep 1; done; "
            f"[ $i -lt {tries} ] || exit 1; i=0; "
            + (f"while [ $i -lt {watch} ]; do {grep} || {{ echo {CONNECTED_MARK} >&2; exit 0; "
               "}; i=$((i+1)); sleep 0.1 2>/dev/null || sleep 1; done " if connected else "")
            + ") &")


def with_readiness_probe(line: str, port: int, seconds: float = LISTEN_TIMEOUT, *,
                         connected: bool = True) -> str:
    """`line` (a listener's pipeline) with `probe` beside it, in its process group: the
    listener's own channel says it is ready, one SSH session sooner than a separate check
    (about 0.1 s a dataset in a tree)."""
    return f"{probe(port, seconds, connected=connected)} {line}"


def holders(port: int) -> str:
    """A shell line printing a TAKEN_MARK line for each process holding `port` (used when the
    listener could not bind it, after its probe had no time to say who did)."""
    return (f"set -f; for q in $({owners(port)}); do [ \"$q\" = '#unchecked' ] && exit 0; "
            f"echo {TAKEN_MARK} $q $(ps -o user=,args= -p \"$q\" 2>/dev/null | head -n 1); "
            "done")


def parse_taken(text: str) -> tuple[str, str] | None:
    """(pid, `user args`) from a TAKEN_MARK line; None for any other line."""
    if not text.startswith(TAKEN_MARK + " "):
        return None
    pid, _, who = text[len(TAKEN_MARK) + 1:].strip().partition(" ")
    return pid, who.strip()


__all__ = ["CONNECTED_MARK", "LISTENING_MARK", "LISTEN_TIMEOUT", "TAKEN_MARK", "UNCHECKED_WORD",
           "holders", "owners", "parse_taken", "probe", "with_readiness_probe"]

"""Where a private step's keys live on a host: a directory per end in /tmp (mode 0700, an
unguessable name), what it holds, and the one rule by which every clean-up removes it - the
ends on their way out, the step after a failure, the next step's sweep of stale ones, and the
stop of a gone run's leftover groups (leftovers.py), which names them in its shells' argv."""

from __future__ import annotations

import re
import secrets

from .. import cmdline

KEY_PREFIX = "zmigrate-tls-"  # in /tmp, + _HEX hex digits and -s (the source's) or -d
_HEX = 24  # a step's random token, in hex digits
# A step's key directories outlive it only where its ends were killed with KILL and no
# clean-up reached the host (a lost link, a crash of both): the next private step there removes
# this login's older than this. An end needs its keys only until its session carries bytes
# (seconds after the step starts), so even a step still running gives up nothing.
STALE_MINUTES = 60
# What a step puts in its key directory, all that its removal removes (a directory holding
# anything else stays): the keys (transports/private.make_keys), and the ends' FIFO, error log
# and exit status (transports/tls_ends).
KEY_FILES = ("own.crt", "own.key", "peer.crt")
END_FILES = ("idle", "err", "rc")
# Only names of key_dirs' shape are ever removed.
_SHAPE = KEY_PREFIX + "[0-9a-f]" * _HEX + "-[sd]"  # find's -name
_NAMED = re.compile(r"/tmp/" + re.escape(KEY_PREFIX) + f"[0-9a-f]{{{_HEX}}}-[sd]"
                    + r"(?![0-9A-Za-z_-])")


def key_dirs() -> tuple[str, str]:
    """Fresh, unguessable directory names for one step's keys: (source's, destination's)."""
    token = secrets.token_hex(_HEX // 2)
    return f"/tmp/{KEY_PREFIX}{token}-s", f"/tmp/{KEY_PREFIX}{token}-d"


def removal_of(d: str) -> str:
    """The shell line that removes key directory `d` (a shell word: a quoted path or a
    variable's "$name"): its files by name, then the directory itself, which stays if anything
    else is in it."""
    files = " ".join(f"{d}/{name}" for name in (*KEY_FILES, *END_FILES))
    return f"rm -f {files}; rmdir {d} 2>/dev/null"


def removal(d: str) -> str:
    """The remote line that removes the key directory `d` a step made (removal's rule)."""
    return removal_of(cmdline.join([d]))


def stale_sweep() -> str:
    """The remote line that removes this login's key directories (key_dirs' names, mode 0700)
    older than STALE_MINUTES, by removal's rule (GNU and BSD find; where find cannot, nothing
    is removed and the step goes on)."""
    each = cmdline.join([f'for d; do {removal_of(chr(34) + "$d" + chr(34))}; done'])
    return (f"find /tmp -maxdepth 1 -type d -name '{_SHAPE}' -perm 700 -user \"$(id -u)\" "
            f"-mmin +{STALE_MINUTES} -exec sh -c {each} sh {{}} + 2>/dev/null; ")


def named_in(texts: list[str]) -> list[str]:
    """The key directories (key_dirs' shape) that command lines name: a step's ends name theirs
    in the clean-up their shell sets up first."""
    return sorted({m.group(0) for text in texts for m in _NAMED.finditer(text)})


__all__ = ["END_FILES", "KEY_FILES", "KEY_PREFIX", "STALE_MINUTES", "key_dirs", "named_in",
           "removal", "removal_of", "stale_sweep"]

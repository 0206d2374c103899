"""Where received or live copies would mount on the destination, and which of those paths the
destination already uses: the mountpoint of another of its datasets, or a folder that holds
something. A mount there would hide what is there (OpenZFS mounts over a non-empty folder by
default on FreeBSD, and on Linux with overlay=on), so the tree, a single dataset's `-R`/`-p`
receive and a two-host go-live refuse it before anything runs (PreflightReason.MOUNT_COLLISION).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from .. import cmdline
from ..errors import PreflightError, PreflightReason
from ..hosts import Host

# How a folder a mount would cover is in use: the word the shell check prints, the words a
# refusal says.
HOLDS_FILES = "a folder that holds files"
UNLISTED = "a folder the login cannot list (it may hold files)"
_HOW = {"files": HOLDS_FILES, "unlisted": UNLISTED}
# POSIX sh: `held D` prints "files" for a folder with entries, "unlisted" for one the login
# (never sudo: the documented sudoers grants zfs, pkill and pgrep only) cannot list or cannot
# even see into (under a folder it may not search), nothing for a free or absent path.
_HELD = ('held() { if [ -d "$1" ]; then o=$(ls -A -- "$1" 2>/dev/null) || { echo unlisted; '
         'return; }; [ -n "$o" ] && echo files; return; fi; [ -e "$1" ] && return; p=$1; '
         'while p=$(dirname -- "$p") && [ ! -e "$p" ]; do :; done; '
         '[ -x "$p" ] || echo unlisted; }; ')


def folders_in_use(host: Host, paths: Sequence[str]) -> dict[str, str]:
    """path -> how it is in use (HOLDS_FILES, UNLISTED), for each of `paths` a mount would
    hide something at, or cannot be told not to - one round trip."""
    if not paths:
        return {}
    script = (_HELD + 'for d in "$@"; do w=$(held "$d"); [ -n "$w" ] && '
              'printf "%s %s\\n" "$w" "$d"; done')
    r = host.run(cmdline.join(["sh", "-c", script, "sh", *paths]), timeout=60)
    return {path: how for path, how in _read_held(r.stdout).items() if path in paths}


def _read_held(out: str) -> dict[str, str]:
    """path -> how it is in use, from `held`'s "WORD PATH" lines (others left out)."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        word, _, path = line.partition(" ")
        if word in _HOW and path.startswith("/"):
            found[path] = _HOW[word]
    return found


def parent_mountpoint(dst: Host, destination: str) -> str | None:
    """The mountpoint the copy's parent on the destination gives what inherits it (None: it
    mounts nothing: none, legacy, or unreadable)."""
    parent = posixpath.dirname(destination) or destination
    r = dst.execute(dst.privileged(
        ["zfs", "get", "-Hp", "-o", "value", "mountpoint", cmdline.dataset(parent)]))
    base = r.stdout.strip() if r.ok else ""
    return base if base.startswith("/") else None


def received_paths(pairs: Sequence[tuple[str, str]], local: Mapping[str, str],
                   destination: str, base: str | None) -> dict[str, str]:
    """destination name -> the path it mounts on, for each (source, destination) pair received
    mounted: its source's own mountpoint where set (the stream carries it), else inherited from
    the nearest received ancestor, else from the copy's parent (mounted at `base`)."""
    parent = posixpath.dirname(destination) or destination
    paths: dict[str, str] = {}
    resolved: dict[str, str] = {}  # destination -> its mountpoint value, paths or not
    for s_name, d_name in sorted(pairs, key=lambda p: p[1].count("/")):
        value = local.get(s_name)
        if value is None:
            up = max((a for a in resolved if cmdline.below(d_name, a)), key=len, default=None)
            if up is not None:
                above = resolved[up]
                value = posixpath.join(above, d_name[len(up) + 1:]) \
                    if above.startswith("/") else above
            elif base is not None:
                value = posixpath.join(base, posixpath.relpath(d_name, parent))
            else:
                value = "none"
        resolved[d_name] = value
        if value.startswith("/"):
            paths[d_name] = value
    return paths


def paths_in_use(host: Host, paths: Mapping[str, str], own: Sequence[str] = ()
                 ) -> dict[str, str]:
    """dataset -> how the path it would mount on (`paths`) is in use on `host`: "where X is
    mounted" (another dataset, not one of `own` or below them), or "a folder that holds
    files". Two reads: the mounted file systems' mountpoints, and a listing of the paths."""
    if not paths:
        return {}
    r = host.execute(host.privileged(["zfs", "list", "-H", "-o", "name,mounted,mountpoint",
                                      "-t", "filesystem"]), timeout=120)
    others: dict[str, str] = {}  # mountpoint -> another dataset mounted there
    ours: set[str] = set()  # where one of `own` is mounted now: its own files, no collision
    for line in r.stdout.splitlines() if r.ok else []:
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] != "yes" or not parts[2].startswith("/"):
            continue
        if any(cmdline.within(parts[0], o) for o in own):
            ours.add(parts[2])
        else:
            others.setdefault(parts[2], parts[0])
    out = {ds: f"where {others[mp]} is mounted" for ds, mp in paths.items() if mp in others}
    left = {ds: mp for ds, mp in paths.items() if ds not in out and mp not in ours}
    busy = folders_in_use(host, list(left.values()))
    out.update({ds: busy[mp] for ds, mp in left.items() if mp in busy})
    return out


def covered_folder(host: Host, destination: str, chosen: str | None = None
                   ) -> tuple[str, str] | None:
    """Where a new dataset `destination`, received mounted, mounts (its parent's mountpoint
    and its own name; or the `chosen` mountpoint) and how it is in use (folders_in_use), if a
    mount there would hide something; None when it is free, or mounts nowhere. One command:
    the parent's mountpoint, then that path looked at."""
    if chosen is not None:
        if not chosen.startswith("/"):
            return None
        how = folders_in_use(host, [chosen]).get(chosen)
        return None if how is None else (chosen, how)
    parent = posixpath.dirname(destination) or destination
    get = cmdline.join(host.privileged(["zfs", "get", "-Hp", "-o", "value", "mountpoint",
                                        cmdline.dataset(parent)]))
    script = (_HELD + f'mp=$({get}) || exit 0; case "$mp" in /*) ;; *) exit 0 ;; esac; '
              'd="${mp%/}/$1"; w=$(held "$d"); [ -n "$w" ] && printf "%s %s\\n" "$w" "$d"; '
              'exit 0')
    r = host.run(cmdline.join(["sh", "-c", script, "sh", posixpath.basename(destination)]),
                 timeout=60)
    found = _read_held(r.stdout) if r.ok else {}
    return next(iter(found.items()), None)


def collision(host: str, paths: Mapping[str, str], clashes: Mapping[str, str], what: str,
              fix: str, way: str, **figures: str) -> PreflightError:
    """The refusal naming each dataset, the path in use it would mount on, and how it is used
    (`figures`: what a face needs besides `way` to word its fix)."""
    return PreflightError(
        f"{what} would mount over what the destination already uses: "
        + "; ".join(f"{ds} would mount on {paths[ds]} ({how})"
                    for ds, how in sorted(clashes.items())),
        host=host, fix=fix, reason=PreflightReason.MOUNT_COLLISION,
        figures={"way": way, **figures})

"""Validated ZFS names and shell quoting: the only place a command line is assembled."""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Sequence

from .errors import InvalidNameError

# ZFS component characters (zfs_namecheck.c, valid_char): alphanumerics and "_-.: ". Every one
# is accepted - a space too: OpenZFS allows it and users have such datasets. Nothing else
# (quotes, `$`, `;`, newlines...) is, and every word reaches a shell through join() anyway.
_COMPONENT = r"[A-Za-z0-9_.: -]+"
_DATASET_RE = re.compile(rf"^{_COMPONENT}(/{_COMPONENT})*$")
_SNAPSHOT_RE = re.compile(rf"^(?P<ds>{_COMPONENT}(/{_COMPONENT})*)@(?P<snap>{_COMPONENT})$")
_BOOKMARK_RE = re.compile(rf"^(?P<ds>{_COMPONENT}(/{_COMPONENT})*)#(?P<mark>{_COMPONENT})$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:%\[\]-]+$")
_USER_RE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*\$?$")
MAX_NAME = 255


def _check_common(name: str, kind: str) -> None:
    if not name or len(name) > MAX_NAME:
        raise InvalidNameError(
            f"{kind} name {name!r} is empty or longer than {MAX_NAME} characters"
        )
    if name.startswith("-"):
        raise InvalidNameError(f"{kind} name {name!r} starts with '-'")
    if any(part in (".", "..") for part in re.split(r"[/@#]", name)):
        raise InvalidNameError(f"{kind} name {name!r} has a '.' or '..' component")


_TAG_RE = re.compile(r"^zmigrate-job-[0-9a-f]{12}$")


def check_tag(tag: str) -> str:
    """Return `tag` if it is a run's process-group tag (`zmigrate-job-` and 12 hex digits)."""
    if not _TAG_RE.match(tag):
        raise InvalidNameError(f"process tag {tag!r} is not valid")
    return tag


def dataset(name: str) -> str:
    """Return `name` if it is a valid dataset name (pool/a/b), else raise InvalidNameError."""
    _check_common(name, "dataset")
    if not _DATASET_RE.match(name):
        raise InvalidNameError(
            f"dataset name {name!r} is not valid",
            fix="use letters, digits, spaces and _ - . : separated by '/'",
        )
    return name


def snapshot(name: str) -> str:
    """Return `name` if it is a valid snapshot name (pool/ds@snap), else raise InvalidNameError."""
    _check_common(name, "snapshot")
    if not _SNAPSHOT_RE.match(name):
        raise InvalidNameError(
            f"snapshot name {name!r} is not valid",
            fix="write it as pool/dataset@snapshot with letters, digits, spaces and _ - . :",
        )
    return name


def bookmark(name: str) -> str:
    """Return `name` if it is a valid bookmark name (pool/ds#mark), else raise InvalidNameError."""
    _check_common(name, "bookmark")
    if not _BOOKMARK_RE.match(name):
        raise InvalidNameError(f"bookmark name {name!r} is not valid")
    return name


def snap_part(name: str) -> str:
    """Return the part after '@' of a valid short snapshot name."""
    if not re.fullmatch(_COMPONENT, name) or name in (".", ".."):
        raise InvalidNameError(f"snapshot name {name!r} is not valid")
    return name


def split_snapshot(name: str) -> tuple[str, str]:
    """Split a valid `pool/ds@snap` into (`pool/ds`, `snap`)."""
    snapshot(name)
    ds, snap = name.split("@", 1)
    return ds, snap


def hostname(name: str) -> str:
    """Return `name` if it is a plausible host name, alias or address."""
    if not name or not _HOST_RE.match(name) or name.startswith("-"):
        raise InvalidNameError(f"host name {name!r} is not valid")
    return name


def address(text: str) -> str:
    """`text` if it is an IP address or a plausible host name (brackets of an IPv6 literal
    dropped), else InvalidNameError."""
    bare = text.strip().removeprefix("[").removesuffix("]")
    try:
        return str(ipaddress.ip_address(bare.split("%", 1)[0])) if "%" not in bare \
            else hostname(bare)
    except ValueError:
        pass
    if ":" in bare or "[" in bare:
        raise InvalidNameError(f"address {text!r} is not valid")
    return hostname(bare)


def username(name: str) -> str:
    """Return `name` if it is a plausible POSIX user name."""
    if not _USER_RE.match(name):
        raise InvalidNameError(f"user name {name!r} is not valid")
    return name


def join(argv: Sequence[str]) -> str:
    """Quote every word of `argv` and join them into one shell word list."""
    return shlex.join(argv)


def pipe(*stages: str) -> str:
    """Join already-quoted stages into a pipeline."""
    return " | ".join(stages)


def status_of_first(first: str, *rest: str) -> str:
    """`first | rest...` whose exit status is `first`'s (POSIX sh has no pipefail): where the
    rest only counts or drops what `first` carries, a `first` that failed fails the line."""
    return (f"{{ {{ {{ ( {first} ); echo $? >&3; }} | {pipe(*rest)} >&4 3>&-; }} 3>&1 | "
            '{ read -r s; exit "${s:-1}"; }; } 4>&1')


def within(name: str, root: str) -> bool:
    """`name` is `root` or inside it: a dataset or a snapshot's dataset below a dataset, a path
    below a directory (`root` may end in `/`, as `/` does)."""
    return name == root or name.startswith(root.rstrip("/") + "/")


def below(name: str, root: str) -> bool:
    """`name` is strictly inside `root` (a descendant, not `root` itself)."""
    return name != root and within(name, root)

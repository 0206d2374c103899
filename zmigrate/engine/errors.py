"""Errors that name what failed, on which host, and how to fix it."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from .remedies import Remedy, fix_words


class ZmigrateError(Exception):
    """Base of every error zmigrate reports to a user.

    Args:
        message: what failed, in plain words.
        host: the host it failed on, if any.
        fix: what the user can do about it, in words for every face.
        remedies: ways out that name a control, each face words them (`fix` reads the
            command line's after the common words).
        figures: what a face needs to word them.
    """

    def __init__(self, message: str, *, host: str | None = None, fix: str | None = None,
                 remedies: tuple[Remedy, ...] = (),
                 figures: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.host = host
        self.said_fix = fix
        self.remedies = remedies
        self.figures: dict[str, str] = dict(figures or {})

    @property
    def fix(self) -> str | None:
        """What the user can do, as the command line says it."""
        return fix_words(self.said_fix, self.remedies, self.figures)

    @fix.setter
    def fix(self, text: str | None) -> None:
        self.said_fix, self.remedies = text, ()

    def __str__(self) -> str:
        text = f"{self.host}: {self.message}" if self.host else self.message
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class InvalidNameError(ZmigrateError):
    """A dataset, snapshot or host name that is not safe or not valid."""


class ConnectError(ZmigrateError):
    """The SSH control session could not be opened."""


class AuthError(ConnectError):
    """The host refused our credentials."""


class HostKeyError(ConnectError):
    """The host key is unknown and was not accepted, or it changed."""


class CommandError(ZmigrateError):
    """A command on a host exited with an error."""

    def __init__(
        self,
        message: str,
        *,
        host: str | None = None,
        fix: str | None = None,
        command: str = "",
        status: int | None = None,
        stderr: str = "",
        remedies: tuple[Remedy, ...] = (),
    ) -> None:
        super().__init__(message, host=host, fix=fix, remedies=remedies)
        self.command = command
        self.status = status
        self.stderr = stderr


def timed_out(timeout: float, host: str, line: str) -> CommandError:
    """A command on `host` that gave no answer within `timeout` seconds."""
    return CommandError(f"command did not finish within {timeout:.0f} s", host=host,
                        command=line,
                        fix=f"{host} may be short of CPU or memory (see its load with uptime or "
                            "top there), or the command hangs there; run again once it answers")


class PreflightReason(Enum):
    """Why a preflight check refused a transfer: what the faces decide on, never the wording."""

    OTHER = "other"
    POOL_ROOT = "pool_root"  # the destination is a pool's root dataset
    MISSING_TOOL = "missing_tool"  # zfs, mbuffer or setsid is not installed on a host
    NO_SOURCE = "no_source"  # the source dataset or snapshot does not exist
    NO_PARENT = "no_parent"  # the destination's parent dataset does not exist
    PARTIAL_RECEIVE = "partial_receive"  # an interrupted receive waits: resume or discard
    PARTIAL_MISMATCH = "partial_mismatch"  # the interrupted receive cannot be resumed as asked
    STALE_TOKEN = "stale_token"  # its resume token needs a snapshot the source no longer has
    NOT_EMPTY = "not_empty"  # the destination exists with no snapshots (--force overwrites)
    ALREADY_THERE = "already_there"  # the destination already holds the snapshot
    BASE_MISSING = "base_missing"  # the asked --base is not on the destination
    NO_COMMON_SNAPSHOT = "no_common_snapshot"  # the destination is unrelated to the source
    DIVERGED = "diverged"  # newer snapshots than the common one (--force rolls back)
    UNSUPPORTED = "unsupported"  # a host lacks a zfs feature the options need
    KEY_NOT_LOADED = "key_not_loaded"  # an encrypted source can only be sent raw
    NO_ADDRESS = "no_address"  # no address for the source to reach the destination
    NO_PORT = "no_port"  # no free port, or the asked one is in use
    NO_SPACE = "no_space"  # not enough room on the destination
    PERMISSION = "permission"  # the user lacks a ZFS permission
    MOUNT_COLLISION = "mount_collision"  # a received dataset would mount over a used directory
    BUSY = "busy"  # another zmigrate run's processes still work on the destination
    CHANGED = "changed"  # the destination changed after the plan: it would destroy more


class PreflightError(ZmigrateError):
    """A check before the transfer refused it; nothing has run.

    `reason` says which refusal it is, for code to decide on; `message` is for people;
    `figures` what a face needs to word its own fix (`parent`, `tool`, `install`, `feature`).
    """

    def __init__(self, message: str, *, host: str | None = None, fix: str | None = None,
                 reason: PreflightReason = PreflightReason.OTHER,
                 figures: Mapping[str, str] | None = None) -> None:
        super().__init__(message, host=host, fix=fix, figures=figures)
        self.reason = reason


class TransferError(ZmigrateError):
    """The transfer itself failed or could not be verified."""


class PortInUseError(TransferError):
    """The receiver could not bind its port (taken since it was picked): pick another."""


class CancelledError(ZmigrateError):
    """The user cancelled the job."""

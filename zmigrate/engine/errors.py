"""Errors that name what failed, on which host, and how to fix it."""

from __future__ import annotations


class ZmigrateError(Exception):
    """Base of every error zmigrate reports to a user.

    Args:
        message: what failed, in plain words.
        host: the host it failed on, if any.
        fix: what the user can do about it.
    """

    def __init__(self, message: str, *, host: str | None = None, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.host = host
        self.fix = fix

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
    ) -> None:
        super().__init__(message, host=host, fix=fix)
        self.command = command
        self.status = status
        self.stderr = stderr


class PreflightError(ZmigrateError):
    """A check before the transfer refused it; nothing has run."""


class TransferError(ZmigrateError):
    """The transfer itself failed or could not be verified."""


class CancelledError(ZmigrateError):
    """The user cancelled the job."""

"""Whether the two ends are one machine: decided here once, for connected hosts and for the
specs the faces read before connecting."""

from __future__ import annotations

from typing import Protocol

from .login import HostSpec


class Labelled(Protocol):
    """A host or a host spec: anything named the way the user names a host."""

    @property
    def label(self) -> str: ...


def same_host(a: Labelled, b: Labelled) -> bool:
    """Both ends are one machine: one object, or the same label (`local`, `user@host`, alias)."""
    return a is b or a.label == b.label


def one_connection(src: HostSpec, dst: HostSpec) -> bool:
    """Both ends may share one connection: one machine, and the destination asks for no sudo
    that the source's connection lacks (a destination with sudo gets a connection of its own)."""
    return same_host(src, dst) and (src.sudo or not dst.sudo)

"""Two independent remote calls at once: each host has its own connection, and a round trip to
each (80-200 ms on a real host) is most of the time such a pair takes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

A = TypeVar("A")
B = TypeVar("B")


def both(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Run `first` and `second` at once; re-raise the first one's error, else the second's."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-both") as pool:
        a, b = pool.submit(first), pool.submit(second)
        return a.result(), b.result()


__all__ = ["both"]

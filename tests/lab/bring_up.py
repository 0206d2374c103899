"""Bringing a lab part up inside a test: a part that cannot come up (not root, no /dev/fuse,
programs missing) fails the test with its message, never a traceback and never a skip, and is
stopped whatever happened."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

import pytest

from .util import LabCommandError
from .zfsfuse import LabUnavailableError

T = TypeVar("T")


@contextlib.contextmanager
def started(start: Callable[[], T], stop: Callable[[], None]) -> Iterator[T]:
    """What `start()` returns, then `stop()` whatever happened."""
    problem = ""
    try:
        try:
            value = start()
        except (LabUnavailableError, LabCommandError) as exc:
            problem = str(exc)
        if problem:
            pytest.fail(problem, pytrace=False)
        yield value
    finally:
        stop()


class Runner(Protocol):
    def start(self) -> object: ...
    def stop(self) -> None: ...


R = TypeVar("R", bound=Runner)


@contextlib.contextmanager
def running(runner: R) -> Iterator[R]:
    """`runner` started, then stopped with whatever it still runs."""
    with started(runner.start, runner.stop):
        yield runner

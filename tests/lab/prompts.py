"""Credentials for login tests: prompts that answer every secret question with one answer and
keep the questions asked (host keys: the engine's default, refused; the lab's hosts are known),
and a key with a passphrase authorized on the lab's sshd for a while."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from zmigrate.engine.hosts.login import Prompts

PASSPHRASE = "correct horse battery staple"


class Answers(Prompts):
    def __init__(self, secret: str | None) -> None:
        self.answer = secret
        self.asked: list[str] = []

    def secret(self, prompt: str) -> str | None:
        self.asked.append(prompt)
        return self.answer


@contextlib.contextmanager
def locked_key(key: Path, authorized_keys: Path) -> Iterator[Path]:
    """A new ed25519 key at `key` with PASSPHRASE, in `authorized_keys` until the block ends."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", PASSPHRASE, "-f", str(key)],
                   check=True)
    before = authorized_keys.read_text()
    authorized_keys.write_text(before + key.with_suffix(".pub").read_text())
    try:
        yield key
    finally:
        authorized_keys.write_text(before)

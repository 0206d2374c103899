"""What the wizard remembers between runs (QSettings): recent hosts and the last tuning."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from PySide6.QtCore import QSettings

from zmigrate.engine.hosts.login import HostSpec

MAX_RECENT = 10


@dataclass(frozen=True, slots=True)
class RecentHost:
    """A host the user connected to; never holds a password."""

    host: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None
    sudo: bool = False

    @classmethod
    def from_spec(cls, spec: HostSpec) -> RecentHost:
        return cls(spec.host, spec.user, spec.port, spec.identity, spec.sudo)

    @property
    def label(self) -> str:
        text = f"{self.user}@{self.host}" if self.user else self.host
        return f"{text}:{self.port}" if self.port else text


class Settings:
    """Typed access to QSettings; pass a QSettings of your own (tests use an ini file)."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.q = qsettings if qsettings is not None else QSettings()

    def recent_hosts(self) -> list[RecentHost]:
        raw = self.q.value("hosts/recent", "[]")
        try:
            items = json.loads(str(raw))
        except ValueError:
            return []
        out = []
        for item in items if isinstance(items, list) else []:
            try:
                out.append(RecentHost(**item))
            except TypeError:
                continue
        return out

    def remember_host(self, spec: HostSpec, side: str) -> None:
        """Put `spec` first in the recent list and remember it as the last `side` host."""
        entry = RecentHost.from_spec(spec)
        hosts = [entry] + [h for h in self.recent_hosts() if h != entry]
        self.q.setValue("hosts/recent", json.dumps([asdict(h) for h in hosts[:MAX_RECENT]]))
        self.q.setValue(f"hosts/last_{side}", json.dumps(asdict(entry)))

    def last_host(self, side: str) -> RecentHost | None:
        raw = self.q.value(f"hosts/last_{side}", "")
        try:
            return RecentHost(**json.loads(str(raw))) if raw else None
        except (ValueError, TypeError):
            return None

    def value(self, key: str, default: Any) -> Any:
        """A tuning value of the same type as `default`."""
        raw = self.q.value(f"options/{key}", default)
        if isinstance(default, bool):
            return raw in (True, "true", "1", 1)
        try:
            return type(default)(raw)
        except (TypeError, ValueError):
            return default

    def set_value(self, key: str, value: Any) -> None:
        self.q.setValue(f"options/{key}", value)

    def sync(self) -> None:
        self.q.sync()

"""What a host's side of the path is: `LinkReading` (and its `Rings`), defined in events.py
beside the `Wire` event that carries two of them."""

from ..events import LinkReading, Rings

__all__ = ["LinkReading", "Rings"]

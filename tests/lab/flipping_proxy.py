"""A TCP relay on loopback that flips one bit of what it carries: damage in flight, on demand.

The relay listens on [::1]:port and passes the stream on to 127.0.0.1:upstream - which is also
the one client address the listener accepts. Its port is not the listener's: zmigrate refuses a
port another process holds (transports/listener.py), so the test points the sender at the relay.
"""

from __future__ import annotations

import socket
import threading
import time


class FlippingProxy:
    """Accepts one connection on [::1]:port, relays it to 127.0.0.1:upstream, and XORs 0x01
    into byte `offset` of the stream (counted from the first byte received)."""

    def __init__(self, port: int, offset: int, upstream: int | None = None) -> None:
        self.port = port
        self.upstream = port if upstream is None else upstream
        self.offset = offset
        self.flipped = False
        self.relayed = 0
        self._server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self._server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("::1", port))
        self._server.listen(1)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="flipping-proxy")
        self._thread.start()

    def _serve(self) -> None:
        try:
            client, _ = self._server.accept()
        except OSError:
            return  # closed before anyone came
        with client, self._upstream() as upstream:
            try:
                while True:
                    data = bytearray(client.recv(1 << 16))
                    if not data:
                        break
                    at = self.offset - self.relayed
                    if 0 <= at < len(data):
                        data[at] ^= 0x01
                        self.flipped = True
                    self.relayed += len(data)
                    upstream.sendall(data)
                upstream.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the receiver hung up on the damaged stream: that is the point

    def _upstream(self) -> socket.socket:
        """The listener may come up a moment after the relay (it holds the same port number)."""
        deadline = time.monotonic() + 10
        while True:
            try:
                return socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        self._server.close()
        self._thread.join(10)

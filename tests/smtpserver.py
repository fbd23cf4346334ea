"""A real SMTP server for tests (aiosmtpd), started in-process on a free loopback port.

Why a real server and not a mock of smtplib: the properties we promise (one connection per
batch, a 5xx for one address leaves the rest delivered, an outage keeps mail queued) live
in the conversation between smtplib and a server, which a mock would only restate.

`SmtpServer` records every accepted message and every connection that greeted it, can
refuse chosen recipients with a 5xx (or 4xx), can hold a connection before its n-th
message (so a test can kill the sender between two messages), and can be stopped and
started again on the same port to simulate an outage.
"""

from __future__ import annotations

import asyncio
import email
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default as default_policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Received:
    """One message as the server accepted it, for one envelope recipient."""

    mail_from: str
    recipient: str
    data: bytes
    connection: int
    received_at: float  # time.perf_counter() when the server answered 250 to DATA

    @property
    def message(self) -> EmailMessage:
        return email.message_from_bytes(self.data, policy=default_policy)


@dataclass
class _Hold:
    after: int
    engaged: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)


class _Handler:
    def __init__(self, server: SmtpServer):
        self.server = server

    async def handle_EHLO(self, smtp, session, envelope, hostname, responses):
        session.host_name = hostname
        self.server._greeted(smtp)
        return responses

    async def handle_HELO(self, smtp, session, envelope, hostname):
        session.host_name = hostname
        self.server._greeted(smtp)
        return f"250 {smtp.hostname}"

    async def handle_MAIL(self, smtp, session, envelope, address, mail_options):
        hold = self.server._hold
        if hold is not None and self.server.message_count() >= hold.after:
            hold.engaged.set()
            while not hold.released.is_set():
                await asyncio.sleep(0.01)
            return "421 4.3.0 held by the test, closing"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, smtp, session, envelope, address, rcpt_options):
        reply = self.server.refuse.get(address.lower())
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, smtp, session, envelope):
        self.server._record(smtp, envelope)
        return "250 Message accepted for delivery"


class SmtpServer:
    """Start with `start()`, stop with `stop()`; `start()` again reuses the same port."""

    def __init__(
        self,
        *,
        port: int | None = None,
        tls_context: ssl.SSLContext | None = None,
        require_starttls: bool = False,
        implicit_tls: ssl.SSLContext | None = None,
        credentials: tuple[str, str] | None = None,
    ):
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.messages: list[Received] = []
        self.connections: list[object] = []
        # address (lower case) -> the reply to RCPT, e.g. "550 5.1.1 no such user"
        self.refuse: dict[str, str] = {}
        self._tls_context = tls_context
        self._require_starttls = require_starttls
        self._implicit_tls = implicit_tls
        self._credentials = credentials
        self._lock = threading.Lock()
        self._hold: _Hold | None = None
        self._controller: Controller | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> SmtpServer:
        kwargs = {}
        if self._tls_context is not None:
            kwargs.update(tls_context=self._tls_context, require_starttls=self._require_starttls)
        if self._credentials is not None:
            kwargs.update(authenticator=self._authenticate, auth_required=True)
            if self._tls_context is None and self._implicit_tls is None:
                kwargs["auth_require_tls"] = False
        self._controller = Controller(
            _Handler(self),
            hostname=self.host,
            port=self.port,
            ssl_context=self._implicit_tls,
            server_hostname="smtp.test",
            ready_timeout=5,
            **kwargs,
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._hold is not None:
            self._hold.released.set()
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    @property
    def running(self) -> bool:
        return self._controller is not None

    def __enter__(self) -> SmtpServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- behaviour ---------------------------------------------------------------------

    def refuse_recipient(self, address: str, reply: str = "550 5.1.1 no such user") -> None:
        self.refuse[address.lower()] = reply

    def hold_after(self, count: int) -> _Hold:
        """Stall the next MAIL command once `count` messages have been accepted."""
        self._hold = _Hold(after=count)
        return self._hold

    def release(self) -> None:
        if self._hold is not None:
            self._hold.released.set()
            self._hold = None

    # -- records -----------------------------------------------------------------------

    def message_count(self) -> int:
        with self._lock:
            return len(self.messages)

    def received_by(self, address: str) -> list[Received]:
        with self._lock:
            return [m for m in self.messages if m.recipient.lower() == address.lower()]

    def recipients(self) -> list[str]:
        with self._lock:
            return [m.recipient for m in self.messages]

    def connection_count(self) -> int:
        with self._lock:
            return len(self.connections)

    def wait_for(self, count: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.message_count() >= count:
                return True
            time.sleep(0.01)
        return self.message_count() >= count

    def reset(self) -> None:
        with self._lock:
            self.messages.clear()
            self.connections.clear()

    # -- handler callbacks (run on the server's thread) ----------------------------------

    # A connection is identified by its protocol object (one per TCP connection; the
    # session object is replaced after STARTTLS). The readiness probe never says EHLO.

    def _greeted(self, protocol) -> None:
        with self._lock:
            if not any(known is protocol for known in self.connections):
                self.connections.append(protocol)

    def _connection_index(self, protocol) -> int:
        for index, known in enumerate(self.connections):
            if known is protocol:
                return index
        return -1

    def _record(self, protocol, envelope) -> None:
        now = time.perf_counter()
        with self._lock:
            index = self._connection_index(protocol)
            for rcpt in envelope.rcpt_tos:
                self.messages.append(
                    Received(envelope.mail_from, rcpt, bytes(envelope.content), index, now)
                )

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = (
            isinstance(auth_data, LoginPassword)
            and self._credentials is not None
            and auth_data.login.decode() == self._credentials[0]
            and auth_data.password.decode() == self._credentials[1]
        )
        return AuthResult(success=ok, handled=False)

"""Keep player-supplied feed URLs from reaching our own network (SSRF).

A feed URL is chosen by a player, and the server fetches it: without this, a player could make
pbp request ``http://169.254.169.254/`` (cloud credentials), ``http://localhost:5432`` or the
office intranet. Rules: only http/https; refuse hostnames that resolve to loopback, private,
link-local, multicast, reserved or otherwise non-global addresses.

The check happens twice: ``check_url`` when the player submits the URL (clear error message),
and inside the connection itself on every request and every redirect hop. The connection
resolves the name once, validates every address, and connects to the validated address, so a
DNS answer that changes between check and connect (DNS rebinding) cannot slip through. The
TLS SNI and the Host header still use the hostname, because only socket creation is replaced.

``allow_private=True`` (PBP_ALLOW_PRIVATE_FEEDS=1) lifts the address rule for development,
tests and the demo; ``allowed_networks`` lifts it for specific networks only.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

import requests.adapters
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from adapters import deadline
from adapters.errors import BlockedURL, FeedTimeout, FeedUnreachable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# One getaddrinfo answer: (family, type, proto, canonname, sockaddr).
AddrInfo = tuple[Any, ...]
ALLOWED_SCHEMES = ("http", "https")


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses feeds may live at. Default: public (globally routable) only."""

    allow_private: bool = False
    allowed_networks: tuple[Network, ...] = ()

    @classmethod
    def build(
        cls, allow_private: bool = False, allowed_networks: Iterable[str] = ()
    ) -> AddressPolicy:
        return cls(allow_private, tuple(ipaddress.ip_network(n) for n in allowed_networks))

    def refusal(self, address: IPAddress) -> str | None:
        """Why *address* is refused, or None if it may be contacted."""
        if self.allow_private:
            return None
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if any(address in net for net in self.allowed_networks if net.version == address.version):
            return None
        return blocked_reason(address)


# Ranges the ipaddress module still counts as global. fec0::/10 (site-local) was deprecated
# but routers may still route it inside a site; 192.88.99.0/24 is the old 6to4 relay
# anycast prefix, whose relays would unwrap a packet onto whatever IPv4 address it carries.
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
_6TO4_RELAY = ipaddress.ip_network("192.88.99.0/24")


def _tunnelled(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address a 6to4 (2002::/16) or Teredo (2001::/32) address delivers to."""
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address.teredo is not None:
        return "Teredo", address.teredo[1]  # (server, client): packets go to the client
    return None


def blocked_reason(address: IPAddress) -> str | None:
    """The category that makes *address* unsafe to fetch from, or None for public addresses."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if isinstance(address, ipaddress.IPv6Address):
        tunnel = _tunnelled(address)
        inner = tunnel and blocked_reason(tunnel[1])
        if inner and tunnel:
            return f"{tunnel[0]}-wrapped {inner}"
        if address in _SITE_LOCAL:
            return "site-local"
    elif address in _6TO4_RELAY:
        return "6to4 relay anycast"
    checks = (
        ("loopback", address.is_loopback),
        ("unspecified", address.is_unspecified),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        ("non-public", not address.is_global),
    )
    return next((name for name, hit in checks if hit), None)


def split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; raises BlockedURL for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise BlockedURL(f"{url!r} is not a valid web address.", url=url) from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BlockedURL(
            f"Only http:// and https:// feed addresses are allowed, not {scheme or 'no'} scheme.",
            url=url,
        )
    if not parts.hostname:
        raise BlockedURL(f"{url!r} has no host name.", url=url)
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


def resolve(host: str, port: int) -> list[AddrInfo]:
    """getaddrinfo for TCP; looked up through the socket module so tests can monkeypatch it."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def resolve_in_time(host: str, port: int) -> list[AddrInfo]:
    """``resolve``, given up on when the thread's deadline passes.

    getaddrinfo has no timeout of its own (a slow DNS server for the blog's domain holds it
    for as long as the resolver retries), so under a deadline it runs in a thread of its own
    that is left to finish in the background. Addresses need no lookup: no thread.
    """
    left = deadline.remaining()
    if left is None or _is_address(host):
        return resolve(host, port)
    outcome: list[list[AddrInfo] | Exception] = []

    def lookup() -> None:
        try:
            outcome.append(resolve(host, port))
        except Exception as exc:  # handed to the waiting thread below
            outcome.append(exc)

    worker = threading.Thread(target=lookup, name="pbp-dns", daemon=True)
    worker.start()
    worker.join(max(left, 0))
    if not outcome:
        raise FeedTimeout(f"The host name {host!r} did not resolve in time.")
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


def checked_addresses(host: str, port: int, policy: AddressPolicy) -> list[AddrInfo]:
    """Resolve *host* and return its addrinfo tuples, or raise BlockedURL if ANY is refused.

    Refusing the whole name when one address is private avoids depending on which address
    the connection would happen to try first.
    """
    try:
        infos = resolve_in_time(host, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise FeedUnreachable(f"The host name {host!r} could not be resolved ({exc}).") from None
    if not infos:
        raise FeedUnreachable(f"The host name {host!r} has no addresses.")
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        reason = policy.refusal(address)
        if reason:
            where = str(address) if host == str(address) else f"{host} is {address}"
            raise BlockedURL(
                f"Feeds on {reason} addresses are not allowed ({where}). "
                "Use the blog's public address."
            )
    return infos


def check_url(
    url: str, *, allow_private: bool = False, policy: AddressPolicy | None = None
) -> None:
    """Validate a submitted feed URL (scheme and resolved addresses); raises BlockedURL."""
    policy = policy or AddressPolicy(allow_private=allow_private)
    _, host, port = split_url(url)
    try:
        checked_addresses(host, port, policy)
    except BlockedURL as exc:
        exc.url = url
        raise


if TYPE_CHECKING:
    # The mixin is only ever mixed into urllib3's connection classes: mypy checks it as one.
    _ConnectionBase = HTTPConnection
else:
    _ConnectionBase = object


class _GuardedConnectionMixin(_ConnectionBase):
    """Replace urllib3's socket creation: resolve, validate, connect to the validated IP.

    The socket is a DeadlineSocket (and, once TLS is on, a DeadlineSSLSocket), so the
    fetcher's deadline bounds every step of the exchange (adapters.deadline)."""

    policy: AddressPolicy = AddressPolicy()

    def _new_conn(self) -> socket.socket:
        host = self._dns_host.strip("[]")
        infos = checked_addresses(host, self.port, self.policy)
        last_error: OSError | None = None
        for family, socktype, proto, _, sockaddr in infos:
            sock = deadline.DeadlineSocket(family, socktype, proto)
            try:
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                if self.timeout is None or isinstance(self.timeout, int | float):
                    sock.settimeout(self.timeout)  # else urllib3's 'default' sentinel
                sock.connect(sockaddr)
            except TimeoutError as exc:  # DeadlineExceeded too
                sock.close()
                raise ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})"
                ) from exc
            except OSError as exc:
                sock.close()
                last_error = exc
                continue
            peer = ipaddress.ip_address(sock.getpeername()[0].split("%", 1)[0])
            reason = self.policy.refusal(peer)
            if reason:  # belt and braces: the socket must be where we validated
                sock.close()
                raise BlockedURL(f"Connected to a {reason} address ({peer}); refused.")
            return sock
        raise NewConnectionError(self, f"Failed to establish a new connection: {last_error}")

    def connect(self) -> None:
        super().connect()
        if isinstance(self.sock, ssl.SSLSocket):
            self.sock = deadline.bound_tls(self.sock)


def guarded_adapter(policy: AddressPolicy, **kwargs: Any) -> requests.adapters.HTTPAdapter:
    """A requests HTTPAdapter whose connections enforce *policy* on every connect."""
    http_conn: type[_GuardedConnectionMixin] = type(
        "GuardedHTTPConnection", (_GuardedConnectionMixin, HTTPConnection), {}
    )
    https_conn: type[_GuardedConnectionMixin] = type(
        "GuardedHTTPSConnection", (_GuardedConnectionMixin, HTTPSConnection), {}
    )
    http_conn.policy = https_conn.policy = policy
    http_pool = type("GuardedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn})
    https_pool = type("GuardedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn})

    class GuardedHTTPAdapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
            super().init_poolmanager(*args, **pool_kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": http_pool, "https": https_pool}

        def proxy_manager_for(self, proxy: Any, **proxy_kwargs: Any) -> NoReturn:
            raise BlockedURL("Feeds are fetched directly; proxies are not supported.")

    return GuardedHTTPAdapter(**kwargs)

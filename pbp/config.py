"""Every environment variable pbp reads, in one place (documented in docs/operating.md).

`load_config(instance_path, environ)` turns the environment into the plain dict that
`create_app` puts into `app.config`. Nothing else in pbp reads `os.environ`.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from pbp.errors import ConfigError

SECRET_KEY_FILE = "secret_key"
MAX_REQUEST_BYTES = 1024 * 1024  # the longest entry or sheet is far below this


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def default_database_url(instance_path: Path) -> str:
    """The embedded default: one SQLite file in the instance folder."""
    return f"sqlite:///{instance_path / 'pbp.sqlite3'}"


def ensure_instance_folder(instance_path: Path) -> None:
    """Create the instance folder (database, secret key, mail outbox live there).

    Mode 0700: the database holds dice seeds and the outbox holds password-reset links, so
    no other local user may list or read them. A folder that already exists is left as
    the operator set it.
    """
    try:
        instance_path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the instance folder {instance_path}: {exc}") from exc


def load_secret_key(instance_path: Path) -> str:
    """Read the instance's secret key, generating it once on first use.

    Never a hard-coded default: a key shared by every install would let anyone forge
    sessions and invite links. The file is created with mode 0600, atomically, so two
    processes starting together agree on one key.
    """
    path = instance_path / SECRET_KEY_FILE
    if not path.exists():
        ensure_instance_folder(instance_path)
        candidate = secrets.token_hex(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process won the race; read its key below
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(candidate)
    key = path.read_text().strip()
    if len(key) < 32:
        raise ConfigError(f"the secret key in {path} is too short; delete the file to regenerate")
    return key


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    value = (env.get(name) or "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {value!r}") from None
    if number < 0:
        raise ConfigError(f"{name} cannot be negative ({number})")
    return number


# Addresses that mean "every interface": no one can open a link to them.
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})


def served_base_url(host: str, port: int, machine_name: str) -> str:
    """The base URL for links when PBP_BASE_URL is unset (issue #27 item 1): the address
    `pbp serve --host HOST --port PORT` listens on. On every interface (0.0.0.0), the
    machine's name: the operator serves on all interfaces for other machines to connect,
    and to them 127.0.0.1 is themselves."""
    name = machine_name if host in WILDCARD_HOSTS else host
    if ":" in name:  # an IPv6 address
        name = f"[{name}]"
    return f"http://{name}" if port == 80 else f"http://{name}:{port}"


SIGNUP_MODES = ("invite", "open")


def signup_mode(value: str | None) -> str:
    """PBP_SIGNUP: `invite` (accounts come with an invitation) or `open` (anyone may
    sign up, confirming their address by mail)."""
    mode = (value or "invite").strip().lower()
    if mode not in SIGNUP_MODES:
        raise ConfigError(f"PBP_SIGNUP is {value!r}; set it to invite or open")
    return mode


def reply_domain(value: str | None) -> str:
    """PBP_REPLY_DOMAIN: a bare domain name (mail for reply+...@it reaches `pbp mail-in`)."""
    domain = (value or "").strip().lower().rstrip(".")
    if domain and not re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", domain):
        raise ConfigError(
            f"PBP_REPLY_DOMAIN is {value!r}; set it to a domain name, like example.org"
        )
    return domain


def load_config(instance_path: Path, environ: Mapping[str, str] | None = None) -> dict:
    """Read pbp's settings from the environment (see docs/operating.md, "Configuration")."""
    env = os.environ if environ is None else environ
    secret = env.get("SECRET_KEY") or load_secret_key(instance_path)
    max_request = _int(env, "PBP_MAX_REQUEST_BYTES", MAX_REQUEST_BYTES)
    return {
        "SECRET_KEY": secret,
        "DATABASE_URL": env.get("DATABASE_URL") or default_database_url(instance_path),
        "PBP_BASE_URL": (env.get("PBP_BASE_URL") or "http://127.0.0.1:5000").rstrip("/"),
        # Unset, `pbp serve` and `pbp demo` put the address they serve in PBP_BASE_URL.
        "PBP_BASE_URL_GIVEN": bool((env.get("PBP_BASE_URL") or "").strip()),
        # Seconds a rendered planet stays cached at most; 0 turns the cache off.
        "PBP_PAGE_CACHE_SECONDS": float(env.get("PBP_PAGE_CACHE_SECONDS") or 60),
        # Seconds a web process serves visitors a campaign's pages without re-reading its
        # content version (pbp.web.page_cache); 0 re-reads it on every request.
        "PBP_PAGE_RECHECK_SECONDS": float(env.get("PBP_PAGE_RECHECK_SECONDS") or 1),
        "SMTP_URL": env.get("SMTP_URL") or None,
        "MAIL_FROM": env.get("PBP_MAIL_FROM") or "pbp <pbp@localhost>",
        # Replies to notification mails (issue #31 item 3): mails carry a secret Reply-To
        # at this domain, whose mail `pbp mail-in` receives. Unset: no reply address.
        "PBP_REPLY_DOMAIN": reply_domain(env.get("PBP_REPLY_DOMAIN")),
        # Issue #31: Web Push's VAPID contact (mailto: or https://; unset: mailto:MAIL_FROM),
        # and the deadline of one push or chat post (it never holds a mail up).
        "PBP_VAPID_SUB": (env.get("PBP_VAPID_SUB") or "").strip() or None,
        "PBP_CHANNEL_SECONDS": float(env.get("PBP_CHANNEL_SECONDS") or 10),
        "PBP_SIGNUP": signup_mode(env.get("PBP_SIGNUP")),
        "PBP_ALLOW_PRIVATE_FEEDS": _flag(env.get("PBP_ALLOW_PRIVATE_FEEDS")),
        "PBP_POLL_THREADS": int(env.get("PBP_POLL_THREADS") or 16),
        "PBP_POLL_CONCURRENCY": int(env.get("PBP_POLL_CONCURRENCY") or 256),
        "PBP_POLL_PER_HOST": int(env.get("PBP_POLL_PER_HOST") or 2),
        "PBP_POLL_LEASE_SECONDS": float(env.get("PBP_POLL_LEASE_SECONDS") or 600),
        "PBP_FETCH_CONNECT_TIMEOUT": float(env.get("PBP_FETCH_CONNECT_TIMEOUT") or 5),
        "PBP_FETCH_READ_TIMEOUT": float(env.get("PBP_FETCH_READ_TIMEOUT") or 15),
        # Wall-clock limit on one fetch, and on all the fetches of one blog's poll or one
        # discovery together: a server dripping bytes cannot hold a poll pass or a web thread.
        "PBP_FETCH_TOTAL_SECONDS": float(env.get("PBP_FETCH_TOTAL_SECONDS") or 30),
        # The same limit for the feed discovery of the blog form (and its API twin): a person
        # waits for that one, and each one holds a web thread while it runs (issue #28 item 5).
        "PBP_DISCOVERY_SECONDS": float(env.get("PBP_DISCOVERY_SECONDS") or 10),
        # Flask refuses a bigger request body with 413 before a view reads it; a form's
        # fields are held in memory up to the same size (werkzeug's default is 500 kB).
        "MAX_CONTENT_LENGTH": max_request,
        "MAX_FORM_MEMORY_SIZE": max_request,
        # POSTs a minute per address to the WebSub callback: a busy hub pushes many blogs.
        "PBP_WEBSUB_LIMIT": env.get("PBP_WEBSUB_LIMIT") or "300 per minute",
        # POSTs a minute per address to the Webmention endpoint (issue #31 item 4).
        "PBP_WEBMENTION_LIMIT": env.get("PBP_WEBMENTION_LIMIT") or "60 per minute",
        # GETs of one secret calendar address (pbp.web.calendar): an app reading it every
        # few minutes fits; one stuck in a loop does not.
        "PBP_CALENDAR_LIMIT": env.get("PBP_CALENDAR_LIMIT") or "60 per hour",
        # What one blog's WebSub hub may push (pbp.services.noteworthy.push_limits): a
        # player may run the hub their feed names, and sign deliveries at will.
        "PBP_WEBSUB_DELIVERIES_PER_MINUTE": _int(env, "PBP_WEBSUB_DELIVERIES_PER_MINUTE", 6),
        "PBP_WEBSUB_ENTRIES_PER_DELIVERY": _int(env, "PBP_WEBSUB_ENTRIES_PER_DELIVERY", 50),
        "PBP_WEBSUB_ENTRIES_PER_DAY": _int(env, "PBP_WEBSUB_ENTRIES_PER_DAY", 200),
        "PBP_WEBSUB_BYTES_PER_DAY": _int(env, "PBP_WEBSUB_BYTES_PER_DAY", 10 * 1024 * 1024),
        # Where Flask-Limiter keeps its counters: memory:// is per process, so with several
        # web workers use redis:// or memcached:// to make every limit hold across them.
        "RATELIMIT_STORAGE_URI": env.get("RATELIMIT_STORAGE_URI") or "memory://",
        # Wrong passwords for one account from any address (issue #28 item 8): this many
        # are free, then each makes the next attempt wait, doubling from the first wait up
        # to the longest; forgotten after a window without one. The owner is mailed at
        # MAIL_AFTER failures, once per window. Browsers that logged in before never wait.
        "PBP_LOGIN_ACCOUNT_FREE": _int(env, "PBP_LOGIN_ACCOUNT_FREE", 5),
        "PBP_LOGIN_ACCOUNT_WAIT_SECONDS": _int(env, "PBP_LOGIN_ACCOUNT_WAIT_SECONDS", 1),
        "PBP_LOGIN_ACCOUNT_MAX_WAIT_SECONDS": _int(env, "PBP_LOGIN_ACCOUNT_MAX_WAIT_SECONDS", 900),
        "PBP_LOGIN_ACCOUNT_WINDOW_HOURS": _int(env, "PBP_LOGIN_ACCOUNT_WINDOW_HOURS", 24),
        "PBP_LOGIN_ACCOUNT_MAIL_AFTER": _int(env, "PBP_LOGIN_ACCOUNT_MAIL_AFTER", 10),
        # How many reverse proxies stand in front of pbp (0: none, trust no X-Forwarded-*).
        "PBP_TRUSTED_PROXIES": _int(env, "PBP_TRUSTED_PROXIES", 0),
        # Player content may not make readers' browsers fetch images from other sites.
        "PBP_BLOCK_REMOTE_IMAGES": _flag(env.get("PBP_BLOCK_REMOTE_IMAGES") or "on"),
    }

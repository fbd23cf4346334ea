"""SMTP with STARTTLS, implicit TLS (smtps) and login, against aiosmtpd with a throwaway
certificate: the encrypted paths are exercised, not just parsed from SMTP_URL."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest
from sqlmodel import Session

from pbp.services.mail.send import SmtpTransport, send_pending
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import NOW, outbox, post_event
from tests.smtpserver import SmtpServer

CREDENTIALS = ("pbp-sender", "s3cret:pass")


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """(server context, client context trusting only the throwaway certificate)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return server, ssl.create_default_context(cafile=str(cert))


@pytest.fixture
def queued(db_session):
    campaign = make_campaign(db_session, name="Encrypted Salon")
    make_characters(db_session, campaign, names=("Ada", "Bram"))
    post_event(db_session, campaign)
    db_session.commit()
    return campaign


@pytest.fixture
def sessions(connection):
    return lambda: Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


def deliver(sessions, server, **kw):
    transport = SmtpTransport(host=server.host, port=server.port, timeout=10, **kw)
    return send_pending(engine_or_sessionmaker=sessions, transport=transport, now=NOW)


def test_starttls_with_login(tls, queued, sessions, db_session):
    server_ctx, client_ctx = tls
    with SmtpServer(tls_context=server_ctx, require_starttls=True, credentials=CREDENTIALS) as srv:
        report = deliver(
            sessions,
            srv,
            security="starttls",
            username=CREDENTIALS[0],
            password=CREDENTIALS[1],
            ssl_context=client_ctx,
        )
        assert len(report.sent) == 2 and srv.message_count() == 2
        assert srv.connection_count() == 1


def test_wrong_password_keeps_everything_queued(tls, queued, sessions, db_session):
    server_ctx, client_ctx = tls
    with SmtpServer(tls_context=server_ctx, require_starttls=True, credentials=CREDENTIALS) as srv:
        report = deliver(
            sessions, srv, security="starttls", username="pbp-sender", password="wrong",
            ssl_context=client_ctx,
        )  # fmt: skip
        assert report.sent == [] and len(report.deferred) == 2 and "535" in report.error
        assert srv.message_count() == 0
    assert {r.status for r in outbox(db_session, queued)} == {"queued"}


def test_implicit_tls(tls, queued, sessions):
    server_ctx, client_ctx = tls
    with SmtpServer(implicit_tls=server_ctx) as srv:
        report = deliver(sessions, srv, security="tls", ssl_context=client_ctx)
        assert len(report.sent) == 2 and srv.message_count() == 2


def test_an_untrusted_certificate_is_refused(tls, queued, sessions):
    server_ctx, _client_ctx = tls
    with SmtpServer(tls_context=server_ctx, require_starttls=True) as srv:
        report = deliver(sessions, srv, security="starttls")  # the system's trust store
        assert report.sent == [] and "CERTIFICATE_VERIFY_FAILED" in report.error
        assert srv.message_count() == 0

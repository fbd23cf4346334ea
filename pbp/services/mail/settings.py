"""What mail needs from the configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parseaddr


@dataclass(frozen=True)
class MailSettings:
    """A plain value, so services stay Flask-free and the scheduler can build one from
    `app.config`."""

    base_url: str
    secret_key: str
    mail_from: str
    # PBP_REPLY_DOMAIN: where replies to notification mails go (pbp.services.mail.reply_tokens);
    # empty, mails carry no reply address.
    reply_domain: str = ""

    @classmethod
    def from_config(cls, config: Mapping) -> MailSettings:
        return cls(
            config["PBP_BASE_URL"].rstrip("/"),
            config["SECRET_KEY"],
            config["MAIL_FROM"],
            (config.get("PBP_REPLY_DOMAIN") or "").strip().lower(),
        )

    @property
    def domain(self) -> str:
        return parseaddr(self.mail_from)[1].rpartition("@")[2] or "pbp.invalid"

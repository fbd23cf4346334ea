"""Replies by email (issue #31 item 3): a reply to a notification mail becomes a note on
its entry, or a post in its forum scene, as the member the reply address was made for.

`pbp mail-in` (pbp.mail_in_cli) hands each received message here with its envelope. The
reply address (pbp.services.mail.reply_tokens) names one member and one place, and the
reply goes there through the very service functions the pages call
(`hosted_blog.post_note`, `posts.reply`), so every check of the page applies: the turn is
open, the stance rules, the length limits, and the caller's rate limit (`limit`, the
pages' per-account counter). Nothing in the message chooses where it goes: its subject,
In-Reply-To and other addresses are not read.

A reply is refused, and its sender told why in a mail with their text, when a check
fails, when the address was revoked, or when it came from another address than the
member's. That mail goes to the member's own address, never to the message's From (a
forged From would otherwise get mail from pbp). Automatic mail (bounces, vacation
replies) is dropped without an answer, so two robots cannot write to each other forever.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses, parseaddr

from mailparser_reply import EmailReplyParser
from sqlmodel import Session, col, select

from pbp import links
from pbp.errors import UserError
from pbp.markup import plain_text
from pbp.models import Campaign, Character, Entry, Membership, ReplyToken, User
from pbp.models.forum import Thread
from pbp.rules import noteworthy as nw
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail import reply_tokens
from pbp.services.mail.queue import Letter, queue
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog

# The reply's text as the refusal quotes it back, at most.
QUOTED_BACK = 20_000
AUTOMATIC_PRECEDENCE = {"bulk", "junk", "list", "auto_reply"}


@dataclass(frozen=True)
class Outcome:
    """What became of one message for one of its recipients."""

    status: str  # "posted", "refused" or "dropped"
    reason: str = ""


def reply_recipients(recipients: list[str], settings: MailSettings) -> list[str]:
    """The tokens of the recipients that are reply addresses (the SMTP server refuses the
    others at RCPT)."""
    tokens = (reply_tokens.token_of(address, settings) for address in recipients)
    return [token for token in tokens if token]


def header_recipients(message: EmailMessage) -> list[str]:
    """For a pipe with no envelope recipient given: where the MTA says it delivered it,
    else the To and Cc headers."""
    for name in ("Delivered-To", "X-Original-To"):
        found = message.get_all(name) or []
        if found:
            return [str(value) for value in found]
    pairs = getaddresses([str(v) for v in (message.get_all("To") or [])])
    pairs += getaddresses([str(v) for v in (message.get_all("Cc") or [])])
    return [address for _, address in pairs if address]


def parse(data: bytes) -> EmailMessage:
    message = message_from_bytes(data, policy=policy.default)
    assert isinstance(message, EmailMessage)  # policy.default makes EmailMessage objects
    return message


def automatic(message: EmailMessage, envelope_from: str | None) -> bool:
    """A bounce or an auto-reply (RFC 3834), never answered."""
    if envelope_from is not None and envelope_from.strip("<> ") == "":
        return True  # the null sender: a bounce
    submitted = str(message.get("Auto-Submitted", "no")).strip().lower()
    if submitted != "no":
        return True
    if str(message.get("Precedence", "")).strip().lower() in AUTOMATIC_PRECEDENCE:
        return True
    return any(message.get(name) for name in ("X-Autoreply", "X-Autorespond", "List-Id"))


def reply_text(message: EmailMessage) -> str:
    """What the member wrote: the plain-text part (or the HTML one as text), without the
    quoted mail and the signature (mail-parser-reply knows the quoting styles of the common
    mail clients, in many languages)."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    assert isinstance(part, EmailMessage)
    content = part.get_content()
    text = content if isinstance(content, str) else ""
    if part.get_content_subtype() == "html":
        text = plain_text(text)
    text = text.replace("\r\n", "\n")
    parsed = EmailReplyParser(languages=["en", "de", "fr", "es", "it", "nl"]).read(text)
    body = parsed.replies[0].body if parsed.replies else text
    return body.strip()


def receive(
    *,
    session: Session,
    settings: MailSettings,
    data: bytes,
    recipients: list[str],
    envelope_from: str | None,
    now: datetime,
    limit: Callable[[User], None] | None = None,
) -> list[Outcome]:
    """Post one received message at each reply address it was sent to, and commit (each
    reply, or its refusal mail, in its own transaction)."""
    message = parse(data)
    if automatic(message, envelope_from):
        return [Outcome("dropped", "automatic mail is not a reply")]
    tokens = reply_recipients(recipients, settings)
    if not tokens:
        return [Outcome("dropped", "not sent to a reply address")]
    return [
        _receive_one(session, settings, message, token, now, limit)
        for token in dict.fromkeys(tokens)
    ]


def _receive_one(
    session: Session,
    settings: MailSettings,
    message: EmailMessage,
    token: str,
    now: datetime,
    limit: Callable[[User], None] | None,
) -> Outcome:
    row = reply_tokens.find(session=session, token=token)
    if row is None:
        session.rollback()
        return Outcome("dropped", "no such reply address")
    membership = session.get(Membership, row.membership_id)
    user = session.get(User, membership.user_id) if membership else None
    campaign = session.get(Campaign, membership.campaign_id) if membership else None
    if membership is None or user is None or campaign is None:
        session.rollback()
        return Outcome("dropped", "no such member")
    text = reply_text(message)
    reply = _Reply(settings, row, membership, user, campaign, message, text)
    if row.revoked_at is not None:
        return reply.refuse(session, "This reply address was revoked: reply from the page.", now)
    _, sender = parseaddr(str(message.get("From", "")))
    if sender.strip().lower() != user.email.strip().lower():
        return reply.refuse(
            session,
            "The reply came from another address than your account's, so pbp did not post "
            "it. Reply from your account's address, or post on the page.",
            now,
        )
    try:
        if limit is not None:
            limit(user)
        reply.post(session, now)
        session.commit()
    except UserError as refused:
        session.rollback()
        return reply.refuse(session, str(refused), now)
    except BaseException:
        session.rollback()
        raise
    return Outcome("posted")


@dataclass(frozen=True)
class _Reply:
    settings: MailSettings
    row: ReplyToken
    membership: Membership
    user: User
    campaign: Campaign
    message: EmailMessage
    text: str

    def post(self, session: Session, now: datetime) -> None:
        if self.row.entry_id is not None:
            # The position the text takes is the one its checks are made for (a note that
            # reads "Support." is checked as a supporting note, as the form's choice is).
            stance = nw.read_stance(self.text).stance.value
            hosted_blog.post_note(
                session=session,
                actor=self.user,
                campaign=self.campaign,
                entry_id=self.row.entry_id,
                body=self.text,
                stance=stance if stance in ("support", "oppose") else "none",
                now=now,
                mail=self.settings,
            )
            return
        assert self.row.thread_id is not None  # the table's check: an entry or a thread
        posts.reply(
            session=session,
            campaign=self.campaign,
            thread_id=self.row.thread_id,
            author=self.user,
            draft=Draft(
                body=self.text,
                character_id=_own_character(session, self.campaign, self.user),
                client_token=self.client_token,
            ),
            mail=self.settings,
            now=now,
        )

    @property
    def client_token(self) -> str:
        """The same message delivered twice (an MTA's retry) posts once."""
        key = str(self.message.get("Message-ID", "")) or self.text
        return "mail-" + hashlib.sha256(key.encode()).hexdigest()[:40]

    def refuse(self, session: Session, reason: str, now: datetime) -> Outcome:
        session.rollback()
        subject = str(self.message.get("Subject", "")) or "your reply"
        letter = Letter(
            kind="reply_refused",
            template="reply_refused",
            dedupe_key=f"reply-refused:{self.user.id}:{self.client_token}",
            to=self.user,
            campaign=self.campaign,
            subject="Your reply was not posted",
            context={
                "subject": subject,
                "reason": reason,
                "text": self.text[:QUOTED_BACK],
                "page": self._page(session),
            },
        )
        queue(session=session, settings=self.settings, letter=letter, now=now)
        session.commit()
        return Outcome("refused", reason)

    def _page(self, session: Session) -> str | None:
        slug = self.campaign.slug
        if self.row.entry_id is not None:
            found = session.exec(
                select(Entry, Character)
                .join(Character, col(Character.id) == Entry.character_id)
                .where(Entry.id == self.row.entry_id)
            ).first()
            if found is None:
                return None
            entry, character = found
            return links.absolute(
                self.settings.base_url, links.entry(slug, character.slug, entry.id)
            )
        thread = session.get(Thread, self.row.thread_id)
        if thread is None:
            return None
        return links.absolute(self.settings.base_url, links.thread(slug, thread.id))


def _own_character(session: Session, campaign: Campaign, user: User) -> int | None:
    """The member's character, if they play exactly one here (a forum post as them)."""
    ids = session.exec(
        select(Character.id).where(
            Character.campaign_id == campaign.id, Character.user_id == user.id
        )
    ).all()
    return ids[0] if len(ids) == 1 else None

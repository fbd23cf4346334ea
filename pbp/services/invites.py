"""The referee's list of open invitations: each link to copy again, and a re-send.

An invite's link signs its id and creation time (pbp.services.accounts.logins.invite_token), so
the same link can be shown again at any time; re-sending mails that link once more and,
when the invitation has expired or is about to, gives it a fresh lease of life.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from pbp import links
from pbp.errors import Conflict, NotFound, UserError
from pbp.models import Campaign, Character, Invite, User
from pbp.services import audit_actions as lines
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from pbp.services.mail.settings import MailSettings

# A re-sent invitation that would expire sooner than this gets a full INVITE_TTL again.
FRESH_FOR_AT_LEAST = timedelta(days=2)


@dataclass(frozen=True)
class OpenInvite:
    invite: Invite
    url: str
    character: Character | None


def invite_url(*, invite: Invite, secret_key: str, base_url: str) -> str:
    token = accounts.invite_token(invite=invite, secret_key=secret_key)
    return links.absolute(base_url, links.invite(token))


def link_token(invitation: str) -> str:
    """The signed part of an invitation link (the whole link, or that part alone)."""
    text = invitation.strip().split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return text.rsplit("/invite/", 1)[-1] if "/invite/" in text else text


def accept_invite(
    *, session: Session, invitation: str, user: User, secret_key: str, now: datetime
) -> Campaign:
    """An existing account accepts an invitation (the API's way in: a bot has an account
    and a token, never a browser). The checks are the invitation page's own
    (`accounts.accept_invite` with a logged-in user): a used, expired or withdrawn link is
    refused, and so is an account already in the campaign."""
    token = link_token(invitation)
    details = accounts.check_invite(session=session, token=token, secret_key=secret_key, now=now)
    accounts.accept_invite(session=session, token=token, secret_key=secret_key, now=now, user=user)
    return details.campaign


def open_invite_links(
    *, session: Session, campaign: Campaign, secret_key: str, base_url: str, now: datetime
) -> list[OpenInvite]:
    """The open invitations (newest first) with their links, for the referee to copy."""
    invites = accounts.open_invites(session=session, campaign=campaign, now=now)
    names: dict[int | None, Character] = {
        c.id: c for c in campaigns.characters(session=session, campaign=campaign)
    }
    return [
        OpenInvite(
            invite=i,
            url=invite_url(invite=i, secret_key=secret_key, base_url=base_url),
            character=names.get(i.character_id),
        )
        for i in invites
    ]


def resend_invite(
    *,
    session: Session,
    campaign: Campaign,
    invite_id: int,
    actor: User,
    secret_key: str,
    base_url: str,
    mail_from: str,
    now: datetime,
    sender=None,
) -> OpenInvite:
    """Mail an invitation again (a second message in the outbox), under the same link.
    With `sender` (pbp.services.mail.send.Sender) it goes out as the caller commits.

    Refused for an invitation that was used, belongs to another campaign or names no
    address (there is nobody to mail: copy its link instead).
    """
    accounts._require_referee(session=session, campaign=campaign, user=actor)
    invite = session.get(Invite, invite_id)
    if invite is None or invite.campaign_id != campaign.id:
        raise NotFound(f"there is no such invitation in {campaign.name}")
    if invite.used_at is not None:
        raise Conflict(f"this invitation was already used on {invite.used_at:%Y-%m-%d}")
    if not invite.email:
        raise UserError(
            "this invitation names no email address, so there is nobody to mail: copy its "
            "link and send it yourself"
        )
    renewed = invite.expires_at - now < FRESH_FOR_AT_LEAST
    if renewed:
        invite.expires_at = now + accounts.INVITE_TTL
        session.add(invite)
    url = invite_url(invite=invite, secret_key=secret_key, base_url=base_url)
    settings = MailSettings(base_url.rstrip("/"), secret_key, mail_from)
    notifications.queue_invite(
        session=session,
        settings=settings,
        invite=invite,
        url=url,
        now=now,
        resend=now.isoformat(),
    )
    if sender is not None:
        sender.send_after_commit(session=session)
    resent = lines.InviteResent(invite.id, renewed=renewed)
    accounts._audit(session=session, now=now, line=resent, actor=actor, campaign_id=campaign.id)
    character = session.get(Character, invite.character_id) if invite.character_id else None
    return OpenInvite(invite=invite, url=url, character=character)

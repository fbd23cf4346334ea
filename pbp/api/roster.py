"""Getting people in: the referee's open invitations (their links, a re-send) and the
changes to a character on the roster (name, aliases, feed, dropped out, new player).

The same services as the referee's pages (pbp.services.invites and pbp.services.roster),
with the same checks.
"""

from __future__ import annotations

from typing import Any, cast

from flask import current_app

from pbp.api import schemas as s
from pbp.api.convert import campaign_out, character_out
from pbp.api.registry import Call, operation
from pbp.services import campaigns, invites, roster
from pbp.services.lookups import Page
from pbp.services.mail import send as mail_send
from pbp.services.noteworthy import hosted_blog

CHARACTER = "/campaigns/<slug>/characters/<character>"


def _links() -> dict:
    return {"secret_key": current_app.secret_key, "base_url": current_app.config["PBP_BASE_URL"]}


def _invite_out(row: invites.OpenInvite) -> s.InviteOut:
    i = row.invite
    return s.InviteOut(
        id=i.id,
        email=i.email,
        role=cast(Any, i.role),  # the CHECK constraint's values, which pydantic checks again
        character=row.character.slug if row.character else None,
        expires_at=i.expires_at,
        url=row.url,
    )


def _referee_and_character(call: Call, slug: str, character: str):
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    found = campaigns.character_by_slug(session=call.session, campaign=campaign, slug=character)
    return campaign, found


def _out(call: Call, character) -> s.CharacterOut:
    return character_out(character, hosted_blog.blog_of(session=call.session, character=character))


@operation(
    "GET",
    "/campaigns/<slug>/invites",
    tag="characters",
    access="referee",
    response=s.InviteOut,
    paginated=True,
)
def list_invites(call: Call, slug: str) -> Page:
    """The invitations not used yet and not expired, newest first, with their links."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    rows = invites.open_invite_links(
        session=call.session, campaign=campaign, now=call.now, **_links()
    )
    return Page([_invite_out(r) for r in rows], None)


@operation(
    "POST",
    "/campaigns/<slug>/invites/<int:invite_id>/resend",
    tag="characters",
    access="referee",
    response=s.InviteOut,
)
def resend_invite(call: Call, slug: str, invite_id: int) -> s.InviteOut:
    """Mail an invitation again, under the same link (renewed if it was about to expire).

    Refused for an invitation already used, or one that names no address (copy its link).
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    row = invites.resend_invite(
        session=call.session,
        campaign=campaign,
        invite_id=invite_id,
        actor=call.account,
        mail_from=current_app.config["MAIL_FROM"],
        now=call.now,
        sender=mail_send.sender_for_app(current_app),
        **_links(),
    )
    return _invite_out(row)


@operation(
    "POST", CHARACTER + "/name", tag="characters", access="referee", body=s.RenameIn,
    response=s.CharacterOut,
)  # fmt: skip
def rename_character(call: Call, slug: str, character: str) -> s.CharacterOut:
    """Rename a character; its slug (and so its page's address) stays."""
    campaign, found = _referee_and_character(call, slug, character)
    changed = roster.rename_character(
        session=call.session,
        campaign=campaign,
        character_id=found.id,
        name=call.body.name,
        actor=call.account,
        now=call.now,
    )
    return _out(call, changed)


@operation(
    "POST", CHARACTER + "/aliases", tag="characters", access="referee", body=s.AliasesIn,
    response=s.CharacterOut,
)  # fmt: skip
def set_aliases(call: Call, slug: str, character: str) -> s.CharacterOut:
    """Replace the other names a character goes by (target detection reads them)."""
    campaign, found = _referee_and_character(call, slug, character)
    changed = roster.set_aliases(
        session=call.session,
        campaign=campaign,
        character_id=found.id,
        aliases=call.body.aliases,
        actor=call.account,
        now=call.now,
    )
    return _out(call, changed)


@operation(
    "POST", CHARACTER + "/feed", tag="characters", access="referee", body=s.FeedIn,
    response=s.CharacterOut,
)  # fmt: skip
def set_feed(call: Call, slug: str, character: str) -> s.CharacterOut:
    """Point a character's blog at another feed, or back at pbp's built-in blog.

    The address is checked as when adding a character: http(s) only, and never an
    address inside a private network.
    """
    campaign, found = _referee_and_character(call, slug, character)
    roster.set_feed_url(
        session=call.session,
        campaign=campaign,
        character_id=found.id,
        feed_url=call.body.feed_url,
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
        actor=call.account,
        now=call.now,
    )
    return _out(call, found)


@operation(
    "POST", CHARACTER + "/drop", tag="characters", access="referee", body=s.DropIn,
    response=s.CharacterOut,
)  # fmt: skip
def drop_character(call: Call, slug: str, character: str) -> s.CharacterOut:
    """Rule that a character dropped out of the game: an outsider from now on (audited)."""
    campaign, found = _referee_and_character(call, slug, character)
    changed = roster.drop_character(
        session=call.session,
        campaign=campaign,
        character_id=found.id,
        reason=call.body.reason,
        actor=call.account,
        now=call.now,
    )
    return _out(call, changed)


@operation(
    "POST", CHARACTER + "/player", tag="characters", access="referee", body=s.HandOverIn,
    response=s.HandOverOut,
)  # fmt: skip
def hand_over_character(call: Call, slug: str, character: str) -> s.HandOverOut:
    """Give a character to a new player: a member of the campaign, or a new invitation.

    With `member_id` that player takes it now; without, the character loses its player and
    a new invitation for it is made (mailed when `email` is given).
    """
    campaign, found = _referee_and_character(call, slug, character)
    handed = roster.hand_over_character(
        session=call.session,
        campaign=campaign,
        character_id=found.id,
        actor=call.account,
        now=call.now,
        mail_from=current_app.config["MAIL_FROM"],
        member_id=call.body.member_id,
        email=call.body.email,
        **_links(),
    )
    invite = None
    if handed.invite is not None:
        invite = _invite_out(
            invites.OpenInvite(handed.invite.invite, handed.invite.url, handed.character)
        )
    return s.HandOverOut(character=_out(call, handed.character), invite=invite)


@operation(
    "POST",
    "/invites/accept",
    tag="campaigns",
    access="user",
    body=s.AcceptInviteIn,
    response=s.CampaignOut,
    status=201,
)
def accept_invite(call: Call) -> s.CampaignOut:
    """Accept an invitation with the account of this token: you join the campaign in the
    invitation's role (and with its character, if it names one). A new account is made on
    the invitation's page instead."""
    campaign = invites.accept_invite(
        session=call.session,
        invitation=call.body.invitation,
        user=call.account,
        secret_key=cast(str, current_app.secret_key),
        now=call.now,
    )
    member = campaigns.membership(session=call.session, campaign=campaign, user=call.account)
    return campaign_out(campaign, member.role if member else None)

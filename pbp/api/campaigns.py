"""Campaigns, characters and the roster; the referee's commenter map and "poll now"."""

from __future__ import annotations

from typing import Any, cast

from flask import current_app

from pbp.api import schemas as s
from pbp.api.convert import campaign_out, character_out, feed_health
from pbp.api.registry import Call, operation
from pbp.db import database
from pbp.services import campaigns, unread
from pbp.services import lookups as api_reads
from pbp.services import roster as roster_service
from pbp.services.forum import threads
from pbp.services.lookups import Page
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail import reply_tokens
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import (
    commenters,
    dashboard,
    history,
    hosted_blog,
    polling,
    referee,
)


def _role(call: Call, campaign) -> str | None:
    member = (
        campaigns.membership(session=call.session, campaign=campaign, user=call.user)
        if call.user
        else None
    )
    return member.role if member else None


@operation("GET", "/me", tag="account", access="user", response=s.MeOut)
def me(call: Call) -> s.MeOut:
    """Who the token belongs to, and what it may do."""
    token = call.token
    assert token is not None  # access="user": the dispatcher required a token
    return s.MeOut(
        id=call.account.id,
        display_name=call.account.display_name,
        token=s.TokenOut(
            name=token.name,
            scope=cast(Any, token.scope),  # the CHECK constraint's values
            created_at=token.created_at,
            last_used_at=token.last_used_at,
        ),
    )


@operation(
    "GET", "/campaigns", tag="campaigns", access="public", response=s.CampaignOut, paginated=True
)
def list_campaigns(call: Call) -> Page:
    """Every campaign, oldest first (the site's front page lists them all)."""
    page = api_reads.campaigns_page(session=call.session, after=call.after, limit=call.query.limit)
    roles = api_reads.roles_of(
        session=call.session, user=call.user, campaign_ids=[c.id for c in page.items]
    )
    news = _unread(call, [(c, roles[c.id]) for c in page.items if c.id in roles])
    return Page(
        [campaign_out(c, roles.get(c.id), news.get(c.id, 0)) for c in page.items],
        page.next_after,
    )


def _unread(call: Call, mine: list) -> dict[int, int]:
    """What is new to the caller in each of their campaigns (one query for the page)."""
    if call.user is None or not mine:
        return {}
    return unread.unread_counts(session=call.session, user=call.user, campaigns=mine)


@operation(
    "POST",
    "/campaigns",
    tag="campaigns",
    access="user",
    body=s.CampaignIn,
    response=s.CampaignOut,
    status=201,
)
def create_campaign(call: Call) -> s.CampaignOut:
    """Start a campaign; you referee it (anyone with an account may, as on the site)."""
    campaign = campaigns.create_campaign(
        session=call.session,
        referee=call.account,
        name=call.body.name,
        ruleset=call.body.ruleset,
        now=call.now,
    )
    return campaign_out(campaign, "referee")


@operation("GET", "/campaigns/<slug>", tag="campaigns", access="public", response=s.CampaignOut)
def get_campaign(call: Call, slug: str) -> s.CampaignOut:
    """One campaign, with your role in it and what is new to you there."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    role = _role(call, campaign)
    news = _unread(call, [(campaign, role)] if role else [])
    return campaign_out(campaign, role, news.get(campaign.id, 0))


@operation(
    "POST",
    "/campaigns/<slug>/read",
    tag="campaigns",
    access="member",
    body=s.ReadIn,
    response=s.ReadOut,
)
def mark_read(call: Call, slug: str) -> s.ReadOut:
    """Mark read one scene (`scene`), one entry's notes (`entry`), or, with an empty body,
    everything in the campaign you may read ("Mark all read"). Reading a page marks what
    it shows; reading through the API marks nothing until you call this."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    left = unread.mark_read(
        session=call.session,
        campaign=campaign,
        user=call.account,
        now=call.now,
        scene_id=call.body.scene,
        entry_id=call.body.entry,
    )
    return s.ReadOut(campaign=campaign.slug, unread=left)


# -- characters ----------------------------------------------------------------------------


@operation(
    "GET",
    "/campaigns/<slug>/characters",
    tag="characters",
    access="public",
    response=s.CharacterOut,
    paginated=True,
)
def list_characters(call: Call, slug: str) -> Page:
    """The campaign's characters and where each one blogs (their pages are public)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    page = api_reads.characters_page(
        session=call.session, campaign=campaign, after=call.after, limit=call.query.limit
    )
    return Page([character_out(c, b) for c, b in page.items], page.next_after)


@operation(
    "GET",
    "/campaigns/<slug>/characters/<character>",
    tag="characters",
    access="public",
    response=s.CharacterOut,
)
def get_character(call: Call, slug: str, character: str) -> s.CharacterOut:
    """One character, by slug."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    found = campaigns.character_by_slug(session=call.session, campaign=campaign, slug=character)
    return character_out(found, hosted_blog.blog_of(session=call.session, character=found))


@operation(
    "POST",
    "/campaigns/<slug>/characters",
    tag="characters",
    access="referee",
    body=s.CharacterIn,
    response=s.CharacterOut,
    status=201,
)
def add_character(call: Call, slug: str) -> s.CharacterOut:
    """Add a character to the roster, with a blog on pbp or the feed of their own blog.

    A feed address is checked as the roster form checks it: http(s) only, and never an
    address inside a private network.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    character = roster_service.add_character(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        name=call.body.name,
        feed_url=call.body.feed_url,
        aliases=call.body.aliases,
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
    )
    return character_out(character, hosted_blog.blog_of(session=call.session, character=character))


@operation(
    "GET", "/campaigns/<slug>/members", tag="campaigns", access="member", response=s.MembersOut
)
def list_members(call: Call, slug: str) -> s.MembersOut:
    """The campaign's members (user ids, names, roles) and the characters each plays, with
    ids and slugs: what a whisper or a card move names (any member)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    found = threads.member_list(session=call.session, campaign=campaign, user=call.user)
    return s.MembersOut(
        members=[
            s.MemberOut(
                id=m.member.user_id,
                display_name=m.member.name,
                role=cast(Any, m.member.role),
                characters=[
                    s.MemberCharacterOut(id=c.id, slug=c.slug, name=c.name) for c in m.characters
                ],
            )
            for m in found
        ]
    )


@operation(
    "GET",
    "/campaigns/<slug>/roster",
    tag="characters",
    access="referee",
    response=s.RosterRowOut,
    paginated=True,
)
def roster(call: Call, slug: str) -> Page:
    """The referee's roster: players, feed health and entries this turn."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    board = dashboard.dashboard(session=call.session, campaign=campaign)
    page = api_reads.paginate(
        board.roster, lambda r: r.character.id, after=call.after, limit=call.query.limit
    )
    rows = [
        s.RosterRowOut(
            character=character_out(r.character, r.blog),
            player=s.PlayerOut(id=r.player.id, display_name=r.player.display_name)
            if r.player
            else None,
            feed=feed_health(r.blog, r.delivery),
            entries_this_turn=r.entries_this_turn,
        )
        for r in page.items
    ]
    return Page(rows, page.next_after)


@operation(
    "POST",
    "/campaigns/<slug>/commenters",
    tag="characters",
    access="referee",
    body=s.CommenterIn,
    response=s.CommenterOut,
    status=201,
)
def map_commenter(call: Call, slug: str) -> s.CommenterOut:
    """Say which character a commenter on an external blog is; their waiting notes count."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    mapped = referee.map_commenter(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        character_id=call.body.character_id,
        kind=call.body.kind,
        value=call.body.value,
    )
    return s.CommenterOut(mapped_notes=mapped)


@operation(
    "PUT",
    "/campaigns/<slug>/me/commenter",
    tag="characters",
    access="player",
    body=s.CommenterIdentityIn,
    response=s.CommenterIdentityOut,
)
def declare_commenter(call: Call, slug: str) -> s.CommenterIdentityOut:
    """Say which profile addresses are yours when you comment on other players' blogs:
    only then do those notes count for your character (the referee sees them)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine, mapped = commenters.declare_mine(
        session=call.session, actor=call.user, campaign=campaign, uris=call.body.uris, now=call.now
    )
    uris = commenters.declared(session=call.session, character=mine)
    return s.CommenterIdentityOut(uris=uris, mapped_notes=mapped)


@operation(
    "POST",
    "/campaigns/<slug>/characters/<character>/poll",
    tag="characters",
    access="referee",
    response=s.PollOut,
)
def poll_now(call: Call, slug: str, character: str) -> s.PollOut:
    """Fetch this character's external blog now and store what it has (synchronous).

    The dashboard's button asks the scheduler to poll within a minute; a script wants the
    result before its next step, so this runs the same poller in the request.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    row = referee.external_blog(
        session=call.session, campaign=campaign, actor=call.user, character_slug=character
    )
    call.session.commit()  # the poller writes through its own connections
    outcome = polling.poll_blog(
        engine=database(current_app).engine,
        blog_id=row.id,
        fetcher=polling.app_fetcher(current_app),
        now=call.now,
        mail=MailSettings.from_config(current_app.config),
    )
    return s.PollOut(
        status=outcome.status,
        error=outcome.error,
        new_entries=outcome.report.new_entries,
        changed_entries=outcome.report.changed_entries,
        new_notes=outcome.report.new_notes,
    )


@operation(
    "GET",
    "/campaigns/<slug>/me/mail",
    tag="campaigns",
    access="member",
    response=s.MailPreferences,
)
def get_mail_preferences(call: Call, slug: str) -> s.MailPreferences:
    """Which kinds of email you get from this campaign."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    return s.MailPreferences(
        **mail_preferences.preferences(
            campaigns.require_member(session=call.session, campaign=campaign, user=call.user)
        )
    )


@operation(
    "DELETE",
    "/campaigns/<slug>/me/mail/replies",
    tag="campaigns",
    access="member",
    response=s.RepliesRevokedOut,
)
def revoke_reply_addresses(call: Call, slug: str) -> s.RepliesRevokedOut:
    """Stop every reply address of your mails from this campaign: replies to them are no
    longer posted. The next mails carry new ones."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    member = campaigns.require_member(session=call.session, campaign=campaign, user=call.user)
    count = reply_tokens.revoke_all(session=call.session, membership=member, now=call.now)
    return s.RepliesRevokedOut(revoked=count)


@operation(
    "PUT",
    "/campaigns/<slug>/me/mail",
    tag="campaigns",
    access="member",
    body=s.MailPreferences,
    response=s.MailPreferences,
)
def put_mail_preferences(call: Call, slug: str) -> s.MailPreferences:
    """Choose which kinds of email you get from this campaign (the preferences page)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    chosen = [key for key, on in call.body.model_dump().items() if on]
    saved = mail_preferences.save_preferences(
        session=call.session,
        membership=campaigns.require_member(
            session=call.session, campaign=campaign, user=call.user
        ),
        chosen=chosen,
        keys=call.body.model_dump().keys(),
    )
    return s.MailPreferences(**saved)


@operation(
    "GET", "/campaigns/<slug>/history", tag="campaigns", access="member", response=s.HistoryOut
)
def get_history(call: Call, slug: str) -> s.HistoryOut:
    """Standings and every turn's challenges and outcomes, as the history page shows them.

    For the campaign's members, as the page is.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_member(session=call.session, campaign=campaign, user=call.user)
    story = history.campaign_history(session=call.session, campaign=campaign)
    return s.HistoryOut(
        characters=[
            s.HistoryCharacterOut(
                id=t.person.id,
                name=t.person.name,
                slug=t.person.slug,
                status=t.person.status,
                made=t.made,
                received=t.received,
                won=t.won,
                lost=t.lost,
                outsider_from=t.outsider_from,
            )
            for t in story.totals
        ],
        turns=[
            s.HistoryTurnOut(
                number=line.number,
                status=line.status,
                opened_at=line.opened_at,
                resolved_at=line.resolved_at,
                standings=[
                    s.HistoryStandingOut(character_id=cid, **vars(standing))
                    for cid, standing in line.standings.items()
                ],
                bouts=[s.BoutOut(**vars(bout)) for bout in line.bouts],
                eliminated=list(line.eliminated),
                winner_id=line.winner_id,
                explanation=list(line.explanation),
            )
            for line in story.turns
        ],
    )

"""Turns and their events, the referee's close / rule / resolve, tallies and challenges.

The referee's steps are the dashboard's, through the same idempotent services
(pbp.services.noteworthy.turns): a retried close or resolve changes nothing twice, with or without
an Idempotency-Key.
"""

from __future__ import annotations

from flask import current_app

from pbp.api import schemas as s
from pbp.api.convert import challenge_out, ruling_out, tally_out, turn_out
from pbp.api.registry import Call, operation
from pbp.services import campaigns
from pbp.services import lookups as api_reads
from pbp.services.lookups import Page
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import play, referee, turns
from pbp.services.noteworthy import tally as tally_service

TURN = "/campaigns/<slug>/turns/<int:number>"


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _readable(call: Call, campaign) -> set[int] | None:
    """Whose tailored events the caller may read: the referee all (None), a player their
    own character's, anyone else none."""
    member = (
        campaigns.membership(session=call.session, campaign=campaign, user=call.user)
        if call.user
        else None
    )
    if member is not None and member.role == "referee":
        return None
    mine = play.character_of(session=call.session, campaign=campaign, user=call.user)
    return {mine.id} if mine else set()


@operation(
    "GET",
    "/campaigns/<slug>/turns",
    tag="turns",
    access="public",
    response=s.TurnOut,
    paginated=True,
)
def list_turns(call: Call, slug: str) -> Page:
    """The campaign's turns, first to last, with their events."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    page = api_reads.turns_page(
        session=call.session, campaign=campaign, after=call.after, limit=call.query.limit
    )
    events = api_reads.events_of(session=call.session, turns=page.items)
    readable = _readable(call, campaign)
    return Page([turn_out(t, events[t.id], readable) for t in page.items], page.next_after)


@operation("GET", TURN, tag="turns", access="public", response=s.TurnOut)
def get_turn(call: Call, slug: str, number: int) -> s.TurnOut:
    """One turn and its event (tailored texts only for whom they are meant)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    turn = api_reads.get_turn(session=call.session, campaign=campaign, number=number)
    events = api_reads.events_of(session=call.session, turns=[turn])[turn.id]
    return turn_out(turn, events, _readable(call, campaign))


@operation(
    "POST",
    "/campaigns/<slug>/turns",
    tag="turns",
    access="referee",
    body=s.EventIn,
    response=s.TurnOut,
    status=201,
)
def post_event(call: Call, slug: str) -> s.TurnOut:
    """Post the event that opens the next turn; every player's notification is queued.

    Refused while the current turn is not resolved. Without `deadline_hours` the turn closes
    on the campaign's cadence, as on the dashboard.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    body = call.body
    turn = referee.open_turn(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        text=body.text,
        tailored=turns.tailored_texts(body.tailored),
        deadline_hours=body.deadline_hours,
        expected_number=body.expected_number,
        mail=_mail(),
        sender=mail_send.sender_for_app(current_app),
    )
    events = api_reads.events_of(session=call.session, turns=[turn])[turn.id]
    return turn_out(turn, events, None)


@operation("POST", TURN + "/close", tag="turns", access="referee", response=s.TurnOut)
def close_turn(call: Call, slug: str, number: int) -> s.TurnOut:
    """Close the current turn: notes stop counting and the tally is frozen."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    turn = referee.close(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        number=number,
        mail=_mail(),
        sender=mail_send.sender_for_app(current_app),
    )
    events = api_reads.events_of(session=call.session, turns=[turn])[turn.id]
    return turn_out(turn, events, None)


@operation("POST", TURN + "/reopen", tag="turns", access="referee", response=s.TurnOut)
def reopen_turn(call: Call, slug: str, number: int) -> s.TurnOut:
    """Open a closed, unresolved turn again: notes count again until it closes."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    turn = referee.reopen(
        session=call.session, campaign=campaign, actor=call.user, now=call.now, number=number
    )
    events = api_reads.events_of(session=call.session, turns=[turn])[turn.id]
    return turn_out(turn, events, None)


@operation(
    "POST",
    TURN + "/resolve",
    tag="turns",
    access="referee",
    body=s.ResolveIn,
    response=s.TallyOut,
)
def resolve_turn(call: Call, slug: str, number: int) -> s.TallyOut:
    """Apply a closed turn's outcomes (losers become outsiders) and mail the results.

    Refused while an outcome needs a ruling; the answer is the final tally.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    turn, _result = referee.resolve(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        consequences={c.entry_id: c.text for c in call.body.consequences},
        number=number,
        mail=_mail(),
        sender=mail_send.sender_for_app(current_app),
    )
    record = tally_service.turn_record(session=call.session, campaign=campaign, turn=turn)
    return tally_out(record, _consequences(call, turn))


def _consequences(call: Call, turn) -> dict[int, str]:
    recorded = api_reads.recorded_challenges(session=call.session, turn=turn)
    return {entry_id: row.consequence for entry_id, row in recorded.items() if row.consequence}


@operation("GET", TURN + "/tally", tag="tallies", access="referee", response=s.TallyOut)
def get_tally(call: Call, slug: str, number: int) -> s.TallyOut:
    """The turn's tally with every reason and flag, as the dashboard shows it.

    A resolved turn shows the result stored when it was resolved; anything first seen
    since is listed in `arrived_after_resolution` and changes nothing. A final lists the
    votes per finalist, the ignored votes with their reasons, and the winner.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    turn = api_reads.get_turn(session=call.session, campaign=campaign, number=number)
    record = tally_service.turn_record(session=call.session, campaign=campaign, turn=turn)
    return tally_out(record, _consequences(call, turn))


@operation(
    "GET",
    TURN + "/challenges",
    tag="tallies",
    access="public",
    response=s.ChallengeOut,
    paginated=True,
)
def list_challenges(call: Call, slug: str, number: int) -> Page:
    """The turn's challenges: who, whom, the positions and the outcome so far.

    The entry pages show the same to everyone; the referee's flags are in the tally, and
    so are the referee's ruling notes until the turn is resolved.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    turn = api_reads.get_turn(session=call.session, campaign=campaign, number=number)
    challenges = tally_service.public_challenges(session=call.session, campaign=campaign, turn=turn)
    consequences = _consequences(call, turn)
    page = api_reads.paginate(
        challenges, lambda c: c["entry_id"], after=call.after, limit=call.query.limit
    )
    items = [challenge_out(c, consequences.get(c["entry_id"])) for c in page.items]
    return Page(items, page.next_after)


@operation(
    "POST",
    TURN + "/rulings",
    tag="tallies",
    access="referee",
    body=s.RulingIn,
    response=s.RulingOut,
    status=201,
)
def add_ruling(call: Call, slug: str, number: int) -> s.RulingOut:
    """Overrule a reading of the tally (target, stance, validity, tie-break...).

    The latest ruling on a subject wins; a resolved turn's rulings are final.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    body = call.body
    ruling = referee.rule(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        kind=body.kind,
        subject_id=body.subject_id,
        value=body.value,
        reason=body.reason,
        number=number,
        mail=_mail(),
    )
    return ruling_out(ruling)


@operation(
    "GET",
    TURN + "/rulings",
    tag="tallies",
    access="referee",
    response=s.RulingOut,
    paginated=True,
)
def list_rulings(call: Call, slug: str, number: int) -> Page:
    """The referee's rulings on the turn, oldest first (private during play)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    turn = api_reads.get_turn(session=call.session, campaign=campaign, number=number)
    page = api_reads.rulings_page(
        session=call.session, turn=turn, after=call.after, limit=call.query.limit
    )
    return Page([ruling_out(r) for r in page.items], page.next_after)

"""Keeping a game alive (issue #30): the referee's activity check and its settings, and a
player's hiatus. Twins of the pages in pbp.web.activity."""

from __future__ import annotations

from flask import current_app

from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.services import campaigns
from pbp.services.alive import activity, hiatus, plan
from pbp.services.mail.settings import MailSettings

CAMPAIGN = "/campaigns/<slug>"


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def settings_io(kept: plan.Plan) -> s.ActivitySettingsIO:
    return s.ActivitySettingsIO(
        nudge_hours=list(kept.nudge_hours),
        overdue_hours=kept.overdue_hours,
        rule_count=kept.rule_count,
        rule_days=kept.rule_days,
    )


@operation("GET", CAMPAIGN + "/activity", tag="referee", access="referee", response=s.ActivityOut)
def get_activity(call: Call, slug: str) -> s.ActivityOut:
    """The activity check: every character turn by turn (a forum game: posting window by
    window), its entries, notes and posts, whether it met the campaign's rule, and how many
    turns in a row it missed. The numbers of the history page (turns, standings,
    challenges made) are the history's own."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    seen = activity.check(session=call.session, campaign=campaign, actor=call.user, now=call.now)
    return s.ActivityOut(
        rule=seen.plan.rule_words,
        settings=settings_io(seen.plan),
        periods=[
            s.ActivityPeriodOut(
                key=p.key,
                number=p.number,
                label=p.label,
                start=p.start,
                end=p.end,
                finished=p.finished,
            )  # fmt: skip
            for p in seen.periods
        ],
        rows=[
            s.ActivityRowOut(
                character_id=r.character_id,
                name=r.name,
                status=r.status,
                player=r.player,
                missed_in_row=r.missed_in_row,
                away_until=r.away_until,
                cells=[
                    s.ActivityCellOut(period=p.key, **c.__dict__)
                    for p, c in zip(seen.periods, r.cells, strict=True)
                ],
            )  # fmt: skip
            for r in seen.rows
        ],
    )


@operation(
    "PUT", CAMPAIGN + "/activity/settings", tag="referee", access="referee",
    body=s.ActivitySettingsIO, response=s.ActivitySettingsIO,
)  # fmt: skip
def put_activity_settings(call: Call, slug: str) -> s.ActivitySettingsIO:
    """When nudges go (hours before the deadline, and after it) and the activity rule."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    body = call.body
    kept = plan.save(
        session=call.session, campaign=campaign, actor=call.user,
        nudge_hours=body.nudge_hours, overdue_hours=body.overdue_hours,
        rule_count=body.rule_count, rule_days=body.rule_days,
    )  # fmt: skip
    return settings_io(kept)


def _away_out(row) -> s.AwayOut:
    if row is None:
        return s.AwayOut(away=False, until=None)
    return s.AwayOut(away=True, until=row.until, note=row.note)


@operation("GET", CAMPAIGN + "/me/away", tag="characters", access="member", response=s.AwayOut)
def get_away(call: Call, slug: str) -> s.AwayOut:
    """Whether you are marked away in this campaign, and until when."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    return _away_out(
        hiatus.mine(session=call.session, campaign=campaign, actor=call.user, now=call.now)
    )


@operation(
    "PUT", CAMPAIGN + "/me/away", tag="characters", access="player", body=s.AwayIn,
    response=s.AwayOut,
)  # fmt: skip
def set_away(call: Call, slug: str) -> s.AwayOut:
    """Mark yourself away until a date, with a note to the referee (who is mailed). You get
    no nudges meanwhile; the activity check counts those turns as excused."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    row = hiatus.go_away(
        session=call.session, campaign=campaign, actor=call.user, until=call.body.until,
        note=call.body.note, now=call.now, mail=_mail(),
    )  # fmt: skip
    return _away_out(row)


@operation("DELETE", CAMPAIGN + "/me/away", tag="characters", access="player", response=s.AwayOut)
def end_away(call: Call, slug: str) -> s.AwayOut:
    """You are back before the date you gave (the referee is mailed)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    hiatus.come_back(
        session=call.session, campaign=campaign, actor=call.user, now=call.now, mail=_mail()
    )
    return _away_out(None)

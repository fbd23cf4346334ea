"""The demo's forum campaigns: a Noir scene with dice and a whisper, and a Sex & Violence
card table. Seeded through the same services the pages call, so what a newcomer sees is
what a real group gets: rolls made on the server with the campaign's seed, cards dealt
from it, and the seed's commitment published when play starts.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, col, select

from pbp.models import Campaign, User
from pbp.models.forum import Thread
from pbp.services import campaigns
from pbp.services.cards import tables as cards
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.forum.gm import start_campaign
from pbp.services.mail.settings import MailSettings

NOIR_NAME = "Rain on Water Street"
CARDS_NAME = "Water Street Blues"
GM_EMAIL = "gm@demo.invalid"
PLAYERS = [("Nils Ek", "nils@demo.invalid"), ("Vera Lind", "vera@demo.invalid")]
CARD_CHARACTERS = {
    "Nils Ek": {
        "name": "Nils Ek",
        "archetype": "warrior",
        "criminal_background": "Debt collector",
        "redeeming_quality": "Pays his own debts",
        "angle": "the muscle",
        "fields": ["C"],
    },
    "Vera Lind": {
        "name": "Vera Lind",
        "archetype": "survivor",
        "criminal_background": "Fence",
        "redeeming_quality": "Never lies to a friend",
        "angle": "knows everyone",
        "fields": ["D", "H"],
    },
}


def logins() -> list[tuple[str, str]]:
    people = [(GM_EMAIL, f"GM of {NOIR_NAME} and {CARDS_NAME}")]
    return people + [(email, f"plays {name}") for name, email in PLAYERS]


def seed(session: Session, *, make_user, mail: MailSettings, now: datetime) -> list[str]:
    """Both forum campaigns, unless they exist; returns their slugs. `make_user(email,
    name)` makes a demo account with the demo password."""
    slugs = []
    existing = {
        c.name: c.slug
        for c in session.exec(
            select(Campaign).where(col(Campaign.name).in_([NOIR_NAME, CARDS_NAME]))
        )
    }
    if len(existing) == 2:
        return [existing[NOIR_NAME], existing[CARDS_NAME]]
    gm = make_user(GM_EMAIL, "Greta the GM")
    players = [make_user(email, f"{name}'s player") for name, email in PLAYERS]
    slugs.append(_noir(session, gm, players, mail, now).slug)
    slugs.append(_card_table(session, gm, players, mail, now).slug)
    return slugs


def _campaign(
    session: Session, gm: User, players: list[User], name: str, ruleset: str, now: datetime
):
    campaign = campaigns.create_campaign(
        session=session, referee=gm, name=name, ruleset=ruleset, now=now
    )
    chars = [
        campaigns.add_character(session=session, campaign=campaign, name=name, user=user)
        for (name, _), user in zip(PLAYERS, players, strict=True)
    ]
    return campaign, chars


def _noir(session, gm, players, mail, now) -> Campaign:
    start = now - timedelta(hours=5)
    # Made before its start, as a real campaign is: its dice commitment precedes every roll.
    campaign, chars = _campaign(session, gm, players, NOIR_NAME, "noir", start)
    start_campaign(session=session, campaign=campaign, actor=gm, now=start)
    opening = posts.create_thread(
        session=session,
        campaign=campaign,
        author=gm,
        title="The Blue Lantern",
        draft=Draft(
            body="Rain hammers the awning of the Blue Lantern. Inside, a man in a wet coat "
            "is counting money he should not have.",
        ),
        mail=mail,
        now=start,
    )
    thread = session.get(Thread, opening.thread_id)
    steps = [
        (
            players[0],
            chars[0],
            "I lean over his table and ask whose money that is.\n\n"
            "/roll noir difficulty skill=12 mod=+5",
            "all",
            (),
        ),
        (
            players[1],
            chars[1],
            "I watch the door. Nobody leaves without me seeing.\n\n/roll 2d10 # keep watch",
            "all",
            (),
        ),
        (
            players[1],
            chars[1],
            "Vera slips the bartender a note: *call Inspector Holm*.",
            "whisper",
            (gm.id,),
        ),
        (
            gm,
            None,
            "He pushes back his chair. A knife is in his hand before anyone blinks.\n\n"
            "/roll noir damage 3T+2",
            "all",
            (),
        ),
    ]
    for minutes, (author, character, body, audience, recipients) in enumerate(steps, start=1):
        posts.create_post(
            session=session,
            campaign=campaign,
            thread=thread,
            author=author,
            draft=Draft(
                body=body,
                character_id=character.id if character else None,
                audience=audience,
                recipient_ids=recipients,
            ),
            mail=mail,
            now=start + timedelta(minutes=20 * minutes),
        )
    return campaign


def _card_table(session, gm, players, mail, now) -> Campaign:
    start = now - timedelta(hours=3)
    campaign, _ = _campaign(session, gm, players, CARDS_NAME, "sex-and-violence", start)
    start_campaign(session=session, campaign=campaign, actor=gm, now=start)
    opening = posts.create_thread(
        session=session,
        campaign=campaign,
        author=gm,
        title="The job at the docks",
        draft=Draft(body="A crate, a crane, and a night watchman who owes money."),
        mail=mail,
        now=start,
    )
    thread = session.get(Thread, opening.thread_id)
    cards.create_game(
        session=session,
        campaign=campaign,
        thread=thread,
        user=gm,
        settings={},
        mail=mail,
        now=start,
    )
    for minutes, ((name, _), user) in enumerate(zip(PLAYERS, players, strict=True), start=1):
        cards.play(
            session=session,
            campaign=campaign,
            thread=thread,
            user=user,
            action="create_character",
            params=CARD_CHARACTERS[name],
            mail=mail,
            now=start + timedelta(minutes=minutes),
        )
    return campaign

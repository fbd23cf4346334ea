"""`pbp demo`: a living Noteworthy campaign for newcomers, seeded once per database."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from flask import Flask
from sqlmodel import Session, select

from pbp.db import database
from pbp.models import Blog, Campaign, Character, Entry, Event, Note, Turn, utcnow
from pbp.services import campaigns

DEMO_NAME = "The Gilded Quill"
CAST = [
    ("Lady Vance", ["Vance"]),
    ("Doctor Ambrose Hale", ["Hale", "the Doctor"]),
    ("Mirela Sokol", ["Mirela"]),
    ("Captain Ostrander", ["Ostrander"]),
    ("Pip Calloway", ["Pip"]),
    ("Sister Agathe", ["Agathe"]),
]


def seed(app: Flask) -> str:
    """Create the demo campaign unless it exists; return its slug."""
    with Session(database(app).engine, expire_on_commit=False) as session:
        existing = session.exec(select(Campaign).where(Campaign.name == DEMO_NAME)).first()
        if existing:
            return existing.slug
        referee = campaigns.create_user(
            session=session, email="referee@demo.invalid", display_name="The Referee"
        )
        campaign = campaigns.create_campaign(session=session, referee=referee, name=DEMO_NAME)
        chars = [
            campaigns.add_character(session=session, campaign=campaign, name=n, aliases=a)
            for n, a in CAST
        ]
        _play(session, campaign, chars)
        session.commit()
        return campaign.slug


def _play(session: Session, campaign: Campaign, chars: list[Character]) -> None:
    start = utcnow() - timedelta(days=3)
    turn = Turn(campaign_id=campaign.id, number=1, opened_at=start, status="open")
    session.add(turn)
    session.flush()
    session.add(
        Event(
            turn_id=turn.id,
            text="A rival salon opens across the street, and someone leaks the guest list.",
        )
    )
    blogs = {b.character_id: b for b in session.exec(select(Blog))}
    for i, char in enumerate(chars):
        body = f"<p>{char.name} reflects on the rival salon.</p>"
        entry = Entry(
            blog_id=blogs[char.id].id,
            character_id=char.id,
            turn_id=turn.id,
            source_id=f"demo-{char.slug}-1",
            title=f"{char.name.split()[-1]}'s first impressions",
            body_html=body,
            mood_raw=["Curious", "Smug", "Wary", "Bold", "Amused", "Devout"][i],
            mood=["curious", "smug", "wary", "bold", "amused", "devout"][i],
            published_at=start + timedelta(hours=i + 1),
            content_hash=hashlib.sha256(body.encode()).hexdigest(),
        )
        session.add(entry)
        session.flush()
        other = chars[(i + 1) % len(chars)]
        session.add(
            Note(
                entry_id=entry.id,
                source_id=f"demo-note-{entry.id}",
                author_character_id=other.id,
                author_name=other.name,
                body_html=f"<p>{other.name} raises an eyebrow.</p>",
                published_at=start + timedelta(hours=i + 2),
            )
        )

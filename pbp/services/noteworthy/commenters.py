"""Who a commenter on an external blog is: verified identities only (issue #16).

A display name in a comment feed is whatever the commenter typed, so anyone (the blog's
owner, any visitor of an open blog) can sign a note "Bram". A note counts for a character
only through an identity the feed gives and the commenter cannot choose freely: their
profile address (a Blogger profile, a Dreamwidth or LiveJournal journal, which is the
platform username in address form). The referee maps such an address to a character,
or the character's player declares it on their own blog page; both are stored as
AuthorAlias rows of kind "uri" and hold for every later note.

A name the referee maps is different: the referee has read the notes waiting under that
name and vouches for those, so they are credited, but nothing is stored and a later note
under the name waits again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session, col, select

from pbp.errors import Conflict, UserError
from pbp.models import AuthorAlias, Campaign, Character, Entry, Note, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log
from pbp.services.noteworthy import play

KINDS = ("name", "uri", "email_hash")
#: Identities that hold for later notes; a name never does.
STANDING_KINDS = ("uri", "email_hash")
MAX_DECLARED = 5
MAX_ADDRESS = 2000


def identity_key(kind: str, value: str | None) -> str | None:
    """The form identities are compared in: for an address, no scheme, case or trailing
    slash (``http://Bram.example/`` is ``https://bram.example``); else trimmed, lower."""
    value = (value or "").strip().lower()
    if not value:
        return None
    if kind == "uri":
        value = value.split("://", 1)[-1].rstrip("/")
    return value or None


def check_address(value: str) -> str:
    """A profile address as a person types it: http(s), a host, not too long."""
    value = value.strip()
    if len(value) > MAX_ADDRESS:
        raise UserError(f"that address is too long (at most {MAX_ADDRESS:,} characters)")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"{value[:80]!r} is not a profile address: a profile address starts with "
            "https:// (for Dreamwidth or LiveJournal, your journal's address)"
        )
    return value


def standing_aliases(*, session: Session, campaign_id: int) -> dict[tuple[str, str], int]:
    """(kind, identity key) -> character id, for the identities that hold for later notes."""
    rows = session.exec(
        select(AuthorAlias.kind, AuthorAlias.value, AuthorAlias.character_id).where(
            AuthorAlias.campaign_id == campaign_id, col(AuthorAlias.kind).in_(STANDING_KINDS)
        )
    )
    found = {}
    for kind, value, character_id in rows:
        key = identity_key(kind, value)
        if key:
            found[(kind, key)] = character_id
    return found


def _owner_of(session: Session, campaign_id: int, kind: str, value: str) -> AuthorAlias | None:
    key = identity_key(kind, value)
    for alias in session.exec(
        select(AuthorAlias).where(AuthorAlias.campaign_id == campaign_id, AuthorAlias.kind == kind)
    ):
        if identity_key(kind, alias.value) == key:
            return alias
    return None


def _attach_waiting(
    session: Session, campaign_id: int, character_id: int, kind: str, value: str
) -> int:
    """Credit the campaign's waiting notes whose commenter has this identity."""
    # A column attribute: SQLModel types Note.author_name as its value (str | None).
    column: Any = {"name": Note.author_name, "uri": Note.author_uri}.get(
        kind, Note.author_email_hash
    )
    entries = (
        select(Entry.id)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(Character.campaign_id == campaign_id)
    )
    query = select(Note).where(
        col(Note.entry_id).in_(entries),
        col(Note.author_character_id).is_(None),
        column.is_not(None),
    )
    if kind == "name":
        # A name stands in only for commenters the feed gives no address for: one who
        # has an address is someone else signing with the same name.
        query = query.where(col(Note.author_uri).is_(None))
    notes = session.exec(query).all()
    key = identity_key(kind, value)
    mapped = 0
    for note in notes:
        if identity_key(kind, getattr(note, column.key)) == key:
            note.author_character_id = character_id
            session.add(note)
            mapped += 1
    session.flush()
    return mapped


def map_commenter(
    *, session: Session, campaign: Campaign, character: Character, kind: str, value: str
) -> int:
    """The referee says which character a commenter is; returns how many waiting notes
    now count. A profile address (or email hash) holds for later notes too; a name
    credits only the notes waiting now (see the module's docstring)."""
    if character.campaign_id != campaign.id:
        raise UserError("choose a character of this campaign")
    if kind not in KINDS:
        raise UserError("an alias is a name, a profile address or an email hash")
    value = (value or "").strip()
    if not value:
        raise UserError("say which name, address or email hash the commenter uses")
    if kind == "uri":
        value = check_address(value)
    if kind in STANDING_KINDS:
        owner = _owner_of(session, campaign.id, kind, value)
        if owner is not None:
            raise Conflict(f"that commenter is mapped already, to {_name(session, owner)}")
        session.add(
            AuthorAlias(
                campaign_id=campaign.id,
                character_id=character.id,
                kind=kind,
                value=value[:MAX_ADDRESS],
                source="referee",
            )
        )
    return _attach_waiting(session, campaign.id, character.id, kind, value)


def declare_mine(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    uris: list[str],
    character_id: int | None = None,
    now: datetime,
) -> tuple[Character, int]:
    """Issue #16: a note on an external blog counts only through a verified identity; a
    player says which profile addresses are theirs (see `declare`). Returns their character
    and how many waiting notes now count for it."""
    character = play.player_character(
        session=session, campaign=campaign, user=actor, character_id=character_id
    )
    return character, declare(session=session, character=character, uris=uris, now=now, actor=actor)


def declare(
    *, session: Session, character: Character, uris: list[str], now: datetime, actor: User | None
) -> int:
    """A player's own profile addresses as a commenter (replacing those they declared
    before); returns how many waiting notes now count for their character.

    An address the referee (or another player) already gave to another character is
    refused: the player asks the referee, who sees every declared address."""
    wanted: dict[str, str] = {}
    for raw in uris:
        if raw.strip():
            value = check_address(raw)
            wanted.setdefault(identity_key("uri", value) or value, value)
    if len(wanted) > MAX_DECLARED:
        raise UserError(f"give at most {MAX_DECLARED} profile addresses")
    campaign_id = character.campaign_id
    mine = {identity_key("uri", a.value): a for a in declared_aliases(session, character)}
    for value in wanted.values():
        owner = _owner_of(session, campaign_id, "uri", value)
        if owner is not None and owner.character_id != character.id:
            raise Conflict(
                f"{value} is already {_name(session, owner)}'s: if it is yours, ask the referee"
            )
    for key, alias in mine.items():
        if key not in wanted:
            session.delete(alias)
    session.flush()
    mapped = 0
    for key, value in wanted.items():
        if key in mine or _owner_of(session, campaign_id, "uri", value) is not None:
            continue  # declared before, or mapped to this character by the referee
        session.add(
            AuthorAlias(
                campaign_id=campaign_id,
                character_id=character.id,
                kind="uri",
                value=value,
                source="player",
            )
        )
        session.flush()
        mapped += _attach_waiting(session, campaign_id, character.id, "uri", value)
    declared = lines.CommenterDeclared(character.id, uris=list(wanted.values()))
    audit_log.record(session, line=declared, actor=actor, campaign_id=campaign_id, now=now)
    session.flush()
    return mapped


def declared_aliases(session: Session, character: Character) -> list[AuthorAlias]:
    return list(
        session.exec(
            select(AuthorAlias)
            .where(AuthorAlias.character_id == character.id, AuthorAlias.source == "player")
            .order_by(col(AuthorAlias.id))
        )
    )


def declared(*, session: Session, character: Character) -> list[str]:
    """The profile addresses the character's player declared."""
    return [a.value for a in declared_aliases(session, character)]


@dataclass(frozen=True)
class Identity:
    character: str
    kind: str
    value: str
    source: str  # "referee" | "player"


def identities(*, session: Session, campaign: Campaign) -> list[Identity]:
    """Every standing identity of the campaign, for the referee's dashboard."""
    rows = session.exec(
        select(AuthorAlias, Character.name)
        .join(Character, col(Character.id) == AuthorAlias.character_id)
        .where(AuthorAlias.campaign_id == campaign.id, col(AuthorAlias.kind).in_(STANDING_KINDS))
        .order_by(col(Character.name), col(AuthorAlias.id))
    )
    return [Identity(name, a.kind, a.value, a.source) for a, name in rows]


def _name(session: Session, alias: AuthorAlias) -> str:
    character = session.get(Character, alias.character_id)
    return character.name if character else "another character"

"""Character icons (issue #33 item 1): a character's player (or the referee) keeps up to
15 icons, each with a keyword and alt text, one the default; each entry, note or forum post
may name one of its character's icons, and shows the default otherwise.

An icon is the character's face, public like the character: its address
(`/icons/<id>-<digest>.png`) names the icon and its picture, nothing about where it is
used. Which icon a post shows is read only with the post, through the same visibility
rules (pbp.services.forum.visibility), so a whisper's icon is shown exactly where the
whisper is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp.errors import Forbidden, NotFound, UserError
from pbp.models import MAX_ICONS, Campaign, Character, CharacterIcon, User
from pbp.models.icons import MAX_ALT, MAX_KEYWORD
from pbp.services import campaigns
from pbp.services.icons.images import make_icon


@dataclass(frozen=True)
class IconView:
    """What a page, mail or export needs to show an icon."""

    id: int
    digest: str
    keyword: str
    alt: str
    is_default: bool = False

    @property
    def path(self) -> str:
        """The icon's address on this server (pbp.web.icons serves it)."""
        return f"/icons/{self.id}-{self.digest[:16]}.png"


def _view(icon: Any) -> IconView:
    """An icon row, or a row of `SHOWN_COLUMNS`, as a view."""
    return IconView(icon.id, icon.digest, icon.keyword, icon.alt, icon.is_default)


# What a page shows of an icon: everything but its picture, which only its own address
# serves (a page beside 50 entries would otherwise read every picture of their writers).
SHOWN_COLUMNS: tuple[Any, ...] = (
    CharacterIcon.id,
    CharacterIcon.character_id,
    CharacterIcon.digest,
    CharacterIcon.keyword,
    CharacterIcon.alt,
    CharacterIcon.is_default,
)


def _character(session: Session, campaign: Campaign, actor: User | None, slug: str) -> Character:
    """The character named, if the actor is its player or the referee."""
    character = campaigns.character_by_slug(session=session, campaign=campaign, slug=slug)
    _check_keeper(session, campaign, actor, character)
    return character


def _check_keeper(
    session: Session, campaign: Campaign, actor: User | None, character: Character
) -> None:
    if actor is not None and character.user_id == actor.id:
        return
    member = campaigns.membership(session=session, campaign=campaign, user=actor) if actor else None
    if member is None or member.role != "referee":
        raise Forbidden(f"only {character.name}'s player and the referee can change their icons")


def icons_of(*, session: Session, character: Character) -> list[IconView]:
    query = select(CharacterIcon).where(CharacterIcon.character_id == character.id)
    return [_view(i) for i in session.exec(query.order_by(col(CharacterIcon.id)))]


def choices(*, session: Session, characters: Iterable[Character]) -> list[tuple[str, IconView]]:
    """(character name, icon) for a form's icon picker: every icon of these characters."""
    named = {c.id: c.name for c in characters}
    if not named:
        return []
    rows = session.exec(
        select(CharacterIcon)
        .where(col(CharacterIcon.character_id).in_(sorted(named)))
        .order_by(col(CharacterIcon.character_id), col(CharacterIcon.id))
    )
    return [(named[i.character_id], _view(i)) for i in rows]


def character_icons(*, session: Session, campaign: Campaign, slug: str) -> list[IconView]:
    character = campaigns.character_by_slug(session=session, campaign=campaign, slug=slug)
    return icons_of(session=session, character=character)


def add_icon(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    character_slug: str,
    keyword: str,
    alt: str,
    data: bytes,
    now: datetime,
) -> IconView:
    """Upload an icon for a character; the first one becomes the default."""
    character = _character(session, campaign, actor, character_slug)
    keyword, alt = (keyword or "").strip(), (alt or "").strip()
    if not keyword or len(keyword) > MAX_KEYWORD:
        raise UserError(f"an icon's keyword is 1 to {MAX_KEYWORD} characters")
    if not alt or len(alt) > MAX_ALT:
        raise UserError(
            f"an icon's alt text (what it shows, for those who cannot see it) is 1 to "
            f"{MAX_ALT} characters"
        )
    kept = icons_of(session=session, character=character)
    if len(kept) >= MAX_ICONS:
        raise UserError(f"a character has at most {MAX_ICONS} icons: remove one first")
    if any(i.keyword.casefold() == keyword.casefold() for i in kept):
        raise UserError(f"{character.name} already has an icon called {keyword!r}")
    png, digest = make_icon(data)  # before anything is written: a refusal changes nothing
    icon = CharacterIcon(
        character_id=character.id, keyword=keyword, alt=alt, data=png, digest=digest,
        is_default=not kept, created_at=now,
    )  # fmt: skip
    session.add(icon)
    session.flush()
    return _view(icon)


def _own_icon(
    session: Session, campaign: Campaign, actor: User | None, icon_id: int
) -> tuple[CharacterIcon, Character]:
    icon = session.get(CharacterIcon, icon_id)
    character = session.get(Character, icon.character_id) if icon else None
    if icon is None or character is None or character.campaign_id != campaign.id:
        raise NotFound(f"there is no icon {icon_id} in {campaign.name}")
    _check_keeper(session, campaign, actor, character)
    return icon, character


def icon_view(*, session: Session, campaign: Campaign, icon_id: int) -> IconView:
    icon = session.get(CharacterIcon, icon_id)
    character = session.get(Character, icon.character_id) if icon else None
    if icon is None or character is None or character.campaign_id != campaign.id:
        raise NotFound(f"there is no icon {icon_id} in {campaign.name}")
    return _view(icon)


def remove_icon(*, session: Session, campaign: Campaign, actor: User | None, icon_id: int) -> None:
    """Remove an icon; what used it shows the default (the next icon if it was that)."""
    icon, character = _own_icon(session, campaign, actor, icon_id)
    was_default = icon.is_default
    session.delete(icon)
    session.flush()
    if was_default:
        rest = session.exec(
            select(CharacterIcon)
            .where(CharacterIcon.character_id == character.id)
            .order_by(col(CharacterIcon.id))
        ).first()
        if rest is not None:
            rest.is_default = True
            session.add(rest)
            session.flush()


def make_default(
    *, session: Session, campaign: Campaign, actor: User | None, icon_id: int
) -> IconView:
    icon, character = _own_icon(session, campaign, actor, icon_id)
    for other in session.exec(
        select(CharacterIcon).where(CharacterIcon.character_id == character.id)
    ):
        other.is_default = other.id == icon.id
        session.add(other)
    session.flush()
    return _view(icon)


def picked(*, session: Session, character_id: int | None, icon_id: int | None) -> int | None:
    """The icon a writer picked for a text by their character, checked to be one of that
    character's; None keeps the default."""
    if icon_id is None:
        return None
    icon = session.get(CharacterIcon, icon_id)
    if icon is None or character_id is None or icon.character_id != character_id:
        raise UserError("pick one of your character's own icons")
    return icon.id


def shown(
    *, session: Session, pairs: Iterable[tuple[int | None, int | None]]
) -> dict[tuple[int | None, int | None], IconView]:
    """The icon each (character id, picked icon id) shows: the picked one, else the
    character's default; pairs with neither are left out. One query for all of them."""
    pairs = set(pairs)
    characters = {c for c, _ in pairs if c is not None}
    if not characters:
        return {}
    rows = session.exec(
        select(*SHOWN_COLUMNS).where(col(CharacterIcon.character_id).in_(sorted(characters)))
    ).all()
    return shown_of(rows, pairs)


def shown_of(
    rows: Iterable[Any], pairs: Iterable[tuple[int | None, int | None]]
) -> dict[tuple[int | None, int | None], IconView]:
    """`shown`, from icons the caller read itself (every icon of the pairs' characters:
    rows of `SHOWN_COLUMNS` or `CharacterIcon` rows), so a page that reads its characters
    anyway reads their icons in the same query (pbp.services.noteworthy.planet)."""
    rows = list(rows)
    by_id = {i.id: i for i in rows}
    defaults = {i.character_id: i for i in rows if i.is_default}
    found = {}
    for character_id, icon_id in pairs:
        icon = by_id.get(icon_id) if icon_id is not None else None
        if icon is None or icon.character_id != character_id:
            icon = defaults.get(character_id) if character_id is not None else None
        if icon is not None:
            found[(character_id, icon_id)] = _view(icon)
    return found


def pictures(*, session: Session, icon_ids: Iterable[int]) -> dict[int, bytes]:
    """The PNG of each icon, by id (the archive carries the icons its pages show)."""
    ids = sorted(set(icon_ids))
    if not ids:
        return {}
    rows = session.exec(select(CharacterIcon).where(col(CharacterIcon.id).in_(ids)))
    return {i.id: i.data for i in rows}


def icon_image(*, session: Session, icon_id: int, digest: str) -> bytes:
    """The icon's PNG, if `digest` is (the start of) its picture's: an old address of a
    changed or removed icon is NotFound, never another picture."""
    icon = session.get(CharacterIcon, icon_id)
    if icon is None or not digest or not icon.digest.startswith(digest):
        raise NotFound("there is no such icon")
    return icon.data

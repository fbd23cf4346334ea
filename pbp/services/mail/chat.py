"""Issue #31 item 2: chat channels, the queueing side -- what a campaign's chat channel
is told, and when.

Only public events: a new entry on the planet, a turn opened (the general event text),
closed, or resolved (the results every player is mailed, which the turn page shows), and
a forum post for everyone, read as a visitor reads it (`views_of` with the anonymous
viewer: a hidden roll shows as hidden). Never a whisper, a GM-only post, a hidden roll's
label, a tailored event text, a hand or a ruling note: each function here is given only
public text, and `chat_send` checks again at delivery that an entry is still shown and a
post still public (an author may hide or delete it in between).

Each post is an outbox row ("chat") per webhook, keyed under the batch of the mails of
the same change (`event:<turn>:` ...), so it leaves with them; a text longer than the
platform takes is split (`split_text`), each part its own row, in order.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links
from pbp.models import Campaign, Character, ChatWebhook, Entry, OutboxMessage, Turn
from pbp.models.forum import Post, Thread
from pbp.services.mail.queue import queue_message
from pbp.services.mail.settings import MailSettings

# Characters per message each platform takes: Discord's hard limit; Slack truncates past
# 40,000 but advises 4,000; a Matrix event stops at 64 KiB.
LIMITS = {"discord": 2000, "slack": 4000, "matrix": 16000}
MAX_PARTS = 3  # a longer text is cut, and its last part links to the whole


def split_text(text: str, limit: int, link: str = "") -> list[str]:
    """`text` in parts of at most `limit` characters, cut at a paragraph, line or word
    where one is near; past MAX_PARTS the text is cut and ends with `link`."""
    text = text.strip()
    parts: list[str] = []
    while text:
        if len(text) <= limit:
            parts.append(text)
            break
        if len(parts) == MAX_PARTS - 1:
            tail = f"… {link}".rstrip() if link else "…"
            parts.append(text[: limit - len(tail) - 1].rstrip() + " " + tail)
            break
        cut = max(text.rfind(sep, limit // 2, limit) for sep in ("\n\n", "\n", " "))
        cut = cut if cut > 0 else limit
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return parts


def webhooks_for(
    session: Session, campaign_id: int, thread_id: int | None = None
) -> list[ChatWebhook]:
    """The campaign's own webhooks, and the scene's when `thread_id` is given."""
    where = sa.or_(
        col(ChatWebhook.thread_id).is_(None),
        col(ChatWebhook.thread_id) == (thread_id if thread_id is not None else -1),
    )
    return list(
        session.exec(
            select(ChatWebhook)
            .where(ChatWebhook.campaign_id == campaign_id, where)
            .order_by(col(ChatWebhook.id))
        )
    )


def queue_chat(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    kind: str,
    key: str,
    text: str,
    link: str,
    now: datetime,
    thread_id: int | None = None,
    check: dict | None = None,
) -> list[OutboxMessage]:
    """`text` (public, with `link` at its end) to every webhook of the campaign (and of
    the scene), one row per part. `key` starts with the batch of the change's mails.
    `check` ({"entry_id": n} or {"post_id": n}) is what delivery checks is still public."""
    rows = []
    for hook in webhooks_for(session, campaign.id, thread_id):
        full = f"{text.strip()}\n{link}" if link else text.strip()
        parts = split_text(full, LIMITS[hook.platform], link)
        for number, part in enumerate(parts, start=1):
            rows.append(
                queue_message(
                    session=session,
                    settings=settings,
                    kind=kind,
                    dedupe_key=f"{key}chat:{hook.id}:{number}",
                    recipient=f"chat:{hook.id}",
                    subject=f"[{campaign.name}] {kind.replace('_', ' ')}",
                    text=part,
                    campaign_id=campaign.id,
                    headers=dict(check or {}),
                    now=now,
                    channel="chat",
                    chat_webhook_id=hook.id,
                )
            )
    return rows


def _turn_link(settings: MailSettings, campaign: Campaign, turn: Turn) -> str:
    return links.absolute(settings.base_url, links.turn(campaign.slug, turn.number))


def turn_opened(
    *, session: Session, settings: MailSettings, turn: Turn, general: str | None, now: datetime
) -> list[OutboxMessage]:
    """The general event text only: a tailored text is its character's alone. Keyed in
    the event mails' batch (`notifications.event_batch_key`)."""
    campaign = session.get(Campaign, turn.campaign_id)
    assert campaign is not None  # the turn's foreign key
    text = f"Turn {turn.number} has begun in {campaign.name}."
    if general and general.strip():
        text += f"\n\n{general.strip()}"
    return queue_chat(
        session=session,
        settings=settings,
        campaign=campaign,
        kind="chat_turn_opened",
        key=f"event:{turn.id}:",
        text=text,
        link=_turn_link(settings, campaign, turn),
        now=now,
    )


def turn_closed(
    *, session: Session, settings: MailSettings, turn: Turn, now: datetime
) -> list[OutboxMessage]:
    campaign = session.get(Campaign, turn.campaign_id)
    assert campaign is not None  # the turn's foreign key
    return queue_chat(
        session=session,
        settings=settings,
        campaign=campaign,
        kind="chat_turn_closed",
        key=f"closed:{turn.id}:{turn.closed_at:%Y%m%dT%H%M%S}:",
        text=f"Turn {turn.number} of {campaign.name} is closed: notes no longer count.",
        link=_turn_link(settings, campaign, turn),
        now=now,
    )


def turn_resolved(
    *, session: Session, settings: MailSettings, turn: Turn, summary: str, now: datetime
) -> list[OutboxMessage]:
    """The results every player is mailed and the turn page shows, in the results mails'
    batch (`notifications.results_batch_key`)."""
    campaign = session.get(Campaign, turn.campaign_id)
    assert campaign is not None  # the turn's foreign key
    text = f"Turn {turn.number} of {campaign.name} is resolved."
    if summary.strip():
        text += f"\n\n{summary.strip()}"
    return queue_chat(
        session=session,
        settings=settings,
        campaign=campaign,
        kind="chat_turn_resolved",
        key=f"results:{turn.id}:",
        text=text,
        link=_turn_link(settings, campaign, turn),
        now=now,
    )


def entries_on_planet(
    *, session: Session, settings: MailSettings, entries: list[Entry], now: datetime
) -> list[OutboxMessage]:
    """New entries of the game (in a turn, not hidden by their author): title and link,
    once per entry however often it is stored again."""
    rows: list[OutboxMessage] = []
    for entry in entries:
        if entry.turn_id is None or entry.hidden_at is not None or entry.character_id is None:
            continue
        character = session.get(Character, entry.character_id)
        campaign = session.get(Campaign, character.campaign_id) if character else None
        if character is None or campaign is None:
            continue
        title = " ".join((entry.title or "").split()) or "an untitled entry"
        link = links.absolute(
            settings.base_url, links.entry(campaign.slug, character.slug, entry.id)
        )
        rows += queue_chat(
            session=session,
            settings=settings,
            campaign=campaign,
            kind="chat_entry",
            key=f"entry:{entry.id}:",
            text=f"{character.name} wrote on the planet of {campaign.name}: {title}",
            link=link,
            now=now,
            check={"entry_id": entry.id},
        )
    return rows


def forum_post(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    thread: Thread,
    post: Post,
    now: datetime,
) -> list[OutboxMessage]:
    """A post for everyone, as a visitor reads it; nothing for any other audience."""
    from pbp.services.forum.drafts import KINDS
    from pbp.services.forum.rolls import ANONYMOUS
    from pbp.services.forum.visibility import views_of

    if post.audience != "all" or post.deleted_at is not None:
        return []
    views = views_of(session, campaign, [post], ANONYMOUS)
    if not views:
        return []
    view = views[0]
    who = view.author + (f" as {view.character}" if view.character else "")
    lines = [f'{who} posted in "{thread.title}" ({KINDS[view.kind].lower()}):', ""]
    lines.append(view.body or "")
    lines += [f"Roll #{roll.number}: {roll.text}" for roll in view.rolls]
    link = links.absolute(settings.base_url, links.post(campaign.slug, thread.id, post.id))
    return queue_chat(
        session=session,
        settings=settings,
        campaign=campaign,
        kind="chat_forum_post",
        key=f"forum-post:{post.id}:",
        text="\n".join(lines),
        link=link,
        now=now,
        thread_id=thread.id,
        check={"post_id": post.id},
    )

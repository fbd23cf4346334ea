"""The data model (SQLModel tables), one module a feature; every table is importable from here.

Constraints keep bad data out at the database: unique keys where the game has one
(a character's slug in a campaign, a turn number, an entry's source id on its blog),
foreign keys everywhere, NOT NULL by default, and CHECKs on the small vocabularies.
Times are stored as naive UTC and come back timezone-aware (`UTCDateTime`), the same on
SQLite and PostgreSQL. Importing this package registers every table on SQLModel.metadata.
"""

from pbp.models.accounts import (
    LoginFailure,
    User,
)
from pbp.models.alive import (
    Hiatus,
    Nudge,
)
from pbp.models.api import (
    TOKEN_SCOPES,
    ApiToken,
    IdempotencyRecord,
)
from pbp.models.base import (
    BLOG_KINDS,
    CAMPAIGN_STATUSES,
    CHARACTER_STATUSES,
    EVENT_MODES,
    OUTBOX_STATUSES,
    ROLES,
    STANCES,
    TURN_STATUSES,
    UTCDateTime,
    utcnow,
)
from pbp.models.calendar import (
    CalendarFeed,
)
from pbp.models.campaigns import (
    AuditLog,
    Campaign,
    Character,
    Invite,
    Membership,
)
from pbp.models.cards import (
    CARD_RULESETS,
    CardEvent,
    CardGame,
)
from pbp.models.channels import (
    CHAT_PLATFORMS,
    OUTBOX_CHANNELS,
    ChatWebhook,
    PushSubscription,
)
from pbp.models.forum import (
    CLIENT_TOKEN_LENGTH,
    POST_AUDIENCES,
    POST_KINDS,
    ROLL_ID_LENGTH,
    ROLL_VISIBILITIES,
    CampaignSecret,
    CombatStep,
    Post,
    PostRecipient,
    PostRevision,
    Roll,
    Sheet,
    Thread,
    Watch,
)
from pbp.models.icons import (
    MAX_ICONS,
    CharacterIcon,
)
from pbp.models.mail import (
    OutboxMessage,
)
from pbp.models.mail_in import (
    REPLY_TARGETS,
    ReplyToken,
)
from pbp.models.noteworthy import (
    AuthorAlias,
    Blog,
    Challenge,
    Entry,
    EntryRevision,
    Event,
    Note,
    Ruling,
    Turn,
)
from pbp.models.saved_drafts import (
    DRAFT_FORMS,
    SavedDraft,
)
from pbp.models.search import (
    SEARCH_KINDS,
    SearchDoc,
)
from pbp.models.unread import (
    MARKER_KINDS,
    ReadMarker,
)
from pbp.models.webmention import (
    ReceivedMention,
    SentMention,
)
from pbp.models.websub import (
    WEBSUB_STATES,
    WebSubSubscription,
)

__all__ = [
    "CHAT_PLATFORMS",
    "ChatWebhook",
    "OUTBOX_CHANNELS",
    "PushSubscription",
    "ApiToken",
    "AuditLog",
    "AuthorAlias",
    "BLOG_KINDS",
    "Blog",
    "CAMPAIGN_STATUSES",
    "CARD_RULESETS",
    "CHARACTER_STATUSES",
    "CLIENT_TOKEN_LENGTH",
    "CalendarFeed",
    "DRAFT_FORMS",
    "Campaign",
    "CampaignSecret",
    "CombatStep",
    "CardEvent",
    "CardGame",
    "Challenge",
    "Character",
    "CharacterIcon",
    "EVENT_MODES",
    "Entry",
    "Hiatus",
    "EntryRevision",
    "Event",
    "IdempotencyRecord",
    "Invite",
    "LoginFailure",
    "MAX_ICONS",
    "Membership",
    "Note",
    "Nudge",
    "MARKER_KINDS",
    "OUTBOX_STATUSES",
    "OutboxMessage",
    "POST_AUDIENCES",
    "POST_KINDS",
    "Post",
    "PostRecipient",
    "PostRevision",
    "REPLY_TARGETS",
    "ROLES",
    "ReadMarker",
    "ROLL_ID_LENGTH",
    "ROLL_VISIBILITIES",
    "ReceivedMention",
    "ReplyToken",
    "Roll",
    "Ruling",
    "SEARCH_KINDS",
    "STANCES",
    "SavedDraft",
    "SearchDoc",
    "SentMention",
    "Sheet",
    "TOKEN_SCOPES",
    "TURN_STATUSES",
    "Thread",
    "Turn",
    "UTCDateTime",
    "User",
    "WEBSUB_STATES",
    "Watch",
    "WebSubSubscription",
    "utcnow",
]

from pbp import content_version  # noqa: E402,F401  (versions for cached pages)  # isort: skip

"""Character icons (issue #33 item 1): the icon page's twins."""

from __future__ import annotations

import base64
import binascii

from pbp.api.problems import InvalidRequest
from pbp.api.registry import Call, operation
from pbp.api.schemas import Out
from pbp.inputs.icons import IconUploadIn
from pbp.services import campaigns, icons
from pbp.services.lookups import Page

ICONS = "/campaigns/<slug>/characters/<character>/icons"
ICON = "/campaigns/<slug>/icons/<int:icon_id>"


class IconOut(Out):
    id: int
    keyword: str
    alt: str
    is_default: bool
    url: str


def _out(icon: icons.IconView) -> IconOut:
    return IconOut(
        id=icon.id, keyword=icon.keyword, alt=icon.alt, is_default=icon.is_default, url=icon.path
    )


@operation("GET", ICONS, tag="characters", access="public", response=IconOut, paginated=True)
def list_icons(call: Call, slug: str, character: str) -> Page:
    """A character's icons (at most 15: one page), the default marked."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    kept = icons.character_icons(session=call.session, campaign=campaign, slug=character)
    return Page([_out(i) for i in kept], None)


@operation(
    "POST", ICONS, tag="characters", access="member", body=IconUploadIn, response=IconOut,
    status=201,
)  # fmt: skip
def upload_icon(call: Call, slug: str, character: str) -> IconOut:
    """Add an icon to your character: `data` is the picture in base64 (PNG, JPEG, WebP or a
    GIF's first frame, at most 1 MiB); pbp redraws it at 100 x 100 without its metadata."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    try:
        data = base64.b64decode(call.body.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        said = "the picture is not base64"
        raise InvalidRequest(said, [{"location": "body.data", "message": said}]) from exc
    icon = icons.add_icon(
        session=call.session, campaign=campaign, actor=call.account, character_slug=character,
        keyword=call.body.keyword, alt=call.body.alt, data=data, now=call.now,
    )  # fmt: skip
    return _out(icon)


@operation("POST", ICON + "/default", tag="characters", access="member", response=IconOut)
def default_icon(call: Call, slug: str, icon_id: int) -> IconOut:
    """Make this icon its character's default."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    return _out(
        icons.make_default(session=call.session, campaign=campaign, actor=call.account,
                           icon_id=icon_id)
    )  # fmt: skip


@operation("DELETE", ICON, tag="characters", access="member", response=IconOut)
def remove_icon(call: Call, slug: str, icon_id: int) -> IconOut:
    """Remove an icon; what used it shows the default. Answers the icon as it was."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    gone = icons.icon_view(session=call.session, campaign=campaign, icon_id=icon_id)
    icons.remove_icon(session=call.session, campaign=campaign, actor=call.account, icon_id=icon_id)
    return _out(gone)

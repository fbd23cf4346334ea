"""A character icon's upload (issue #33 item 1): the page's multipart form and the API's
JSON body (the picture in base64) are read with this one model."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from pbp.inputs import Body, Text
from pbp.models.icons import MAX_ALT, MAX_KEYWORD


class IconIn(Body):
    names: ClassVar[dict[str, str]] = {"keyword": "the icon's keyword", "alt": "its alt text"}
    needed: ClassVar[dict[str, str]] = {
        "keyword": "give the icon a keyword (to pick it by)",
        "alt": "say what the icon shows (its alt text, for those who cannot see it)",
    }
    keyword: Text = Field(min_length=1, max_length=MAX_KEYWORD, description="Its name.")
    alt: Text = Field(min_length=1, max_length=MAX_ALT, description="What it shows.")


class IconUploadIn(IconIn):
    data: str = Field(
        min_length=1,
        max_length=800_000,
        description="The picture (PNG, JPEG, WebP or GIF), base64; the request's 1 MiB "
        "limit holds the encoded text.",
    )

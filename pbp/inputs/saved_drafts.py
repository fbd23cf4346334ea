"""A saved draft of a write form (pbp.services.saved_drafts): the form's fields as typed."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from pbp.inputs import Body, Text


class DraftIn(Body):
    fields: dict[str, Text | list[Text]] = Field(
        max_length=20,
        description=(
            "The form's fields by name, as its page sends them: entry: title, mood, target, "
            "body; note: body, fate, stance; post: body, kind, audience, recipients (a list "
            "of user ids), character_id, roll_visibility; scene: title and a post's fields. "
            "A form with no text typed deletes the draft."
        ),
    )

    names: ClassVar[dict[str, str]] = {"fields": "a draft's fields"}

"""The referee dashboard's form fields that are not one value each: how a page's text
becomes what the services take (the API sends these as JSON already)."""

from __future__ import annotations

from collections.abc import Mapping


def ruling_value(raw: str) -> int | bool | str | None:
    """A ruling's value as the form sends it: character ids as digits, "true"/"false" as
    booleans, empty as none, anything else (support, invalid...) as text."""
    raw = raw.strip()
    if raw.lstrip("-").isdigit():
        return int(raw)
    return {"": None, "true": True, "false": False}.get(raw.lower(), raw)


def consequences(form: Mapping[str, str]) -> dict[int, str]:
    """The resolve form's `consequence_<entry id>` texts, by entry id."""
    found = {}
    for key, value in form.items():
        entry_id = key.removeprefix("consequence_")
        if key.startswith("consequence_") and entry_id.isdigit():
            found[int(entry_id)] = value
    return found


def custom_moods(text: str) -> dict[str, str]:
    """One "Mood = action" per line; lines without "=" are not moods and are left out."""
    moods = {}
    for line in text.splitlines():
        if "=" in line:
            mood, action = (part.strip() for part in line.split("=", 1))
            moods[mood] = action
    return moods

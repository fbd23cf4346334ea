"""What a person may send, validated in one place: the API's request bodies, which the
HTML forms are parsed with too (pbp.web.forms.parsed), so a text refused on one is refused
on the other with the same words.

Plain pydantic models: they describe input only. Limits mirror the database columns, so
a value accepted always fits the row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from pbp import rules
from pbp.rules import noteworthy as nw

MAX_ID = 2**31 - 1  # PostgreSQL `integer`

if TYPE_CHECKING:  # built from the rules' vocabularies at run time, which mypy cannot read
    Ruleset = str
    RulingKind = str
else:
    Ruleset = Literal[tuple(rules.RULESETS)]
    RulingKind = Literal[tuple(kind.value for kind in nw.RulingKind)]


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("text cannot contain NUL characters")
    return value


Text = Annotated[str, AfterValidator(_no_nul)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]


class Body(BaseModel):
    """A request body: unknown fields are refused, so a misspelt field is not ignored.

    `names` says what a field holds in a sentence ("an entry's title"), `needed` what to
    say when a required text is empty, and `wrong` what to say of a value outside the
    field's choices: a form shows these instead of pydantic's words.
    """

    model_config = ConfigDict(extra="forbid")

    names: ClassVar[dict[str, str]] = {}
    needed: ClassVar[dict[str, str]] = {}
    wrong: ClassVar[dict[str, str]] = {}

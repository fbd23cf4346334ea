"""The forum's writes: posts, threads, watching, sheets and card tables
(pbp.services.forum, pbp.services.cards)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from pbp import limits
from pbp.inputs import Body, Id, Text


class PostIn(Body):
    """A forum post in Markdown; each `/roll` line is rolled once, when it is posted."""

    body: Text = Field(min_length=1, max_length=limits.POST_BODY)
    kind: Literal["ic", "ooc"] = Field(default="ic", description="In or out of character.")
    audience: Literal["all", "gm", "whisper"] = "all"
    recipient_ids: list[Id] = Field(
        default_factory=list, max_length=50, description="User ids a whisper goes to."
    )
    recipient_characters: list[Annotated[Text, Field(min_length=1, max_length=80)]] = Field(
        default_factory=list,
        max_length=50,
        description="Characters (by slug) a whisper goes to: to the players who play them.",
    )
    character_id: Id | None = Field(default=None, description="Post as this character.")
    roll_visibility: Literal["public", "gm", "blind"] = "public"
    icon_id: Id | None = Field(
        default=None, description="One of the character's icons; left out: its default."
    )

    names: ClassVar[dict[str, str]] = {"body": "a post"}
    needed: ClassVar[dict[str, str]] = {"body": "write something to post"}


class ThreadIn(Body):
    title: Text = Field(min_length=1, max_length=200)
    post: PostIn


class PostEdit(Body):
    body: Text = Field(
        max_length=limits.POST_BODY, description="The new text (rolls never change)."
    )

    names: ClassVar[dict[str, str]] = {"body": "a post"}


class WatchIn(Body):
    on: bool = Field(description="Watch the thread (new posts are emailed to you), or stop.")


class SheetIn(Body):
    """A character sheet: the ruleset checks it (ONE: stats, skills, hit points lost)."""

    data: dict[str, Any] = Field(
        description="The sheet, as the sheet page's JSON holds it: its shape is the schema "
        "OneSheet for ONE, NoirSheet for Noir, FreeSheet for the other rulesets (the "
        "ruleset checks it and answers 422 with the reason)."
    )


class OwnCharacterIn(Body):
    """A player's own character and its sheet (issue #27 item 3): the ruleset checks the
    sheet as on the sheet page (ONE: "stats" and "skills"; Noir: whole-number "skills")."""

    name: Text = Field(min_length=1, max_length=120)
    sheet: dict[str, Any] = Field(
        default_factory=dict, description="The character's sheet, as the sheet page's JSON."
    )

    names: ClassVar[dict[str, str]] = {"name": "the character's name"}
    needed: ClassVar[dict[str, str]] = {"name": "give your character a name"}


class CharacterForIn(Body):
    """A character the GM makes and hands to a player who has none."""

    player_id: Id = Field(description="The player (their user id) who will play it.")
    name: Text = Field(min_length=1, max_length=120)
    sheet: dict[str, Any] | None = Field(
        default=None, description="Its sheet; leave out for the player to fill it in."
    )

    names: ClassVar[dict[str, str]] = {"name": "the character's name", "player_id": "the player"}
    needed: ClassVar[dict[str, str]] = {"name": "give the character a name"}


class TableIn(Body):
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="The ruleset's table settings, e.g. gm_sees_hands (Sex & Violence) or "
        "conclusion_tie_break (One Can Have Her).",
    )


class MoveIn(Body):
    action: Text = Field(min_length=1, max_length=40, description="The move, as the page names it.")
    params: dict[str, Any] = Field(default_factory=dict, description="The move's choices.")
    version: int | None = Field(
        default=None,
        ge=0,
        description="The table's version you saw: a move on a table changed since is refused.",
    )

    names: ClassVar[dict[str, str]] = {"action": "the move", "params": "the move's choices"}
    wrong: ClassVar[dict[str, str]] = {
        "version": "the form is damaged (its version is not a number): reload the page"
    }


# -- ONE combat in a scene (issue #33 item 4: pbp.services.forum.combat) -------------------

Act = Literal["move", "attack", "defend", "ready"]


class CombatStartIn(Body):
    characters: list[Text] = Field(
        min_length=2, max_length=20, description="The fighters: the characters' slugs."
    )

    names: ClassVar[dict[str, str]] = {"characters": "the fighters"}
    needed: ClassVar[dict[str, str]] = {"characters": "choose at least two fighters"}


class CombatPlanIn(Body):
    fighter: Text = Field(min_length=1, max_length=200, description="The fighter's name.")
    plans: list[list[Act]] = Field(
        min_length=1,
        max_length=3,
        description="One list of acts per action this segment: a move, or one or two of "
        "attack, defend and ready.",
    )


class CombatAttackIn(Body):
    attacker: Text = Field(min_length=1, max_length=200)
    defender: Text = Field(min_length=1, max_length=200)
    skill: Text = Field(min_length=1, max_length=100, description="The attacker's skill.")
    attack_roll: Text = Field(min_length=1, max_length=40, description="A `/roll one` roll id.")
    defence_skill: Text | None = Field(default=None, max_length=100)
    defence_roll: Text | None = Field(default=None, max_length=40)
    damage_roll: Text | None = Field(default=None, max_length=40, description="A `/roll Nd6`.")
    missile: bool = False

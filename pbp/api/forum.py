"""Forum campaigns: threads, posts and their rolls, as the forum pages show and take them.

What a caller may read is decided by pbp.services.forum.visibility (`visible_posts`) and
pbp.services.forum.rolls (`roll_view`) for the caller's viewer, exactly as on the pages;
writes go through the same services.
"""

from __future__ import annotations

from typing import Any, cast

from flask import current_app

from pbp.api import game_schemas
from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.errors import NotFound
from pbp.services import campaigns, unread
from pbp.services import lookups as api_reads
from pbp.services.cards import tables as cards
from pbp.services.forum import characters, combat, gm, posts, rolls, sheets, threads, visibility
from pbp.services.forum.drafts import Draft
from pbp.services.forum.visibility import PostView
from pbp.services.lookups import Page
from pbp.services.mail.settings import MailSettings

FORUM = "/campaigns/<slug>/forum"


def _forum(call: Call, slug: str):
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    visibility.require_forum(campaign)
    return campaign, visibility.viewer_for(session=call.session, campaign=campaign, user=call.user)


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def roll_out(view: rolls.RollView) -> s.RollOut:
    return s.RollOut(
        id=view.id,
        number=view.number,
        # The rows' CHECK constraints hold these to the schema's values (pydantic checks again).
        visibility=cast(Any, view.visibility),
        state=cast(Any, view.state),
        created_at=view.created_at,
        command=view.as_typed,
        resolved=view.command,
        note=view.note,
        result=cast(Any, view.result),  # validated into the typed result here
        text=view.text,
    )


def post_out(view: PostView) -> s.PostOut:
    return s.PostOut(
        id=view.id,
        thread_id=view.thread_id,
        author=view.author,
        character=view.character,
        kind=view.kind,
        audience=view.audience,
        recipients=list(view.recipients),
        body=view.body,
        html=view.html,
        deleted=view.deleted,
        created_at=view.created_at,
        edited_at=view.edited_at,
        rolls=[roll_out(r) for r in view.rolls],
        can_edit=view.can_edit,
        icon=s.IconRefOut(
            id=view.icon.id, keyword=view.icon.keyword, alt=view.icon.alt, url=view.icon.path
        )
        if view.icon
        else None,
    )


def _draft(body: s.PostIn) -> Draft:
    return Draft(
        body=body.body,
        kind=body.kind,
        audience=body.audience,
        recipient_ids=tuple(body.recipient_ids),
        recipient_characters=tuple(body.recipient_characters),
        character_id=body.character_id,
        roll_visibility=body.roll_visibility,
        icon_id=body.icon_id,
    )


def _view_of(call: Call, campaign, viewer, post) -> s.PostOut:
    _, views = threads.get_thread(
        session=call.session, campaign=campaign, thread_id=post.thread_id, viewer=viewer
    )
    return post_out(next(v for v in views if v.id == post.id))


@operation("GET", FORUM, tag="forum", access="public", response=s.ForumStateOut)
def forum_state(call: Call, slug: str) -> s.ForumStateOut:
    """Whether play runs, and the dice seed's commitment (and the seed, after the end)."""
    campaign, _ = _forum(call, slug)
    return _state(call, campaign)


def _state(call: Call, campaign) -> s.ForumStateOut:
    secret = rolls.get_secret(session=call.session, campaign=campaign)
    return s.ForumStateOut(
        status=campaign.status,
        commitment=secret.commitment if secret else None,
        seed=rolls.revealed_seed(secret),
    )


@operation(
    "GET",
    FORUM + "/threads",
    tag="forum",
    access="public",
    response=s.ThreadOut,
    paginated=True,
)
def list_threads(call: Call, slug: str) -> Page:
    """The threads with a post you may read, by id; counts and times are of those posts."""
    campaign, viewer = _forum(call, slug)
    summaries = threads.list_threads(session=call.session, campaign=campaign, viewer=viewer)
    page = api_reads.paginate(summaries, lambda t: t.id, after=call.after, limit=call.query.limit)
    news = None
    if call.user is not None and viewer.role is not None:
        news = unread.scene_counts(
            session=call.session, user=call.user, campaign=campaign, role=viewer.role
        )
    items = [
        s.ThreadOut(
            id=t.id,
            title=t.title,
            posts=t.posts,
            last_post_at=t.last_post_at,
            unread=None if news is None else news.get(t.id, 0),
        )
        for t in page.items
    ]
    return Page(items, page.next_after)


@operation(
    "POST",
    FORUM + "/threads",
    tag="forum",
    access="member",
    body=s.ThreadIn,
    response=s.PostOut,
    status=201,
)
def create_thread(call: Call, slug: str) -> s.PostOut:
    """Open a thread (a scene) with its first post; its /roll lines are rolled now."""
    campaign, viewer = _forum(call, slug)
    post = posts.create_thread(
        session=call.session,
        campaign=campaign,
        author=call.account,
        title=call.body.title,
        draft=_draft(call.body.post),
        mail=_mail(),
        now=call.now,
    )
    return _view_of(call, campaign, viewer, post)


@operation(
    "GET",
    FORUM + "/threads/<int:thread_id>/posts",
    tag="forum",
    access="public",
    response=s.PostOut,
    paginated=True,
)
def list_posts(call: Call, slug: str, thread_id: int) -> Page:
    """A thread's posts you may read, oldest first, each with its rolls as you may see them."""
    campaign, viewer = _forum(call, slug)
    _, views = threads.get_thread(
        session=call.session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    page = api_reads.paginate(views, lambda v: v.id, after=call.after, limit=call.query.limit)
    return Page([post_out(v) for v in page.items], page.next_after)


@operation(
    "POST",
    FORUM + "/threads/<int:thread_id>/posts",
    tag="forum",
    access="member",
    body=s.PostIn,
    response=s.PostOut,
    status=201,
)
def reply(call: Call, slug: str, thread_id: int) -> s.PostOut:
    """Post in a thread; its /roll lines are rolled now, with the campaign's seed."""
    campaign, viewer = _forum(call, slug)
    post = posts.reply(
        session=call.session,
        campaign=campaign,
        thread_id=thread_id,
        author=call.account,
        draft=_draft(call.body),
        mail=_mail(),
        now=call.now,
    )
    return _view_of(call, campaign, viewer, post)


@operation(
    "PUT",
    FORUM + "/posts/<int:post_id>",
    tag="forum",
    access="member",
    body=s.PostEdit,
    response=s.PostOut,
)
def edit_post(call: Call, slug: str, post_id: int) -> s.PostOut:
    """Change your post's text (the GM: any post); the earlier versions are kept."""
    campaign, viewer = _forum(call, slug)
    post = posts.change_post(
        session=call.session,
        campaign=campaign,
        post_id=post_id,
        editor=call.account,
        body=call.body.body,
        now=call.now,
        mail=_mail(),
    )
    return _view_of(call, campaign, viewer, post)


@operation(
    "DELETE",
    FORUM + "/posts/<int:post_id>",
    tag="forum",
    access="member",
    response=s.PostOut,
)
def delete_post(call: Call, slug: str, post_id: int) -> s.PostOut:
    """Delete your post (the GM: any post): its text is hidden, its rolls stay."""
    campaign, viewer = _forum(call, slug)
    post = posts.remove_post(
        session=call.session, campaign=campaign, post_id=post_id, actor=call.account, now=call.now
    )
    return _view_of(call, campaign, viewer, post)


@operation(
    "GET",
    FORUM + "/rolls/<roll_id>",
    tag="forum",
    access="public",
    response=s.RollPageOut,
)
def get_roll(call: Call, slug: str, roll_id: str) -> s.RollPageOut:
    """A roll's permanent record, and its post if you may read that."""
    campaign, viewer = _forum(call, slug)
    view, post = visibility.get_roll_view(
        session=call.session, campaign=campaign, roll_id=roll_id, viewer=viewer
    )
    return s.RollPageOut(roll=roll_out(view), post=post_out(post) if post else None)


@operation("POST", FORUM + "/start", tag="forum", access="referee", response=s.ForumStateOut)
def start(call: Call, slug: str) -> s.ForumStateOut:
    """Open play and publish the dice seed's commitment (the GM)."""
    campaign, _ = _forum(call, slug)
    gm.start_campaign(session=call.session, campaign=campaign, actor=call.account, now=call.now)
    return _state(call, campaign)


@operation("POST", FORUM + "/end", tag="forum", access="referee", response=s.ForumStateOut)
def end(call: Call, slug: str) -> s.ForumStateOut:
    """End play and reveal the seed, so anyone can check every roll (the GM)."""
    campaign, _ = _forum(call, slug)
    gm.end_campaign(session=call.session, campaign=campaign, actor=call.account, now=call.now)
    return _state(call, campaign)


@operation(
    "PUT",
    FORUM + "/threads/<int:thread_id>/watch",
    tag="forum",
    access="member",
    body=s.WatchIn,
    response=s.WatchOut,
)
def watch(call: Call, slug: str, thread_id: int) -> s.WatchOut:
    """Watch a thread (its new posts you may read are emailed to you), or stop."""
    campaign, _ = _forum(call, slug)
    thread = threads.watch_thread(
        session=call.session,
        campaign=campaign,
        thread_id=thread_id,
        user=call.account,
        on=call.body.on,
        now=call.now,
    )
    return s.WatchOut(thread_id=thread.id, watching=call.body.on)


SHEET = "/campaigns/<slug>/sheets/<character>"


def _sheet_out(character, sheet) -> s.SheetOut:
    ruleset = sheet.ruleset if sheet else ""
    return s.SheetOut(
        character=character.slug,
        ruleset=ruleset,
        data=game_schemas.sheet_model(ruleset).model_validate(dict(sheet.data) if sheet else {}),
        updated_at=sheet.updated_at if sheet else None,
    )


@operation("GET", SHEET, tag="forum", access="public", response=s.SheetOut)
def get_sheet(call: Call, slug: str, character: str) -> s.SheetOut:
    """A character's sheet (empty before anyone fills it in)."""
    campaign, _ = _forum(call, slug)
    found = campaigns.character_by_slug(session=call.session, campaign=campaign, slug=character)
    return _sheet_out(found, sheets.get_sheet(session=call.session, character=found))


@operation("PUT", SHEET, tag="forum", access="member", body=s.SheetIn, response=s.SheetOut)
def edit_sheet(call: Call, slug: str, character: str) -> s.SheetOut:
    """Change a character's sheet (its player or the GM); the ruleset checks it, and the
    change is kept in the audit log."""
    campaign, _ = _forum(call, slug)
    found, sheet = sheets.edit_sheet(
        session=call.session,
        campaign=campaign,
        character_slug=character,
        data=call.body.data,
        actor=call.account,
        now=call.now,
    )
    return _sheet_out(found, sheet)


def _made_out(made: characters.Made) -> s.ForumCharacterOut:
    c = made.character
    return s.ForumCharacterOut(
        id=c.id,
        slug=c.slug,
        name=c.name,
        player_id=c.user_id,
        sheet=_sheet_out(c, made.sheet) if made.sheet else None,
    )


@operation(
    "POST",
    FORUM + "/characters",
    tag="forum",
    access="player",
    body=s.OwnCharacterIn,
    response=s.ForumCharacterOut,
    status=201,
)
def make_character(call: Call, slug: str) -> s.ForumCharacterOut:
    """Make your own character and its sheet (a player with no character yet); the ruleset
    checks the sheet, as a sheet change is checked."""
    campaign, _ = _forum(call, slug)
    made = characters.make_own_character(
        session=call.session,
        campaign=campaign,
        actor=call.account,
        name=call.body.name,
        sheet=call.body.sheet,
        now=call.now,
    )
    return _made_out(made)


@operation(
    "POST",
    FORUM + "/characters/for-player",
    tag="forum",
    access="referee",
    body=s.CharacterForIn,
    response=s.ForumCharacterOut,
    status=201,
)
def make_character_for(call: Call, slug: str) -> s.ForumCharacterOut:
    """Make a character and hand it to a player who has none (the GM)."""
    campaign, _ = _forum(call, slug)
    made = characters.make_character_for(
        session=call.session,
        campaign=campaign,
        actor=call.account,
        player_id=call.body.player_id,
        name=call.body.name,
        sheet=call.body.sheet,
        now=call.now,
        secret_key=cast(str, current_app.secret_key),
        base_url=current_app.config["PBP_BASE_URL"],
    )
    return _made_out(made)


TABLE = FORUM + "/threads/<int:thread_id>/cards"


def _table_out(call: Call, campaign, viewer, thread_id: int) -> s.TableOut:
    _, t = cards.table_of(
        session=call.session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    if t is None:
        raise NotFound("this thread has no card table")
    return s.TableOut(
        game=t.game_id,
        thread_id=t.thread_id,
        ruleset=t.ruleset,
        version=t.version,
        me=t.me,
        view=cast(Any, t.view),  # the engine's view, validated into its typed model here
        log=[
            s.CardLogOut(
                seq=e.seq, actor=e.actor, action=e.action, events=cast(Any, list(e.events))
            )
            for e in t.log
        ],
    )


@operation("GET", TABLE, tag="forum", access="public", response=s.TableOut)
def get_table(call: Call, slug: str, thread_id: int) -> s.TableOut:
    """A thread's card table as you may see it."""
    campaign, viewer = _forum(call, slug)
    return _table_out(call, campaign, viewer, thread_id)


@operation(
    "POST", TABLE, tag="forum", access="referee", body=s.TableIn, response=s.TableOut, status=201
)
def open_table(call: Call, slug: str, thread_id: int) -> s.TableOut:
    """Open a card table in a thread (the GM), with the ruleset's settings."""
    campaign, viewer = _forum(call, slug)
    cards.open_table(
        session=call.session,
        campaign=campaign,
        thread_id=thread_id,
        user=call.account,
        settings=call.body.settings,
        mail=_mail(),
        now=call.now,
    )
    return _table_out(call, campaign, viewer, thread_id)


@operation(
    "POST", TABLE + "/moves", tag="forum", access="member", body=s.CardMove, response=s.TableOut
)
def move(call: Call, slug: str, thread_id: int) -> s.TableOut:
    """Make one move at the table; the engine refuses what the rules do not allow, and
    nothing is saved then. Send the `version` you saw, so a stale move is refused.

    Each action has its own parameters (the schemas named ...Move); a player is named by
    their user id (an integer; "2" is still read as 2), the GM's side by "gm"."""
    campaign, viewer = _forum(call, slug)
    body: s.CardMove = call.body
    cards.move(
        session=call.session,
        campaign=campaign,
        thread_id=thread_id,
        user=call.account,
        action=body.action,
        params=body.params(),
        expected_version=body.version,
        mail=_mail(),
        now=call.now,
    )
    return _table_out(call, campaign, viewer, thread_id)


# -- ONE combat in a scene (issue #33 item 4) ----------------------------------------------

COMBAT = FORUM + "/threads/<int:thread_id>/combat"


def _combat_out(call: Call, campaign, thread_id: int) -> s.CombatOut:
    viewer = visibility.viewer_for(session=call.session, campaign=campaign, user=call.user)
    thread, found = combat.combat_of(
        session=call.session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    if found is None:
        raise NotFound("this scene has had no combat")
    return s.CombatOut(
        thread_id=thread.id,
        under_way=not found.ended,
        turn=found.state.turn,
        segment=found.state.segment,
        waiting_for=found.waiting_for,
        fighters=[
            s.CombatFighterOut(
                name=f.name,
                character_id=f.character_id,
                speed=f.speed,
                hit_points=f.hit_points,
                max_hit_points=f.max_hit_points,
                condition=f.condition,
                actions=f.actions,
                plans=list(f.plans),
            )
            for f in found.fighters
        ],
        steps=[
            s.CombatStepOut(
                number=step.number,
                kind=step.kind,
                text=step.text,
                detail=step.detail,
                created_at=step.created_at,
            )
            for step in found.steps
        ],
    )


@operation("GET", COMBAT, tag="forum", access="public", response=s.CombatOut)
def get_combat(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """A scene's ONE combat: the segment, who acts in it, the fighters and the history."""
    campaign, _ = _forum(call, slug)
    return _combat_out(call, campaign, thread_id)


@operation(
    "POST", COMBAT, tag="forum", access="referee", body=s.CombatStartIn,
    response=s.CombatOut, status=201,
)  # fmt: skip
def start_combat(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """Start a ONE combat in a scene from the characters' sheets (the GM)."""
    campaign, _ = _forum(call, slug)
    combat.start_combat(
        session=call.session, campaign=campaign, thread_id=thread_id, actor=call.account,
        character_slugs=call.body.characters, now=call.now,
    )  # fmt: skip
    return _combat_out(call, campaign, thread_id)


@operation(
    "POST", COMBAT + "/plans", tag="forum", access="member", body=s.CombatPlanIn,
    response=s.CombatOut, status=201,
)  # fmt: skip
def declare_plan(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """Declare what a fighter does this segment (their player or the GM)."""
    campaign, _ = _forum(call, slug)
    combat.declare_plan(
        session=call.session, campaign=campaign, thread_id=thread_id, actor=call.account,
        fighter=call.body.fighter, plans=call.body.plans, now=call.now,
    )  # fmt: skip
    return _combat_out(call, campaign, thread_id)


@operation(
    "POST", COMBAT + "/attacks", tag="forum", access="referee", body=s.CombatAttackIn,
    response=s.CombatOut, status=201,
)  # fmt: skip
def resolve_attack(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """Resolve an attack with `/roll one` rolls of the scene's posts (the GM); the damage
    goes onto the defender's sheet."""
    campaign, _ = _forum(call, slug)
    b = call.body
    combat.resolve_attack(
        session=call.session, campaign=campaign, thread_id=thread_id, actor=call.account,
        attacker=b.attacker, defender=b.defender, skill=b.skill, attack_roll=b.attack_roll,
        defence_skill=b.defence_skill, defence_roll=b.defence_roll, damage_roll=b.damage_roll,
        missile=b.missile, now=call.now,
    )  # fmt: skip
    return _combat_out(call, campaign, thread_id)


@operation("POST", COMBAT + "/next", tag="forum", access="referee", response=s.CombatOut)
def next_segment(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """Move the combat on one segment (the GM)."""
    campaign, _ = _forum(call, slug)
    combat.next_segment(
        session=call.session, campaign=campaign, thread_id=thread_id, actor=call.account,
        now=call.now,
    )  # fmt: skip
    return _combat_out(call, campaign, thread_id)


@operation("POST", COMBAT + "/end", tag="forum", access="referee", response=s.CombatOut)
def end_combat(call: Call, slug: str, thread_id: int) -> s.CombatOut:
    """End the scene's combat (the GM)."""
    campaign, _ = _forum(call, slug)
    combat.end_combat(
        session=call.session, campaign=campaign, thread_id=thread_id, actor=call.account,
        now=call.now,
    )  # fmt: skip
    return _combat_out(call, campaign, thread_id)

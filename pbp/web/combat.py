"""ONE combat in a scene (issue #33 item 4): the GM's and the players' forms on the thread
page (templates/forum/_combat.html). Each calls one step of pbp.services.forum.combat, the
same one as its API twin (pbp.api.forum)."""

from __future__ import annotations

from flask import Blueprint, request, url_for

from pbp.inputs.forum import CombatAttackIn, CombatPlanIn, CombatStartIn
from pbp.services.forum import combat
from pbp.web.actions import Act, action
from pbp.web.forms import parsed

bp = Blueprint("combat", __name__)

RULE = "/c/<slug>/forum/t/<int:thread_id>/combat"
PAGE = "forum.thread"


def _back(act: Act, slug: str, thread_id: int, message: str):
    url = url_for("forum.thread", slug=slug, thread_id=thread_id) + "#combat"
    return act.done(url, message)


@action(bp, RULE + "/start", role="referee", creates=True, page=PAGE)
def start(act: Act, slug: str, thread_id: int):
    body = parsed(CombatStartIn, {"characters": request.form.getlist("characters")})
    step = combat.start_combat(
        session=act.session, campaign=act.campaign, thread_id=thread_id, actor=act.account,
        character_slugs=body.characters, now=act.now,
    )  # fmt: skip
    return _back(act, slug, thread_id, step.text)


@action(bp, RULE + "/plans", role="member", creates=True, page=PAGE)
def declare(act: Act, slug: str, thread_id: int):
    plans = [act.text(name).split() for name in ("plan", "plan2") if act.text(name).strip()]
    body = parsed(CombatPlanIn, {"fighter": act.text("fighter"), "plans": plans})
    step = combat.declare_plan(
        session=act.session, campaign=act.campaign, thread_id=thread_id, actor=act.account,
        fighter=body.fighter, plans=body.plans, now=act.now,
    )  # fmt: skip
    return _back(act, slug, thread_id, step.text)


@action(bp, RULE + "/attacks", role="referee", creates=True, page=PAGE)
def attack(act: Act, slug: str, thread_id: int):
    fields = ("attacker", "defender", "skill", "attack_roll", "defence_skill", "defence_roll")
    typed: dict[str, object] = {name: act.text(name).strip() for name in (*fields, "damage_roll")}
    typed["missile"] = act.text("missile") == "on"
    b = parsed(CombatAttackIn, typed)
    step = combat.resolve_attack(
        session=act.session, campaign=act.campaign, thread_id=thread_id, actor=act.account,
        attacker=b.attacker, defender=b.defender, skill=b.skill, attack_roll=b.attack_roll,
        defence_skill=b.defence_skill, defence_roll=b.defence_roll, damage_roll=b.damage_roll,
        missile=b.missile, now=act.now,
    )  # fmt: skip
    return _back(act, slug, thread_id, step.text)


@action(bp, RULE + "/next", role="referee", creates=True, page=PAGE)
def next_segment(act: Act, slug: str, thread_id: int):
    step = combat.next_segment(
        session=act.session, campaign=act.campaign, thread_id=thread_id, actor=act.account,
        now=act.now,
    )  # fmt: skip
    return _back(act, slug, thread_id, step.text)


@action(bp, RULE + "/end", role="referee", creates=True, page=PAGE)
def end(act: Act, slug: str, thread_id: int):
    step = combat.end_combat(
        session=act.session, campaign=act.campaign, thread_id=thread_id, actor=act.account,
        now=act.now,
    )  # fmt: skip
    return _back(act, slug, thread_id, step.text)

"""Issue #33 item 4: ONE's worked example, Larry and Curly, played through a scene.

“We can now run an example combat. We’ve got two characters, Larry and Curly, who are just
dying to go at it.” The players post their `/roll one` rolls (scripted to the example's
faces, as in tests/rules/one/test_combat.py), the GM attaches them to the segment, and the
service finds the targets, the hits and the damage, writes the wounds onto the sheets, and
keeps the history, which replays to the same states and appears in the export.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from pbp.errors import Conflict, Forbidden, UserError
from pbp.rules.one.combat import CombatError
from pbp.services.forum import combat, sheets
from pbp.services.forum import export as forum_export
from pbp.services.forum.rolls import ANONYMOUS
from tests.services.forum.scene_combat import BLADE, make_scene
from tests.services.forum.tables import T0


def _lost(scene, character) -> int:
    scene.session.refresh(sheets.get_sheet(session=scene.session, character=character))
    return sheets.get_sheet(session=scene.session, character=character).data["hit_points_lost"]


def test_larry_and_curly_fight_through_the_scene(db_session, monkeypatch):
    scene = make_scene(db_session, monkeypatch)
    at = {"minutes": 0}

    def step(fn, **kw):
        at["minutes"] += 1
        return fn(
            session=db_session, campaign=scene.campaign, thread_id=scene.thread.id,
            now=T0 + timedelta(hours=1, minutes=at["minutes"]), **kw,
        )  # fmt: skip

    def gm(fn, **kw):
        return step(fn, actor=scene.gm, **kw)

    def declare(who, *plans):
        user = scene.larry_user if who == "Larry" else scene.curly_user
        return step(combat.declare_plan, actor=user, fighter=who, plans=plans)

    def attack(attacker, defender, roll, damage=None, defence=None):
        return gm(
            combat.resolve_attack, attacker=attacker, defender=defender, skill="Short Blade",
            attack_roll=roll, damage_roll=damage, defence_roll=defence,
            defence_skill="Short Blade" if defence else None,
        )  # fmt: skip

    def now():
        return combat.current(session=db_session, thread=scene.thread)

    # "Speed: 9 (reduced to 8 by the armor)"
    gm(combat.start_combat, character_slugs=[scene.larry.slug, scene.curly.slug])
    assert {f.name: f.speed for f in now().fighters} == {"Larry": 7, "Curly": 8}
    # "Segment 1: Neither character is fast enough to make an action in this segment."
    assert now().waiting_for == []
    gm(combat.next_segment)

    # Segment 2: "Curly goes for a Double Attack ... giving Curly an effective Skill of 7";
    # "Larry will Attack and Shield, also at -2 to both rolls, giving him an effective skill
    # of 6." "Curly's first attack fails (he rolled a 9), but he scores with the second (a
    # 6). Larry's Shield roll fails (he rolled a 7), but he scores with his attack (he also
    # rolled a 6). ... Larry takes 1 (down to 29), Curly takes 4 (reduced to 2 by the
    # armor, so he's down to 22)."
    assert sorted(now().waiting_for) == ["Curly", "Larry"]
    declare("Curly", ["attack", "attack"])
    declare("Larry", ["attack", "defend"])
    c1, c2, c_dmg = scene.post("Curly", f"{BLADE} # one\n{BLADE} # two\n/roll 1d6", [4, 5, 3, 3, 1])
    shield, l_hit, l_dmg = scene.post(
        "Larry", f"{BLADE} # shield\n{BLADE}\n/roll 1d6", [3, 4, 3, 3, 4]
    )
    first = attack("Curly", "Larry", c1, damage=c_dmg, defence=shield)
    assert "at 7 (skill 10, two hand actions -2, Larry's small shield -1)" in first.text
    assert "no damage" in first.text and first.detail["rolls"] == [c1]
    second = attack("Curly", "Larry", c2, damage=c_dmg, defence=shield)
    assert "defence at 6" in second.text and "= 1 taken" in second.text
    third = attack("Larry", "Curly", l_hit, damage=l_dmg)
    assert "- armour 2 = 2 taken" in third.text
    assert (_lost(scene, scene.larry), _lost(scene, scene.curly)) == (1, 2)
    with pytest.raises(Conflict, match="already part of this combat"):
        attack("Larry", "Curly", l_hit, damage=l_dmg)
    gm(combat.next_segment)

    # Segment 3: "Both characters make both their rolls. This means that they both hit each
    # other, but successfully blocked the shots, so no damage is taken this Segment."
    declare("Curly", ["attack", "defend"])
    declare("Larry", ["attack", "defend"])
    c_hit, c_block = scene.post("Curly", f"{BLADE}\n{BLADE} # block", [3, 4, 4, 4])
    l_hit, l_shield = scene.post("Larry", f"{BLADE}\n{BLADE} # shield", [2, 3, 2, 4])
    attack("Curly", "Larry", c_hit, defence=l_shield)
    attack("Larry", "Curly", l_hit, defence=c_block)
    assert (_lost(scene, scene.larry), _lost(scene, scene.curly)) == (1, 2)
    gm(combat.next_segment)

    # Segment 4: "Neither character is fast enough to act in this segment."
    assert now().waiting_for == []
    with pytest.raises(CombatError, match="does not act in segment 4"):
        declare("Larry", ["attack"])
    gm(combat.next_segment)

    # Segment 5: "Larry hits with his one attack, and rolls a 5, causing Curly to take 3
    # points of damage. This drops Curly to 19. Curly hits with both attacks, and rolls a
    # total of 7 for damage. Larry must take all of this, which drops him to 22."
    declare("Curly", ["attack", "attack"])
    declare("Larry", ["attack"])
    l_hit, l_dmg = scene.post("Larry", f"{BLADE}\n/roll 1d6", [4, 4, 5])
    c1, d1, c2, d2 = scene.post(
        "Curly", f"{BLADE}\n/roll 1d6\n{BLADE}\n/roll 1d6", [3, 3, 3, 2, 1, 4]
    )
    attack("Larry", "Curly", l_hit, damage=l_dmg)
    attack("Curly", "Larry", c1, damage=d1)
    attack("Curly", "Larry", c2, damage=d2)
    fighters = {f.name: f for f in now().fighters}
    assert (fighters["Larry"].hit_points, fighters["Curly"].hit_points) == (22, 19)
    gm(combat.next_segment)

    # Segment 6: "Only Curly may take an action this round. ... He hits with one attack, and
    # does 2 points of damage. Larry is now down to 20 points. He has taken his full Health
    # in damage, and is now wounded"
    assert now().waiting_for == ["Curly"]
    declare("Curly", ["attack", "attack"])
    c1, c2, dmg = scene.post("Curly", f"{BLADE}\n{BLADE}\n/roll 1d6", [6, 5, 3, 4, 2])
    attack("Curly", "Larry", c1, damage=dmg)
    attack("Curly", "Larry", c2, damage=dmg)
    assert _lost(scene, scene.larry) == 10
    assert {f.name: f.condition for f in now().fighters}["Larry"] == "wounded"
    gm(combat.next_segment)

    # Segment 7: "Though wounded, Larry does have a card to play: only he can take an action
    # this round. ... He succeeds, and rolls a 6 for damage, causing Curly to take 4 points,
    # dropping him to 15. Now Curly is wounded, too."
    assert now().waiting_for == ["Larry"]
    declare("Larry", ["attack"])
    hit, dmg = scene.post("Larry", f"{BLADE}\n/roll 1d6", [2, 3, 6])
    wounded = attack("Larry", "Curly", hit, damage=dmg)
    assert "wounded -2" in wounded.text
    assert _lost(scene, scene.curly) == 9
    gm(combat.next_segment)

    # Segment 8: "Both combatants back away from each other" (our Speed reading lets only
    # Curly act in segment 8: tests/rules/one/test_combat.py).
    declare("Curly", ["move"])
    end = gm(combat.end_combat)
    assert end.text == "The combat ends after 8 segments (seconds)."  # "just eight seconds"

    steps = combat.thread_steps(session=db_session, thread=scene.thread)
    assert combat.replay(steps) == []
    exported = forum_export.export_forum(
        session=db_session, campaign=scene.campaign, viewer=ANONYMOUS, now=T0 + timedelta(days=1)
    )
    (thread,) = [t for t in exported["threads"] if t["id"] == scene.thread.id]
    assert [s["kind"] for s in thread["combat"]][:3] == ["start", "next", "declare"]
    assert thread["combat"][-1]["text"] == end.text


def test_a_changed_history_does_not_replay(db_session, monkeypatch):
    scene = make_scene(db_session, monkeypatch)
    kw = {"session": db_session, "campaign": scene.campaign, "thread_id": scene.thread.id}
    combat.start_combat(**kw, actor=scene.gm, character_slugs=["larry", "curly"], now=T0)
    step = combat.next_segment(**kw, actor=scene.gm, now=T0)
    steps = combat.thread_steps(session=db_session, thread=scene.thread)
    assert combat.replay(steps) == []
    step.state = {**step.state, "segment": 5}
    assert combat.replay(steps) == [step.number]


def test_who_may_do_what(db_session, monkeypatch):
    scene = make_scene(db_session, monkeypatch)
    kw = {"session": db_session, "campaign": scene.campaign, "thread_id": scene.thread.id}
    with pytest.raises(Forbidden):
        combat.start_combat(
            **kw, actor=scene.larry_user, character_slugs=["larry", "curly"], now=T0
        )
    with pytest.raises(UserError, match="at least two"):
        combat.start_combat(**kw, actor=scene.gm, character_slugs=["larry"], now=T0)
    combat.start_combat(**kw, actor=scene.gm, character_slugs=["larry", "curly"], now=T0)
    with pytest.raises(Conflict, match="already under way"):
        combat.start_combat(**kw, actor=scene.gm, character_slugs=["larry", "curly"], now=T0)
    combat.next_segment(**kw, actor=scene.gm, now=T0)
    with pytest.raises(Forbidden, match="Curly's player"):
        combat.declare_plan(
            **kw, actor=scene.larry_user, fighter="Curly", plans=[["attack"]], now=T0
        )
    with pytest.raises(Forbidden):
        combat.next_segment(**kw, actor=scene.curly_user, now=T0)
    assert len(combat.thread_steps(session=db_session, thread=scene.thread)) == 2

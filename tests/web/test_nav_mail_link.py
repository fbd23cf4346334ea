"""The campaign navigation bar links a member to their email preferences (issue #15)."""

from __future__ import annotations

import re

from pbp.models import User
from tests.services.forum.tables import make_table


def _nav(page) -> list[tuple[str, str, bool]]:
    html = page.get_data(as_text=True)
    bar = re.search(r'<nav class="campaign-nav".*?</nav>', html, re.S).group(0)
    return [
        (label, href, bool(current))
        for href, current, label in re.findall(
            r'<li><a href="([^"]+)"( aria-current="page")?>([^<]+)</a></li>', bar
        )
    ]


def test_the_forum_bar_links_a_member_to_their_email_preferences(client, auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    slug = table.campaign.slug
    assert "Notifications" not in [label for label, *_ in _nav(client.get(f"/c/{slug}/sheets/"))]
    auth.login(table.ada_user)
    bar = _nav(client.get(f"/c/{slug}/sheets/"))
    assert [label for label, *_ in bar] == ["Scenes", "Sheets", "Search", "Icons", "Notifications"]
    assert ("Notifications", f"/c/{slug}/me/mail", False) in bar
    preferences = client.get(f"/c/{slug}/me/mail")
    assert preferences.status_code == 200
    assert ("Notifications", f"/c/{slug}/me/mail", True) in _nav(preferences)


def test_the_noteworthy_bar_has_the_same_link(client, auth, game, db_session):
    campaign, referee, (ada, *_) = game
    auth.login(db_session.get(User, ada.user_id))
    bar = _nav(client.get(f"/c/{campaign.slug}/turns/"))
    assert bar[-1] == ("Notifications", f"/c/{campaign.slug}/me/mail", False)
    auth.logout()
    auth.login(referee)
    labels = [label for label, *_ in _nav(client.get(f"/c/{campaign.slug}/turns/"))]
    assert labels == [
        "Planet",
        "Turns",
        "Characters",
        "History",
        "Referee",
        "Search",
        "Notifications",
    ]

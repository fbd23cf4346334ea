"""A player's own settings hold their checks in the service (#18 item 1): called with no
page in front, they refuse another character's form and anyone who is not its player."""

from datetime import UTC, datetime

import pytest

from adapters import Fetcher
from pbp.errors import Forbidden, UserError
from pbp.models import User
from pbp.services.noteworthy import blog_settings, commenters
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    referee = make_user(db_session, "Referee")
    campaign = make_campaign(db_session, referee=referee)
    ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    return campaign, referee, ada, bram


def _choose(session, campaign, actor, kind="builtin", character_id=None):
    with Fetcher(instance_url="https://pbp.test") as fetcher:
        return blog_settings.choose_blog(
            session=session,
            actor=actor,
            campaign=campaign,
            kind=kind,
            url=None,
            character_id=character_id,
            fetcher=fetcher,
            allow_private=False,
            now=NOW,
        )


def test_a_blog_form_for_another_character_is_refused(db_session, game):
    campaign, referee, ada, bram = game
    ada_user = db_session.get(User, ada.user_id)
    with pytest.raises(Forbidden, match="another character"):
        _choose(db_session, campaign, ada_user, character_id=bram.id)
    with pytest.raises(Forbidden, match="only a player"):
        _choose(db_session, campaign, referee)
    with pytest.raises(UserError, match="the built-in blog or your own blog"):
        _choose(db_session, campaign, ada_user, kind="elsewhere")
    character, row = _choose(db_session, campaign, ada_user, character_id=ada.id)
    assert (character.id, row.kind) == (ada.id, "builtin")


def test_only_the_player_declares_their_commenter_addresses(db_session, game):
    campaign, referee, ada, bram = game

    def declare(actor, character_id=None):
        return commenters.declare_mine(
            session=db_session,
            actor=actor,
            campaign=campaign,
            uris=["https://ada.example/"],
            character_id=character_id,
            now=NOW,
        )

    with pytest.raises(Forbidden, match="only a player"):
        declare(referee)
    with pytest.raises(Forbidden, match="another character"):
        declare(db_session.get(User, ada.user_id), character_id=bram.id)
    character, mapped = declare(db_session.get(User, ada.user_id))
    assert character.id == ada.id and mapped == 0
    assert commenters.declared(session=db_session, character=ada) == ["https://ada.example/"]

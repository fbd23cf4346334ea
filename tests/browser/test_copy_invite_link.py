"""One click copies an open invitation's link (pbp/static/copy-link.js), in real Chromium."""

import pytest
from playwright.sync_api import expect

from pbp.models import utcnow
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from tests.helpers import log_in, make_account

pytestmark = pytest.mark.browser


def test_the_copy_button_puts_the_invitation_link_on_the_clipboard(live_server, page, shoot):
    with live_server.session() as session:
        referee = make_account(session, "Referee")
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name=f"Copy Game {referee.id}"
        )
        issued = accounts.create_invite(
            session=session,
            campaign=campaign,
            created_by=referee,
            secret_key=live_server.app.secret_key,
            base_url=live_server.url,
            now=utcnow(),
            email="pip@browser.test",
        )
        session.commit()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    log_in(page, referee.email)
    page.goto(f"/c/{campaign.slug}/referee/")
    field = page.get_by_label("Invitation link for pip@browser.test")
    expect(field).to_have_value(issued.url)
    button = page.locator("button[data-copy]")
    expect(button).to_have_text("Copy the link")
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == issued.url
    shoot(page, "referee-open-invitations")

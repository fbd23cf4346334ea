"""Issue #31 item 1: the Notifications page's "Notify me on this device" button, in real
Chromium under pbp's CSP: it registers pbp's service worker (/sw.js) with a scope that
covers the whole site and asks the browser for a push subscription. Chromium's own push
service is off the network here, so the subscription itself cannot complete: the page
must say so rather than fail silently (the loopback push service of tests/web/test_reach.py
covers delivery)."""

import pytest
from playwright.sync_api import expect

from pbp.services import campaigns
from tests.helpers import log_in, make_account

pytestmark = pytest.mark.browser


def test_the_button_registers_the_service_worker_for_the_whole_site(live_server, page, shoot):
    with live_server.session() as session:
        referee = make_account(session, "Referee")
        player = make_account(session, "Pia")
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name=f"Push Game {referee.id}"
        )
        campaigns.add_character(session=session, campaign=campaign, name="Pia", user=player)
        session.commit()
    page.context.grant_permissions(["notifications"], origin=live_server.url)
    log_in(page, player.email)
    page.goto(f"/c/{campaign.slug}/me/mail")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Notifications from {campaign.name}")
    page.get_by_role("button", name="Notify me on this device").click()
    status = page.locator("[data-push-status]")
    # Offline, Chromium's push service refuses; online, the form is sent and the page says so.
    expect(status.or_(page.get_by_text("This device will be notified"))).not_to_be_empty()
    scope = page.evaluate("navigator.serviceWorker.getRegistration('/').then(r => r && r.scope)")
    assert scope == f"{live_server.url}/"
    shoot(page, "notifications-this-device")

"""The whole journey of issue #15 in real Chromium, from a fresh install to a finished turn
and a forum scene, through the pages only (no service call after the first account):

1. the first referee is made with the real `pbp user create` (a subprocess on the live
   server's database, the password on standard input);
2. the referee logs in, starts a Noteworthy campaign, adds three characters and invites
   two players by email (each opens the link from the delivered mail, in the outbox
   folder) and a third by a link copied from the page; each makes an account in a
   browser of their own;
3. Ada's player writes a Challenging entry against Bram on the built-in blog; the
   challenge mail's link opens it for Bram's player; Cleo's player notes Support;
4. the referee closes the turn and resolves it, accepting each confirmation dialog;
5. the results mail's link opens the turn page, which shows the stored result;
6. a Noir forum campaign: both players are invited and join, the GM opens a scene with
   a roll, then whispers to Ada's player; Bram's player cannot see the whisper.

A screenshot is taken at each step, into $PBP_JOURNEY_SCREENSHOTS if set (the lead keeps
a set under docs/journey/), otherwise into the test's temporary folder; axe-core checks the
page at each step at 1280 and 390 px (tests/browser/axe.py), and the test fails at the end
on anything it found (issue #33 item 5).
"""

from __future__ import annotations

import email
import itertools
import os
import re
import subprocess
import sys
from email.policy import default as default_policy
from pathlib import Path

import pytest
from playwright.sync_api import expect

from pbp.services.mail import send as mail_send
from tests.browser.axe import audit_widths
from tests.helpers import PASSWORD

pytestmark = pytest.mark.browser

# The `pbp` console script's entry point (pyproject: pbp = "pbp.cli:main"), with this
# interpreter, wherever the package was installed.
PBP = [sys.executable, "-c", "from pbp.cli import main; main()"]
_run = itertools.count(1)
_URL = re.compile(r"https?://[^\s<>\"']+")


@pytest.fixture
def shots(tmp_path):
    """`shot(page, "name")`: a full-page screenshot, numbered in the journey's order, and
    the page's accessibility check at both widths (what it finds: `shot.violations`)."""
    folder = Path(os.environ.get("PBP_JOURNEY_SCREENSHOTS") or tmp_path / "journey")
    folder.mkdir(parents=True, exist_ok=True)
    taken: list[str] = []

    def shot(page, name: str) -> None:
        file = f"{len(taken) + 1:02d}-{name}.png"
        page.screenshot(path=folder / file, full_page=True)
        taken.append(file)
        shot.violations += [f"{name}: {line}" for line in audit_widths(page)]

    shot.violations = []
    shot.taken = taken
    shot.folder = folder
    yield shot
    print(f"\njourney screenshots in {folder}: {', '.join(taken)}")


def create_first_account(live_server, address: str, name: str) -> str:
    """`pbp user create` as an operator runs it on a fresh install."""
    app = live_server.app
    env = {
        **os.environ,
        "DATABASE_URL": app.config["DATABASE_URL"],
        "PBP_INSTANCE_PATH": str(app.instance_path),
        "SECRET_KEY": app.config["SECRET_KEY"],
        "PBP_BASE_URL": live_server.url,
    }
    done = subprocess.run(
        [*PBP, "user", "create", address, "--name", name],
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def delivered(live_server, to: str, subject: str) -> email.message.EmailMessage:
    """The one delivered message to `to` whose subject contains `subject`. The testing
    app delivers into its instance folder's outbox; what a request does not send at once
    (only events and reminders are) goes with the scheduler's sweep, run here."""
    mail_send.send_outbox(live_server.app)
    outbox = Path(live_server.app.instance_path) / "outbox"
    found = []
    for path in outbox.glob("*.eml"):
        message = email.message_from_bytes(path.read_bytes(), policy=default_policy)
        if message["To"] == to and subject in message["Subject"]:
            found.append(message)
    assert len(found) == 1, f"{len(found)} mails to {to} about {subject!r}"
    return found[0]


def link_in(message, path_pattern: str) -> str:
    text = message.get_body(preferencelist=("plain",)).get_content()
    links = [u for u in _URL.findall(text) if re.search(path_pattern, u)]
    assert links, f"no link matching {path_pattern} in:\n{text}"
    return links[0]


def log_in(page, address: str) -> None:
    page.goto("/login")
    page.get_by_label("Email address", exact=True).fill(address)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"^(?!.*/login).*$"))


def accepting_dialogs(page):
    # static/confirm.js asks before closing, resolving, posting an event; Playwright
    # would dismiss the dialog (and so cancel the action) unless told to accept it.
    page.on("dialog", lambda dialog: dialog.accept())
    return page


def invite_by_email(page, address: str, character: str | None = None) -> None:
    """Fill the invite page the referee is on; a character is chosen already when the
    page was opened from that character's "Invite" action."""
    page.get_by_label("Player's email (optional)").fill(address)
    if character:
        chosen = page.get_by_label("Character", exact=True).get_by_role("option", selected=True)
        expect(chosen).to_have_text(character)
    page.get_by_role("button", name="Create the invite link").click()
    expect(page.get_by_role("heading", name=re.compile("Invite link for"))).to_be_visible()


def accept_new(page, link: str, name: str, email: str | None = None) -> None:
    """Make an account from an invitation; one that names no address asks for one."""
    page.goto(link)
    page.get_by_label("Your name").fill(name)
    if email:
        page.get_by_label("Email address", exact=True).fill(email)
    page.get_by_label("Choose a password", exact=True).fill(PASSWORD)
    page.get_by_label("Choose a password again").fill(PASSWORD)
    page.get_by_role("button", name="Create my account and join").click()
    page.wait_for_url(re.compile(r"^(?!.*/invite/).*$"))


def test_from_a_fresh_install_to_a_resolved_turn_and_a_whisper(live_server, new_page, shots):
    n = f"{os.getpid()}{next(_run)}"
    ref_email, ada_email, bram_email, cleo_email = (
        f"{who}{n}@journey.test" for who in ("rita", "ada", "bram", "cleo")
    )

    # 1. The first account, from the command line.
    said = create_first_account(live_server, ref_email, "Rita")
    assert f"account created for {ref_email}" in said

    # 2. The referee starts a Noteworthy campaign and invites two players.
    ref = accepting_dialogs(new_page())
    log_in(ref, ref_email)
    shots(ref, "referee-logged-in")
    ref.goto("/campaigns/new")
    name = f"Harbour {n}"
    ref.get_by_label("Name", exact=True).fill(name)
    ref.get_by_label("Noteworthy", exact=True).check()
    shots(ref, "new-campaign")
    ref.get_by_role("button", name="Create and referee it").click()
    expect(ref.get_by_role("heading", level=1)).to_contain_text(name)
    slug = ref.url.split("/c/")[1].split("/")[0]
    for character in ("Ada", "Bram", "Cleo"):
        ref.get_by_label("New character").fill(character)
        ref.get_by_role("button", name="Add character").click()
        expect(ref.get_by_text(f"{character} joins the roster")).to_be_visible()
    ref.get_by_label("Opening turns without challenges").fill("0")
    ref.get_by_role("button", name="Save settings").click()
    expect(ref.get_by_text("Settings saved")).to_be_visible()
    ref.get_by_label("Event for turn 1 (for everyone)").fill("A ship without lights drifts in.")
    ref.get_by_role("button", name="Post the event and open turn 1").click()
    expect(ref.get_by_text("Turn 1 is open")).to_be_visible()
    shots(ref, "turn-1-open")
    for character, address in (("Ada", ada_email), ("Bram", bram_email)):
        ref.goto(f"/c/{slug}/referee/")
        ref.get_by_role("link", name=f"Invite a player for {character}").click()
        invite_by_email(ref, address, character)
    shots(ref, "invite-created")
    # Cleo's player has no address on file: the referee copies the link from the page.
    ref.goto(f"/c/{slug}/referee/")
    ref.get_by_role("link", name="Invite a player for Cleo").click()
    ref.get_by_role("button", name="Create the invite link").click()
    cleo_link = ref.get_by_label("Invite link", exact=True).input_value()

    ada = new_page()
    ada_link = link_in(delivered(live_server, ada_email, "invited"), r"/invite/")
    ada.goto(ada_link)
    shots(ada, "invitation")
    accept_new(ada, ada_link, "Ada's player")
    shots(ada, "ada-joined")
    bram = new_page()
    accept_new(bram, link_in(delivered(live_server, bram_email, "invited"), r"/invite/"), "Bram P")
    cleo = new_page()
    accept_new(cleo, cleo_link, "Cleo P", email=cleo_email)

    # 3. Ada challenges Bram on the built-in blog; Bram is mailed; Cleo supports Ada.
    ada.goto(f"/c/{slug}/write")
    ada.get_by_label("Title").fill("The lantern goes out")
    ada.get_by_label("Current mood:").fill("Challenging")
    ada.get_by_label("Whom do you challenge?").select_option(label="Bram")
    ada.get_by_label(re.compile("^Entry")).fill("Bram was on the quay when the lantern went out.")
    shots(ada, "write-challenge")
    ada.get_by_role("button", name="Post entry").click()
    expect(ada.get_by_text("Entry posted")).to_be_visible()
    entry_url = ada.url

    challenged = delivered(live_server, bram_email, "Ada challenges Bram")
    bram.goto(link_in(challenged, r"/c/.+/ada/\d+$"))
    assert bram.url == entry_url
    expect(bram.get_by_role("heading", name="The lantern goes out")).to_be_visible()
    shots(bram, "challenge-mail-opens-entry")

    cleo.goto(f"/c/{slug}/")
    cleo.get_by_role("link", name="The lantern goes out").first.click()
    cleo.wait_for_url(entry_url)
    cleo.get_by_label("Support", exact=True).check()
    cleo.get_by_label("Note", exact=True).fill("I saw him there too.")
    cleo.get_by_role("button", name="Post note").click()
    expect(cleo.get_by_text("Note posted")).to_be_visible()
    shots(cleo, "supporting-note")

    # 4. The referee closes and resolves, confirming each.
    ref.goto(f"/c/{slug}/referee/")
    ref.get_by_role("button", name="Close turn 1").click()
    expect(ref.get_by_role("heading", name=re.compile("Turn 1 · closed"))).to_be_visible()
    shots(ref, "turn-closed")
    ref.get_by_role("button", name="Resolve turn 1").click()
    expect(ref.get_by_text("Turn 1 is resolved")).to_be_visible()
    shots(ref, "turn-resolved")

    # 5. The results mail links to the turn page, which shows the stored result.
    results = delivered(live_server, bram_email, "Turn 1: results")
    bram.goto(link_in(results, rf"/c/{slug}/turns/1$"))
    expect(bram.get_by_role("heading", name="Result")).to_be_visible()
    expect(bram.get_by_role("heading", name="Ada challenges Bram")).to_be_visible()
    expect(bram.get_by_text("1 support", exact=True)).to_be_visible()
    expect(bram.get_by_text("Became an outsider: Bram.")).to_be_visible()
    shots(bram, "turn-page-result")

    # 6. A Noir forum campaign: invite both players, a scene with a roll, a whisper.
    ref.goto("/campaigns/new")
    noir = f"Water Street {n}"
    ref.get_by_label("Name", exact=True).fill(noir)
    ref.get_by_label("Noir", exact=True).check()
    ref.get_by_role("button", name="Create and referee it").click()
    expect(ref.get_by_role("heading", level=1)).to_contain_text(noir)
    noir_slug = ref.url.split("/c/")[1].split("/")[0]
    shots(ref, "noir-home")
    for address in (ada_email, bram_email):
        ref.goto(f"/c/{noir_slug}/referee/")
        ref.get_by_role("link", name="Invite a player", exact=True).click()
        invite_by_email(ref, address)
    for page, address in ((ada, ada_email), (bram, bram_email)):
        page.goto(link_in(delivered(live_server, address, f"[{noir}]"), r"/invite/"))
        page.get_by_role("button", name="Join", exact=True).click()
        page.wait_for_url(re.compile(r"^(?!.*/invite/).*$"))
    shots(bram, "noir-joined")

    ref.goto(f"/c/{noir_slug}/forum/new")
    ref.get_by_label("Title of the scene").fill("Rain on Water Street")
    ref.get_by_label("Your post, in Markdown").fill(
        "The rain does not stop.\n/roll noir difficulty skill=7 # the tail"
    )
    ref.get_by_role("button", name="Post", exact=True).click()
    expect(ref.get_by_text("The rain does not stop.")).to_be_visible()
    expect(ref.get_by_text("Roll #1")).to_be_visible()
    scene = ref.url.split("#")[0]
    shots(ref, "scene-with-roll")
    ref.get_by_label("A whisper: only the people named and the GM").check()
    ref.get_by_label("Ada's player").check()
    ref.get_by_label("Your post, in Markdown").fill("Ada, a step behind you.")
    ref.get_by_role("button", name="Post", exact=True).click()
    expect(ref.get_by_text("Ada, a step behind you.")).to_be_visible()
    shots(ref, "whisper-sent")

    ada.goto(scene)
    expect(ada.get_by_text("Ada, a step behind you.")).to_be_visible()
    shots(ada, "whisper-seen")
    bram.goto(scene)
    expect(bram.get_by_text("The rain does not stop.")).to_be_visible()
    expect(bram.get_by_text("Ada, a step behind you.")).to_have_count(0)
    shots(bram, "whisper-hidden")
    assert shots.violations == [], "axe-core found:\n" + "\n".join(shots.violations)

"""A new group's first hour on a real install, in real Chromium (issue #27, "Done when").

Nothing here is the test app: `pbp db upgrade`, `pbp user create` and `pbp serve --port P`
run as an operator runs them, in a fresh instance folder, on a port other than 5000 and
with no PBP_BASE_URL, so every link pbp writes must follow the address it serves (item 1).
Mail goes to the instance's outbox folder (no SMTP_URL), as .eml files.

The journey: the first account; a Noteworthy campaign with three characters, its players
invited by mail and joining from the mailed links; a turn with a challenge, a double click
on "Post entry" (one entry: item 2) and notes whose labels say how they count (item 4); the
referee's refused settings keep what was typed (item 5); the resolve with a consequence,
which the turn page shows (item 7). Then a Noir campaign where an invited player with no
character makes one and posts a roll (item 3). At the end, every link in every mail opens.

With PBP_SCREENS=docs/screens the test also writes the planet, the turn page, the
dashboard, the forum scene and the history at 1280 and 390 px wide (linked from the README).
"""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from email.policy import default as default_policy
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS
from tests.helpers import PASSWORD
from tests.smtpserver import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PBP = [sys.executable, "-c", "from pbp.cli import main; main()"]
ROOT = Path(__file__).resolve().parents[2]
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
WIDTHS = (1280, 390)


class RealInstall:
    """pbp installed and served as the README's real-install steps say, minus the base URL."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.instance = folder / "instance"
        self.port = free_port()
        while self.port == 5000:
            self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PBP_", "DATABASE_URL", "SECRET_KEY", "SMTP_URL"))
        }
        self.env["PBP_INSTANCE_PATH"] = str(self.instance)
        self.server: subprocess.Popen | None = None

    def run(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            [*PBP, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.folder,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def serve(self) -> None:
        self._log = open(self.folder / "serve.log", "wb")  # noqa: SIM115 (closed in stop)
        self.server = subprocess.Popen(
            [*PBP, "serve", "--port", str(self.port)],
            env=self.env,
            cwd=self.folder,
            stdout=self._log,
            stderr=self._log,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        raise AssertionError("pbp serve did not answer:\n" + self.log())

    def log(self) -> str:
        return (self.folder / "serve.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)
            self._log.close()

    def mails(self) -> list[email.message.EmailMessage]:
        outbox = self.instance / "outbox"
        return [
            email.message_from_bytes(path.read_bytes(), policy=default_policy)
            for path in sorted(outbox.glob("*.eml"))
        ]

    def mail(self, to: str, subject: str, wait: float = 45) -> email.message.EmailMessage:
        """The one mail to `to` about `subject`; what a request does not send at its commit
        leaves with the embedded scheduler's sweep (every 30 s)."""
        deadline = time.monotonic() + wait
        while True:
            found = [m for m in self.mails() if m["To"] == to and subject in m["Subject"]]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert len(found) == 1, f"{len(found)} mails to {to} about {subject!r}"
        return found[0]


def text_of(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def link_in(message, pattern: str) -> str:
    links = [u for u in _URL.findall(text_of(message)) if re.search(pattern, u)]
    assert links, f"no link matching {pattern} in:\n{text_of(message)}"
    return links[0]


@pytest.fixture
def install(tmp_path):
    real = RealInstall(tmp_path)
    real.run("db", "upgrade")
    yield real
    real.stop()


@pytest.fixture
def browse(chromium, install, request):
    contexts = []

    def make(width: int = 1280):
        context = chromium.new_context(
            base_url=install.url,
            viewport={"width": width, "height": 900},
            is_mobile=width < 500,
            has_touch=width < 500,
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())  # confirm.js asks first
        return page

    yield make
    for context in contexts:
        context.close()


def log_in(page, address: str) -> None:
    page.goto("/login")
    page.get_by_label("Email address", exact=True).fill(address)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"^(?!.*/login).*$"))


def join_from_mail(page, link: str, name: str) -> None:
    page.goto(link)
    page.get_by_label("Your name").fill(name)
    page.get_by_label("Choose a password", exact=True).fill(PASSWORD)
    page.get_by_label("Choose a password again").fill(PASSWORD)
    page.get_by_role("button", name="Create my account and join").click()
    page.wait_for_url(re.compile(r"^(?!.*/invite/).*$"))


def screens(page, name: str, path: str) -> None:
    """The page at both widths, into $PBP_SCREENS (the README links docs/screens/)."""
    folder = os.environ.get("PBP_SCREENS")
    if not folder:
        return
    target = ROOT / folder
    target.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path)
        page.screenshot(path=target / f"{name}-{width}.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_first_hour_on_a_real_install(install, browse):
    n = os.getpid()
    rita, ada_mail, bram_mail, cleo_mail = (
        f"{who}{n}@first-hour.test" for who in ("rita", "ada", "bram", "cleo")
    )
    said = install.run("user", "create", rita, "--name", "Rita", stdin=PASSWORD + "\n")
    assert f"account created for {rita}" in said
    install.serve()
    assert "5000" not in install.url

    # The referee's campaign, roster and settings; a refused setting keeps what was typed.
    ref = browse()
    log_in(ref, rita)
    ref.goto("/campaigns/new")
    ref.get_by_label("Name", exact=True).fill("Harbour Lights")
    ref.get_by_label("Noteworthy", exact=True).check()
    ref.get_by_role("button", name="Create and referee it").click()
    expect(ref.get_by_role("heading", level=1)).to_contain_text("Harbour Lights")
    slug = ref.url.split("/c/")[1].split("/")[0]
    for character in ("Ada", "Bram", "Cleo"):
        ref.get_by_label("New character").fill(character)
        ref.get_by_role("button", name="Add character").click()
        expect(ref.get_by_text(f"{character} joins the roster")).to_be_visible()
    ref.get_by_label("Opening turns without challenges").fill("none")
    ref.get_by_label("Custom moods as game actions", exact=False).fill("Scheming = Plot")
    ref.get_by_role("button", name="Save settings").click()
    expect(ref.get_by_text("opening turns must be a whole number").first).to_be_visible()
    expect(ref.get_by_label("Opening turns without challenges")).to_have_value("none")
    expect(ref.get_by_label("Custom moods as game actions", exact=False)).to_have_value(
        re.compile("Scheming = Plot")
    )
    ref.get_by_label("Opening turns without challenges").fill("0")
    ref.get_by_role("button", name="Save settings").click()
    expect(ref.get_by_text("Settings saved")).to_be_visible()

    # Invitations by mail: the links point at the port pbp serves (item 1).
    for character, address in (("Ada", ada_mail), ("Bram", bram_mail), ("Cleo", cleo_mail)):
        ref.goto(f"/c/{slug}/referee/")
        ref.get_by_role("link", name=f"Invite a player for {character}").click()
        ref.get_by_label("Player's email (optional)").fill(address)
        ref.get_by_role("button", name="Create the invite link").click()
        expect(ref.get_by_role("heading", name=re.compile("Invite link for"))).to_be_visible()
    players = {}
    for name, address in (("Ada", ada_mail), ("Bram", bram_mail), ("Cleo", cleo_mail)):
        link = link_in(install.mail(address, "invited"), r"/invite/")
        assert link.startswith(install.url + "/"), link
        players[name] = browse()
        join_from_mail(players[name], link, f"{name}'s player")
    ada, bram, cleo = players["Ada"], players["Bram"], players["Cleo"]

    # Before turn 1 the planet says what the game waits for (item 9).
    ada.goto(f"/c/{slug}/")
    expect(ada.get_by_text(re.compile("waits for the referee", re.I)).first).to_be_visible()

    ref.goto(f"/c/{slug}/referee/")
    ref.get_by_label("Event for turn 1 (for everyone)").fill("A ship without lights drifts in.")
    ref.get_by_role("button", name="Post the event and open turn 1").click()
    expect(ref.get_by_text("Turn 1 is open")).to_be_visible()

    # Ada challenges Bram with a double click: one entry (item 2).
    ada.goto(f"/c/{slug}/write")
    ada.get_by_label("Title").fill("The lantern goes out")
    ada.get_by_label("Current mood:").fill("Challenging")
    ada.get_by_label("Whom do you challenge?").select_option(label="Bram")
    ada.get_by_label(re.compile("^Entry")).fill("Bram was on the *quay* when it went out.")
    ada.get_by_role("button", name="Post entry").dblclick()
    expect(ada.get_by_role("heading", name="The lantern goes out")).to_be_visible()
    entry_url = ada.url.split("#")[0]
    ada.goto(f"/c/{slug}/")
    expect(ada.get_by_role("link", name="The lantern goes out")).to_have_count(1)
    # The edit page shows the Markdown she wrote, not HTML (item 6).
    ada.goto(entry_url + "/edit")
    source = ada.get_by_label(re.compile("^Entry")).input_value()
    assert "Bram was on the *quay* when it went out." in source and "<" not in source

    # Notes: Cleo supports; Bram, the target, may not take a position (item 4).
    cleo.goto(entry_url)
    cleo.get_by_label("Support", exact=True).check()
    cleo.get_by_label("Note", exact=True).fill("I saw him there too.")
    cleo.get_by_role("button", name="Post note").click()
    expect(cleo.get_by_text("Note posted")).to_be_visible()
    bram.goto(link_in(install.mail(bram_mail, "Ada challenges Bram"), r"/c/.+/ada/\d+$"))
    assert bram.url.split("#")[0] == entry_url
    # The target's position would not count: the form says so before he writes.
    expect(bram.get_by_label("Oppose", exact=True)).to_be_disabled()
    bram.get_by_label("Note", exact=True).fill("I was asleep.")
    bram.get_by_role("button", name="Post note").click()
    expect(bram.get_by_text("Note posted")).to_be_visible()
    expect(bram.get_by_text(re.compile("does not count: ")).first).to_be_visible()
    expect(bram.get_by_text("counts: supports", exact=False)).to_be_visible()
    expect(bram.get_by_text("opposes", exact=False)).to_have_count(0)

    # The referee closes and resolves with a consequence; the turn page shows it (item 7).
    ref.goto(f"/c/{slug}/referee/")
    ref.get_by_role("button", name="Close turn 1").click()
    expect(ref.get_by_role("heading", name=re.compile("Turn 1 · closed"))).to_be_visible()
    ref.get_by_label("Consequence of Ada vs Bram").fill("Bram leaves the harbour by night.")
    ref.get_by_role("button", name="Resolve turn 1").click()
    expect(ref.get_by_text("Turn 1 is resolved")).to_be_visible()
    turn_link = link_in(install.mail(bram_mail, "Turn 1: results"), rf"/c/{slug}/turns/1$")
    bram.goto(turn_link)
    expect(bram.get_by_text("Bram leaves the harbour by night.")).to_be_visible()

    screens(ref, "planet", f"/c/{slug}/")
    screens(ref, "turn", f"/c/{slug}/turns/1")
    screens(ref, "dashboard", f"/c/{slug}/referee/")
    screens(ref, "history", f"/c/{slug}/history")

    # A Noir campaign: an invited player with no character makes one and rolls (item 3).
    ref.goto("/campaigns/new")
    ref.get_by_label("Name", exact=True).fill("Water Street")
    ref.get_by_label("Noir", exact=True).check()
    ref.get_by_role("button", name="Create and referee it").click()
    noir = ref.url.split("/c/")[1].split("/")[0]
    ref.goto(f"/c/{noir}/referee/")
    ref.get_by_role("link", name="Invite a player", exact=True).click()
    ref.get_by_label("Player's email (optional)").fill(ada_mail)
    ref.get_by_role("button", name="Create the invite link").click()
    ada.goto(link_in(install.mail(ada_mail, "[Water Street]"), r"/invite/"))
    ada.get_by_role("button", name="Join", exact=True).click()
    ada.wait_for_url(re.compile(r"^(?!.*/invite/).*$"))
    ref.goto(f"/c/{noir}/forum/new")
    ref.get_by_label("Title of the scene").fill("Rain on Water Street")
    ref.get_by_label("Your post, in Markdown").fill("The rain does not stop.")
    ref.get_by_role("button", name="Post", exact=True).click()
    expect(ref.get_by_text("The rain does not stop.")).to_be_visible()
    scene = ref.url.split("#")[0]
    ada.goto(scene)
    ada.get_by_label("Your character's name").fill("Vera Lind")
    ada.get_by_role("button", name="Make my character").click()
    expect(ada.get_by_text(re.compile("Vera Lind")).first).to_be_visible()
    ada.goto(scene)
    ada.get_by_label("Your post, in Markdown").fill("Vera waits.\n/roll 2d6 # nerve")
    ada.get_by_role("button", name="Post", exact=True).click()
    expect(ada.get_by_text("Vera waits.")).to_be_visible()
    expect(ada.get_by_text(re.compile("Roll #1"))).to_be_visible()
    screens(ref, "scene", scene.removeprefix(install.url))

    # Every link in every mail opens, on the address pbp serves (item 1).
    links = {u for m in install.mails() for u in _URL.findall(text_of(m))}
    assert links
    for link in sorted(links):
        assert link.startswith(install.url + "/"), link
        try:
            with urllib.request.urlopen(link, timeout=15) as answer:
                status = answer.status
        except urllib.error.HTTPError as refused:
            status = refused.code
        # An invitation already used answers 410 Gone with a page saying so; everything
        # else opens (a page for players sends a visitor to the login page).
        assert status in (200, 410), f"{link}: {status}"

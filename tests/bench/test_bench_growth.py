"""Benchmark: growth. The same work at 1x, 4x and 16x data, with the per-item cost of each
step printed side by side (prints figures, asserts only counts).

The target is that no step grows with the whole database: the per-item cost at 16x stays
within 1.5x of the per-item cost at 1x. Reported, not asserted (timing asserts make flaky
suites); asserted are the counts that would betray such a step: queries per page and per
tally equal at 1x, 4x and 16x, and in every poll pass exactly one request per feed, zero
parses and zero entry writes for the unchanged feeds, one parse and one new entry (two rows)
for each changed one.

One unit of data ("1x") is:
- a 24-character Noteworthy campaign of 60 turns (2,880 entries, 28,800 notes, the open turn
  with challenges), written by tests/bench/test_bench_pages.py's `build_campaign`, with its
  history in the outbox (one sent event mail per player and turn: 1,440 rows);
- a campaign of 160 external blogs on 8 loopback addresses (twenty each), served by
  tests/bench/test_bench_poll.py's Farm with 5 ms per answer (short: the 16x pass takes
  seconds, not minutes);
- a 24-player campaign that gets event mails (one per player and event) at each step.
The database (a SQLite file, or a scratch PostgreSQL database with PBP_TEST_DATABASE_URL,
ANALYZEd after each step as autovacuum would) holds 1, 4, then 16 such units; each step
adds units to the same database. Measured at each step:
- poll pass: every feed of every unit due (160, 640, 2,560), 90% answer 304 and 10% carry
  one new entry; production `polling.poll_due` (its default event-loop pass) and the
  production per-host limit; seconds per feed, the median of 3 passes;
- tally: `services.noteworthy.tally.tally` of the first campaign's open turn (480 notes), read from
  the database each time: time per note. The turn stays the same while the other campaigns
  pile up, so any growth is a query that reads more than its campaign;
- planet and dashboard of the first campaign, through the Flask test client as its referee,
  with the planet's page cache off (every view renders): p50 and p95 per page. The database
  grows by campaigns, not by turns of the measured campaign: a longer campaign is more to
  show (tests/bench/test_bench_pages.py covers it), other campaigns are nothing to show, so
  their cost is exactly "a step that grows with the whole database";
- mail fan-out: each unit's mail campaign posts an event (tests/bench/test_bench_mail.py's
  `_post`: queue 24 mails with the turn, one commit) and sends that batch over one SMTP
  connection (`send_pending`, one commit per message) to a local SMTP server: 24, 96, 384
  recipients, with the outbox history growing beside them; time per recipient, queueing
  and sending apart, the median of 3 such rounds (one unmeasured event warms up first).
Before each step's measurements everything the process holds is frozen out of the garbage
collector (as gunicorn's post_fork hook does for the web workers): the benchmark's own
bookkeeping grows with the data, and full collections over it are not pbp's cost. Wall
time, so PostgreSQL's own work counts; the load average is printed with the table.

``PBP_BENCH_SCALE=small``: 24 feeds (8 addresses, so the poll threads still run 16 at once)
and 6 turns a unit, 2 poll passes, 1 mail round, fewer timed runs: a smoke run for CI (about
20 s) whose ratios mean little. The full size takes about 1.5 minutes on SQLite. Run with::

    pytest -o addopts="" -s tests/bench/test_bench_growth.py
    PBP_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test pytest ... (PostgreSQL)
"""

from __future__ import annotations

import gc
import os
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import Blog, Campaign, Character, OutboxMessage, Turn, User
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from pbp.services.mail.send import SmtpTransport, send_pending
from pbp.services.noteworthy import polling
from pbp.services.noteworthy import tally as tally_service
from pbp.services.search import index as search_index
from tests.bench.figures import figure
from tests.bench.test_bench_mail import PLAYERS, _post
from tests.bench.test_bench_pages import (  # noqa: F401 (bench_engine: a fixture)
    T0,
    BuiltCampaign,
    _insert,
    bench_engine,
    build_campaign,
    count_selects,
    measure,
    page_urls,
    referee_client,
)
from tests.bench.test_bench_poll import Counts, Farm, entry_owners, pbp_pass
from tests.services.mail.test_outbox import NOW as MAIL_NOW
from tests.smtpserver import SmtpServer


@dataclass(frozen=True)
class Scale:
    characters: int  # of the measured campaign (and of every unit's)
    turns: int
    hosts_per_unit: int  # loopback addresses; 8 = the 16 lanes that keep 16 threads busy
    feeds_per_host: int
    passes: int  # measured poll passes per step
    tally_runs: int
    page_runs: int
    mail_rounds: int  # events per mail campaign and step


# 16x = 128 addresses: 127.0.0.2 to 127.0.0.129
SCALES = {"full": Scale(24, 60, 8, 20, 3, 30, 60, 3), "small": Scale(24, 6, 8, 3, 2, 5, 10, 1)}
MULTIPLES = (1, 4, 16)
DELAY = 0.005  # seconds before every feed answer, 304s included
CHANGED_EVERY = 10  # a pass gives one feed in ten a new entry
# Feed times: before 2025-01-07, when build_campaign's (unreachable) external blogs fall due.
# Each step primes its new feeds at its base time and passes every 20 minutes after it
# (the poll interval is 15); all within 12 hours, so no poll is an unconditional refetch.
POLL_T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
STEP_GAP, PASS_GAP = timedelta(hours=2), timedelta(minutes=20)
TARGET_RATIO = 1.5
PASSWORD = "correct horse battery staple"


def _scale() -> tuple[str, Scale]:
    name = os.environ.get("PBP_BENCH_SCALE", "full")
    return name, SCALES[name]


# --- the data -------------------------------------------------------------------------------
@dataclass
class World:
    referee_id: int
    urls: list[str]  # every feed the farm serves; units take them in order
    campaigns: list[BuiltCampaign] = field(default_factory=list)  # [0] is measured
    mail_campaigns: list[BuiltCampaign] = field(default_factory=list)
    feed_campaigns: list[int] = field(default_factory=list)
    primed: int = 0  # feed campaigns primed so far
    blog_of: list[int] = field(default_factory=list)  # blog id of feed k
    outbox_rows: int = 0
    notes: int = 0
    entries: int = 0


def outbox_history(built: BuiltCampaign) -> list[dict]:
    """One sent event mail per player and turn, as a finished turn leaves behind."""
    sent = T0 + timedelta(minutes=5)
    body = "The bells of the harbour ring at dusk. You alone notice the bell-ringer.\n" * 8
    return [
        {
            "campaign_id": built.id,
            "kind": "event",
            "dedupe_key": f"history:{built.id}:{t}:{k}",
            "message_id": f"<history.{built.id}.{t}.{k}@pbp.test>",
            "recipient": f"player-{built.id}-{k}@example.test",
            "subject": f"[Bench] Turn {t}: a new event for Hero {k:02d}",
            "body_text": body,
            "body_html": None,
            "headers": {"From": "pbp <pbp@pbp.test>", "Date": "Mon, 06 Jan 2025 09:05:00 +0000"},
            "status": "sent",
            "attempts": 1,
            "next_attempt_at": sent,
            "last_error": None,
            "created_at": sent,
            "sent_at": sent,
        }
        for t in range(1, built.turns + 1)
        for k in range(built.characters)
    ]


def add_feeds(engine, urls: list[str], blog_of: list[int]) -> int:
    """A campaign with one character and external blog per feed (ORM bulk adds, as the
    poll benchmark's fixture does); returns its id."""
    tag = uuid.uuid4().hex[:8]
    with Session(engine, expire_on_commit=False) as session:
        campaign = Campaign(
            slug=f"feeds-{tag}", name=f"Feeds {tag}", ruleset="noteworthy", status="running"
        )
        session.add(campaign)
        session.flush()
        session.add(Turn(campaign_id=campaign.id, number=1, opened_at=POLL_T0 - timedelta(days=5)))
        characters = [
            Character(campaign_id=campaign.id, name=f"Feed {n}", slug=f"feed-{n}")
            for n in range(len(urls))
        ]
        session.add_all(characters)
        session.flush()
        blogs = [
            Blog(character_id=c.id, kind="external", feed_url=url)
            for c, url in zip(characters, urls, strict=True)
        ]
        session.add_all(blogs)
        session.flush()
        blog_of.extend(blog.id for blog in blogs)
        session.commit()
        return campaign.id


def grow(engine, world: World, scale: Scale, units: int) -> None:
    """Add units until the database holds `units` of them."""
    feeds = scale.hosts_per_unit * scale.feeds_per_host
    while len(world.campaigns) < units:
        unit = len(world.campaigns)
        with engine.begin() as conn:
            built = build_campaign(
                conn,
                characters=scale.characters,
                turns=scale.turns,
                referee_id=world.referee_id,
                seed=2025 + unit,
            )
            history = outbox_history(built)
            _insert(conn, OutboxMessage, history)
            mailing = build_campaign(
                conn,
                characters=PLAYERS,
                turns=1,
                referee_id=world.referee_id,
                entries_per_turn=1,
                notes_per_entry=1,
                seed=unit,
            )
            # Written around the ORM, so copied into the search index here (as the
            # migration copies an existing database's texts).
            for campaign_id in (built.id, mailing.id):
                search_index.rebuild_campaign(connection=conn, campaign_id=campaign_id)
        world.campaigns.append(built)
        world.mail_campaigns.append(mailing)
        world.outbox_rows += len(history)
        world.notes += built.notes + mailing.notes
        world.entries += built.entries + mailing.entries
        urls = world.urls[unit * feeds : (unit + 1) * feeds]
        world.feed_campaigns.append(add_feeds(engine, urls, world.blog_of))


def analyze(engine) -> None:
    """PostgreSQL: fresh planner statistics, as autovacuum keeps them in production."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(sa.text("ANALYZE"))
            conn.commit()


# --- the steps ------------------------------------------------------------------------------
@dataclass
class PollCounts:
    not_modified: int = 0
    changed: int = 0
    unchanged_parses: int = 0
    unchanged_writes: int = 0
    changed_parses: int = 0
    changed_writes: int = 0


def prime(engine, fetcher, world: World, when: datetime) -> None:
    """The new feeds' first poll: every entry stored with its ETag (only their campaigns)."""
    for campaign_id in world.feed_campaigns[world.primed :]:
        outcomes, _, _ = pbp_pass(engine, fetcher, campaign_id, when)
        assert outcomes and {o.status for o in outcomes} == {"ok"}, [
            o.error for o in outcomes if o.error
        ][:5]
        assert all(o.report.new_entries == 3 for o in outcomes)
    world.primed = len(world.feed_campaigns)


def poll_step(engine, fetcher, farm, world, step, scale, monkeypatch) -> tuple[float, PollCounts]:
    """Median seconds per feed of `scale.passes` passes over every feed; each pass changes
    a tenth of the feeds, ones that never changed before (k % 10 == the pass's group)."""
    base = POLL_T0 + step * STEP_GAP
    prime(engine, fetcher, world, base)
    analyze(engine)
    total = len(world.blog_of)
    url_of = {blog_id: world.urls[k] for k, blog_id in enumerate(world.blog_of)}
    seconds, counts = [], PollCounts()
    for n in range(scale.passes):
        group = step * scale.passes + n
        changing = [k for k in range(total) if k % CHANGED_EVERY == group]
        farm.serve(2, changing)
        changed = {world.blog_of[k] for k in changing}
        unchanged = set(world.blog_of) - changed
        counting = Counts(entry_owners(engine, world.blog_of))
        counting.install(monkeypatch)
        requests_before, _ = farm.stats()
        try:
            outcomes, wall, _ = pbp_pass(engine, fetcher, None, base + (n + 1) * PASS_GAP)
        finally:
            counting.uninstall()
            monkeypatch.undo()
        requests_after, peak_per_host = farm.stats()
        by_blog = {o.blog_id: o for o in outcomes}
        assert len(outcomes) == len(by_blog) == total == requests_after - requests_before
        assert Counter(o.status for o in outcomes) == {
            "not_modified": len(unchanged),
            "ok": len(changed),
        }, [o.error for o in outcomes if o.error][:5]
        assert all(by_blog[b].report.new_entries == 1 for b in changed)
        assert peak_per_host <= fetcher.max_per_host
        counts.not_modified += len(unchanged)
        counts.changed += len(changed)
        counts.unchanged_parses += sum(counting.parses[url_of[b]] for b in unchanged)
        counts.unchanged_writes += sum(counting.writes[b] for b in unchanged)
        counts.changed_parses += sum(counting.parses[url_of[b]] for b in changed)
        counts.changed_writes += sum(counting.writes[b] for b in changed)
        seconds.append(wall / total)
    assert counts.unchanged_parses == 0 and counts.unchanged_writes == 0
    assert counts.changed_parses == counts.changed  # one parse per changed feed
    assert counts.changed_writes == 2 * counts.changed  # its new entry and first revision
    return statistics.median(seconds), counts


def tally_step(engine, built: BuiltCampaign, runs: int) -> tuple[float, int, int]:
    """(median seconds per note, notes in the turn, queries per tally)."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = session.get(Campaign, built.id)
        turn = session.exec(
            select(Turn).where(Turn.campaign_id == built.id, Turn.number == built.turns)
        ).one()
        notes = len(tally_service.load_turn(session=session, campaign=campaign, turn=turn).notes)
    timings, queries = [], set()
    for run in range(runs + 2):  # two warm-up runs: statement caches, the text cache
        with Session(engine) as session, count_selects(engine) as seen:
            start = time.perf_counter()
            result = tally_service.tally(session=session, campaign=campaign, turn=turn)
            if run >= 2:
                timings.append(time.perf_counter() - start)
        queries.add(len(seen))
    assert result.challenges, "the open turn has challenges to tally"
    assert len(queries) == 1, f"the tally's query count varies between runs: {queries}"
    return statistics.median(timings) / notes, notes, queries.pop()


def pages_step(client, engine, built: BuiltCampaign, runs: int) -> dict:
    urls = page_urls(built)
    return {key: measure(client, engine, urls[key], runs, key) for key in ("planet", "dashboard")}


# Issue #33 item 2: a word in every note of every campaign, and one in a tailored event a
# turn (build_campaign's texts): the first page of hits, as the referee reads them.
SEARCHES = {"search common": "noted", "search rare": "ringer"}


def search_step(client, engine, built: BuiltCampaign, runs: int) -> dict:
    measured = {}
    for key, word in SEARCHES.items():
        url = f"/c/{built.slug}/search?q={word}"
        page = client.get(url).get_data(as_text=True)
        assert 'data-hits="' in page and 'data-hits="0"' not in page, (word, "found nothing")
        measured[key] = measure(client, engine, url, runs, key)
    return measured


def search_figures(rows: dict) -> None:
    """Issue #33 item 2's figures: each search's p95 at the largest step over the planet's
    p95 at that step (its peer in the same run), and over its own p95 at 1x (growth with
    the database). Timing ratios: printed and filed, not guarded, no target (the table
    above judges the growth against TARGET_RATIO, reported, not asserted)."""
    planet = rows["planet p95"].values[-1]
    for key in SEARCHES:
        values = rows[f"{key} p95"].values
        name = key.replace(" ", "_")
        figure(f"growth.{name}_p95_over_planet_p95", values[-1] / planet, better="lower",
               guard=False)  # fmt: skip
        figure(f"growth.{name}_p95_{MULTIPLES[-1]}x_over_1x", values[-1] / values[0],
               better="lower", guard=False)  # fmt: skip


def warm_up_mail(engine, transport, built: BuiltCampaign) -> None:
    """One unmeasured event (turn 2) of the first mail campaign: the first batch of a
    process compiles the mail templates and statements, which would inflate the 1x figures."""
    turn, _ = _post(engine, built, 2)
    report = send_pending(
        engine_or_sessionmaker=engine,
        transport=transport,
        now=MAIL_NOW,
        batch_key=notifications.event_batch_key(turn),
    )
    assert len(report.sent) == PLAYERS


def mail_step(
    engine, server: SmtpServer, world: World, step: int, rounds: int
) -> tuple[float, float, int]:
    """`rounds` times, every mail campaign posts an event and sends its batch: (median queue
    s per recipient, median send s per recipient, recipients per round)."""
    transport = SmtpTransport(server.host, server.port, timeout=30)
    if step == 0:
        warm_up_mail(engine, transport, world.mail_campaigns[0])
    queue_s, send_s = [], []
    recipients = PLAYERS * len(world.mail_campaigns)
    for round_ in range(rounds):
        number = 3 + step * rounds + round_  # turns 1 and 2: the campaign's own, the warm-up
        queued = sent = 0.0
        for n, built in enumerate(world.mail_campaigns):
            first = server.message_count()
            turn, seconds = _post(engine, built, number)
            queued += seconds
            start = time.perf_counter()
            report = send_pending(
                engine_or_sessionmaker=engine,
                transport=transport,
                now=MAIL_NOW + timedelta(minutes=number, seconds=n),
                batch_key=notifications.event_batch_key(turn),
            )
            sent += time.perf_counter() - start
            assert len(report.sent) == PLAYERS and report.connections == 1 and not report.failed
            assert server.wait_for(first + PLAYERS)
        queue_s.append(queued / recipients)
        send_s.append(sent / recipients)
    return statistics.median(queue_s), statistics.median(send_s), recipients


# --- the benchmark --------------------------------------------------------------------------
@dataclass
class Row:
    label: str
    unit: str
    factor: float  # seconds -> unit
    values: list[float] = field(default_factory=list)

    def cells(self, small: bool) -> list[str]:
        first, last = self.values[0], self.values[-1]
        ratio = last / first if first else float("inf")
        verdict = ("met" if ratio <= TARGET_RATIO else "NOT MET") + ("*" if small else "")
        values = [f"{v * self.factor:.3f}" for v in self.values]
        return [self.label, self.unit, *values, f"{ratio:.2f}x", f"<= {TARGET_RATIO}x", verdict]


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table, padded to read in a terminal too (tests/bench/report.py copies it)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numeric = [i for i in range(len(header)) if all(r[i][:1].isdigit() for r in rows)]

    def line(cells: list[str]) -> str:
        padded = [
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = ["-" * (w - 1) + ":" if i in numeric else "-" * w for i, w in enumerate(widths)]
    return [line(header), line(rule), *(line(r) for r in rows)]


def test_bench_growth(bench_engine, tmp_path, monkeypatch):  # noqa: F811 (fixture)
    url, engine = bench_engine
    scale_name, scale = _scale()
    small = scale_name == "small"
    run_start = time.perf_counter()
    email = f"referee-{uuid.uuid4().hex[:8]}@example.test"
    with engine.begin() as conn:
        (referee_id,) = _insert(
            conn,
            User,
            [
                {
                    "email": email,
                    "display_name": "Referee",
                    "password_hash": accounts.hash_password(PASSWORD),
                    "created_at": T0,
                }
            ],
            returning=True,
        )
    hosts = scale.hosts_per_unit * MULTIPLES[-1]
    assert hosts <= 250  # addresses 127.0.0.2 and up
    assert len(MULTIPLES) * scale.passes <= CHANGED_EVERY  # each pass changes fresh feeds
    farm = Farm(hosts, scale.feeds_per_host, delay=DELAY)
    world = World(referee_id, farm.urls)
    fetcher = polling.fetcher_from_config({"PBP_ALLOW_PRIVATE_FEEDS": True})
    rows = {
        "poll": Row("poll pass, 90% 304 / 10% new", "ms/feed", 1e3),
        "tally": Row("tally of one open turn", "us/note", 1e6),
        "planet p50": Row("planet p50", "ms/page", 1.0),
        "planet p95": Row("planet p95", "ms/page", 1.0),
        "dashboard p50": Row("dashboard p50", "ms/page", 1.0),
        "dashboard p95": Row("dashboard p95", "ms/page", 1.0),
        "search common p50": Row(
            f"search '{SEARCHES['search common']}' (every note) p50", "ms/page", 1.0
        ),
        "search common p95": Row(
            f"search '{SEARCHES['search common']}' (every note) p95", "ms/page", 1.0
        ),
        "search rare p50": Row(
            f"search '{SEARCHES['search rare']}' (an event a turn) p50", "ms/page", 1.0
        ),
        "search rare p95": Row(
            f"search '{SEARCHES['search rare']}' (an event a turn) p95", "ms/page", 1.0
        ),
        "queue": Row("mail: queue an event", "ms/recipient", 1e3),
        "send": Row("mail: send its batch", "ms/recipient", 1e3),
    }
    sizes, queries, poll_counts = [], [], PollCounts()
    client = None
    try:
        with fetcher, SmtpServer() as server:
            for step, units in enumerate(MULTIPLES):
                grow_start = time.perf_counter()
                grow(engine, world, scale, units)
                analyze(engine)
                grow_s = time.perf_counter() - grow_start
                if client is None:
                    client = referee_client(url, engine, tmp_path, email, PASSWORD)
                    client.application.config["PBP_PAGE_CACHE_SECONDS"] = 0  # render each view
                # The benchmark's own bookkeeping grows with the data: frozen out of the
                # garbage collector, so a full collection costs the same at every step (the
                # web workers freeze their startup objects the same way: pbp.gunicorn_conf).
                gc.collect()
                gc.freeze()
                try:
                    per_feed, counts = poll_step(
                        engine, fetcher, farm, world, step, scale, monkeypatch
                    )
                    per_note, turn_notes, tally_queries = tally_step(
                        engine, world.campaigns[0], scale.tally_runs
                    )
                    pages = pages_step(client, engine, world.campaigns[0], scale.page_runs)
                    pages |= search_step(client, engine, world.campaigns[0], scale.page_runs)
                    queue_s, send_s, recipients = mail_step(
                        engine, server, world, step, scale.mail_rounds
                    )
                finally:
                    gc.unfreeze()
                for name in ("not_modified", "changed", "changed_parses", "changed_writes"):
                    setattr(poll_counts, name, getattr(poll_counts, name) + getattr(counts, name))
                rows["poll"].values.append(per_feed)
                rows["tally"].values.append(per_note)
                for key, measured in pages.items():
                    rows[f"{key} p50"].values.append(measured.p50)
                    rows[f"{key} p95"].values.append(measured.p95)
                rows["queue"].values.append(queue_s)
                rows["send"].values.append(send_s)
                queries.append((pages["planet"].queries, pages["dashboard"].queries, tally_queries))
                sizes.append(
                    (
                        units,
                        world.notes,
                        world.entries,
                        len(world.blog_of),
                        world.outbox_rows,
                        recipients,
                        grow_s,
                    )
                )
    finally:
        farm.stop()

    measured = world.campaigns[0]
    print()
    print(
        f"growth bench on {engine.dialect.name}, scale {scale_name}: 1x = a {measured.characters}"
        f"-character campaign of {measured.turns} turns ({measured.entries:,} entries, "
        f"{measured.notes:,} notes) + {scale.hosts_per_unit * scale.feeds_per_host} feeds "
        f"({DELAY * 1000:.0f} ms per answer) + a {PLAYERS}-player mail campaign; "
        f"{os.cpu_count()} CPUs, load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    for units, notes, entries, feeds, outbox, recipients, grow_s in sizes:
        print(
            f"  {units:>2}x: {units * 3} campaigns, {entries:,} entries, {notes:,} notes, "
            f"{feeds:,} feeds, {outbox:,} outbox rows, {recipients} mail recipients "
            f"(grown in {grow_s:.1f} s)"
        )
    header = ["measure", "per item", *(f"{m}x" for m in MULTIPLES)]
    header += [f"{MULTIPLES[-1]}x/1x", "target", "verdict"]
    for line in table(header, [row.cells(small) for row in rows.values()]):
        print(line)
    print(
        "  asserted equal at "
        + "/".join(f"{m}x" for m in MULTIPLES)
        + ": queries per planet "
        + "/".join(str(q[0]) for q in queries)
        + ", per dashboard "
        + "/".join(str(q[1]) for q in queries)
        + f", per tally (of {turn_notes} notes) "
        + "/".join(str(q[2]) for q in queries)
    )
    print(
        f"  poll passes: {poll_counts.not_modified:,} x 304 with 0 parses and 0 entry writes;"
        f" {poll_counts.changed:,} changed feeds with {poll_counts.changed_parses:,} parses and"
        f" {poll_counts.changed_writes:,} entry + revision rows; async pass,"
        f" {fetcher.max_per_host} per host"
    )
    if small:
        print(
            f"  * small scale ({scale.hosts_per_unit * scale.feeds_per_host} feeds and"
            f" {scale.turns} turns a unit): too little work per step for the ratios to mean much"
        )
    print(
        f"  whole run {time.perf_counter() - run_start:.1f} s; load average now "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )

    search_figures(rows)
    assert all(q == queries[0] for q in queries), f"queries per page grew: {queries}"

"""Noteworthy played on blogs: polling and ingest, the hosted blog, turns and their cadence,
the tally, play checks and the pages' reads (planet, history, turn page, dashboard)."""

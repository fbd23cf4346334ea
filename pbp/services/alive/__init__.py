"""Keeping a game alive for weeks (issue #30 items 1-3): nudges before and after a deadline
(`nudges`), the referee's activity check (`activity`), players' absences (`hiatus`), and
the campaign's settings for them (`plan`)."""

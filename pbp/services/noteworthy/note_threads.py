"""Threaded notes (issue #29 item 3): a note may answer another note of the same entry.

The entry's page shows each reply under the note it answers, in the order they were
written; indentation stops at `MAX_DEPTH` levels, so a thread forty replies deep still
reads on a 320 px phone (deeper replies sit at the last level, after their parent).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, select

from pbp.errors import NotFound
from pbp.models import Entry, Note

MAX_DEPTH = 3


@dataclass(frozen=True)
class ThreadedNote:
    note: Note
    depth: int  # 0 for a note on the entry; at most MAX_DEPTH


def threaded(notes: Sequence[Note]) -> list[ThreadedNote]:
    """`notes` (one entry's, in the order to show siblings) as threads: each note followed
    by its replies, depth first. A reply whose parent is not among them (not read yet)
    stands on the entry. Iterative, so no thread is too deep to show."""
    ids = {note.id for note in notes}
    replies: dict[int | None, list[Note]] = defaultdict(list)
    for note in notes:
        parent = note.parent_note_id if note.parent_note_id in ids else None
        replies[parent].append(note)
    shown: list[ThreadedNote] = []
    stack = [(note, 0) for note in reversed(replies[None])]
    seen: set[int | None] = set()
    while stack:
        note, depth = stack.pop()
        seen.add(note.id)
        shown.append(ThreadedNote(note, min(depth, MAX_DEPTH)))
        stack.extend((reply, depth + 1) for reply in reversed(replies[note.id]))
    # Notes whose parents answer each other (a feed's nonsense) reach no note on the entry:
    # shown on it rather than lost.
    shown += [ThreadedNote(note, 0) for note in notes if note.id not in seen]
    return shown


def parent_note(*, session: Session, entry: Entry, note_id: int) -> Note:
    """The note `note_id` of `entry`, which a reply answers; NotFound if it is not one of
    this entry's notes (a reply stays on the entry of the note it answers)."""
    note = session.exec(select(Note).where(Note.id == note_id, Note.entry_id == entry.id)).first()
    if note is None:
        raise NotFound("there is no such note on this entry to reply to")
    return note

"""A refused form comes back: the same form, the text as typed, the reason, status 422.

A refusal a person can fix by changing what they sent (pbp's `UserError` and `Conflict`,
the rules' refusals: statuses 400 and 409) is shown on the form it came from rather than
on a bare error page, so nothing typed is lost. The page answers 422 (the form was
understood and refused); refusals that are not about the form (403, 404, 410) keep their
own status and page. The API keeps its own statuses: this is the pages' convention only.
"""

from __future__ import annotations

#: The status of a form shown again with its refusal.
REFUSED_FORM = 422

#: The refusals a person can fix by changing the form.
FIXABLE = frozenset({400, 409, 422})


def shown_with_form(exc: BaseException) -> bool:
    """Whether this refusal is shown on the form it came from (else it propagates)."""
    return getattr(exc, "status", None) in FIXABLE

"""A refused form comes back: the same form, the text as typed, the reason, and the
refusal's own status, the one the API answers for the same refusal.

A refusal a person can fix by changing what they sent or waiting (pbp's `UserError`,
`Conflict`, the rules' refusals) is shown on the form it came from rather than on a bare
error page, so nothing typed is lost. The status follows the one mapping of
pbp.errors.REFUSAL_STATUSES on both faces (issue #35 item 5): 422 refused for what it asks,
409 the state forbids it now, 400 the request cannot be read. Refusals that are not about
the form (403, 404, 410) keep their own status and page.
"""

from __future__ import annotations

#: The status of a form its own checks refuse (wtforms' validation): refused for what it asks.
REFUSED_FORM = 422

#: The refusals a person can fix by changing the form.
FIXABLE = frozenset({400, 409, 422})


def shown_with_form(exc: BaseException) -> bool:
    """Whether this refusal is shown on the form it came from (else it propagates)."""
    return getattr(exc, "status", None) in FIXABLE


def refused_status(exc: BaseException) -> int:
    """The status a refused form is shown with: the refusal's own (as the API answers)."""
    status = getattr(exc, "status", REFUSED_FORM)
    return status if status in FIXABLE else REFUSED_FORM

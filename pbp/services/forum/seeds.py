"""A forum campaign's secret dice seed, made with the campaign (issue #35 item 1).

"Its SHA-256 is published when a campaign starts, before any roll is made"
(`pbp.rules.dice.source`): the seed and its commitment are made in the transaction that
creates the campaign, so the commitment is on the forum's front page and in the API
(`GET /campaigns/<slug>/forum`) before anyone can post a roll. Campaigns made before this
got theirs in migration 0013. This module imports no other service, so `campaigns` can
call it.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from pbp.models import Campaign
from pbp.models.forum import CampaignSecret
from pbp.rules import dice

SEED_BYTES = 32
FORUM_RULESETS = ("one", "noir", "sex-and-violence", "one-can-have-her")


def new_secret(*, campaign: Campaign, now: datetime) -> CampaignSecret:
    """A fresh seed from `secrets` and its SHA-256 commitment, for the caller to store."""
    seed = secrets.token_bytes(SEED_BYTES)
    return CampaignSecret(
        campaign_id=campaign.id,
        seed=seed.hex(),
        commitment=dice.seed_commitment(seed),
        created_at=now,
    )

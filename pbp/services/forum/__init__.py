"""Forum campaigns (ONE, Noir, and the card games' threads): scenes and posts, rolls, sheets."""

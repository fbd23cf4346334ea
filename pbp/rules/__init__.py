"""Pure rules code: no database, clock, network or global randomness in here."""

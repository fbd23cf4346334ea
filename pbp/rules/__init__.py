"""Pure rules code: no database, clock, network or global randomness in here.

`RULESETS` maps a campaign's ruleset name to its rules module (a dict, no plugin
framework). Noteworthy is played on blogs; the others as forum threads.
"""

from pbp.rules import noir, noteworthy, one, one_can_have_her, sex_and_violence

RULESETS = {
    "noteworthy": noteworthy,
    "one": one,
    "noir": noir,
    "sex-and-violence": sex_and_violence,
    "one-can-have-her": one_can_have_her,
}

"""The named, versioned rules profile the bot judges by when the checkout's own export tests do not (docs/runner.md).

The profile is the seed's rules: the scope walk (bot/scopes.py), the comparisons (bot/run/judge.py)
and the gates (bot/run/gates.py). A later upstream version of the rules is a new profile name with
its data and one module beside these, recorded per cell as the `judge` property.
"""

RULES_PROFILE = "seed-1"

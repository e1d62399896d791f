"""The named, versioned rules profiles the bot judges by when the checkout's own export tests do not (docs/rules.md).

A profile is the scope walk (bot/scopes.py), the comparisons (bot/run/judge.py) and the gates
(bot/run/gates.py). `seed-1` is the seed's rules as they were: output names only on the generate
path of ONNX and OpenVINO, output counts only on ExecuTorch. `values-1` compares values on every
backend and path at upstream's newest tolerances, and the greedy token ids of every generate
component. A profile is recorded per cell as the `judge` property (`rules:values-1`).
"""

PROFILES = ("values-1", "seed-1")
RULES_PROFILE = "values-1"  # the default: `[tool.export-bot] rules = "seed-1"` keeps the seed's


def judge_name(profile: str) -> str:
    """The cell's `judge` property for a rules profile."""
    return f"rules:{profile}"

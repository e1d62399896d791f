"""Publishing to GitHub: the sticky comment, the status, `/export-check` commands, baselines and skiplist PRs."""

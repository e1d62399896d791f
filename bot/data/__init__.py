"""Package data: the default skiplists, the runner's pinned versions (constraints-runner.txt) and the recorded cell times (cell_seconds.json)."""

"""Package data: the default skiplists and the runner's pinned versions (constraints-runner.txt)."""

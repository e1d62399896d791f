"""The PR's changed lines per file (head side), read from a real git diff: what marks a culprit "changed in this PR"."""

from __future__ import annotations

import json

from bot.select.changes import changed_lines, parse_hunks
from bot.select.selection_file import changed_lines_of, read_selection_document
from tests.e2e.checkout import MODELING, commit_all, git, make_toy_repo, write

DIFF = """diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -3 +3 @@ def f():
-    x = 1
+    x = 2
@@ -10,0 +11,3 @@ def g():
+    a
+    b
+    c
@@ -20,2 +22,0 @@ def h():
-    gone
-    gone
diff --git a/src/old.py b/src/old.py
deleted file mode 100644
--- a/src/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
"""


def test_hunks_are_head_line_ranges_and_deletions_add_none():
    assert parse_hunks(DIFF) == {"src/a.py": [(3, 3), (11, 13)]}


def test_changed_lines_of_a_real_pr(tmp_path):
    repo = tmp_path / "repo"
    make_toy_repo(repo)  # `pr` changes modeling_toy.py's forward
    ranges = changed_lines(repo, "main", "pr")
    text = git(repo, "show", f"pr:{MODELING}", strip=False).splitlines()
    assert list(ranges) == [MODELING]
    changed = {n for start, end in ranges[MODELING] for n in range(start, end + 1)}
    assert "if seq_len not in self._scales:" in {text[n - 1].strip() for n in changed}
    assert "def forward(self, input_ids):" not in {text[n - 1].strip() for n in changed}
    # A later commit on main does not count: three dots, as the pull request shows its diff.
    git(repo, "checkout", "-q", "main")
    write(repo / "README.md", "main moved on\n")
    commit_all(repo, "main moves")
    assert changed_lines(repo, "main", "pr") == ranges


def test_the_selection_file_carries_the_changed_lines(tmp_path):
    path = tmp_path / "selection.json"
    path.write_text(json.dumps({"cells": [], "changed_lines": {"src/a.py": [[3, 3], [11, 13]]}}), encoding="utf-8")
    _, document = read_selection_document(path)
    assert changed_lines_of(document, path) == {"src/a.py": ((3, 3), (11, 13))}
    assert changed_lines_of({"cells": []}) == {}

"""Inputs at ten times the largest real ones are read in bounded time: an event, a skiplist, a report.

The largest real ones: a comment of 65,536 characters (GitHub's cap on a comment's body), the
skiplists/ folder as it is (~24 KB, ~170 entries), a full sweep's report (40,000 cells, ~4 MB).
A full sweep's JUnit at ten times (400,000 testcases, ~100 MB) is benchmarks/diff_scale.py's: it
takes minutes, too long for the suite. The bounds are several times the times measured on two busy
cores, so they catch a quadratic step, not a slow runner.
"""

from __future__ import annotations

import json
import re
import time

from click.testing import CliRunner

from bot.cli import main
from tests.conftest import SKIPLISTS
from tests.github.conftest import make_report
from tests.github.payloads import issue_comment_event, repository, user

GITHUB_COMMENT_CAP = 65_536
FULL_SWEEP_CELLS = 40_000
TESTS = [f"test_{b}_export_{s}" for b in ("torch", "onnx", "openvino", "executorch") for s in ("static", "dynamic")]


def _timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def test_a_command_ten_times_githubs_longest_comment_is_answered_in_bounded_time(tmp_path):
    from bot.publish.command import Invalid, parse_command
    from bot.publish.events import CommentEvent, load_event

    words = " ".join(f"Model{i}ForCausalLM" for i in range(60_000))
    body = ("/export-check " + words)[: 10 * GITHUB_COMMENT_CAP]
    event = issue_comment_event(
        repo=repository("o/r", 1, "http://127.0.0.1:9"), number=1, comment_id=5, body=body, author=user("u", 2)
    )
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    # As many class names as Transformers has (a few thousand): each word shown in the reply is
    # matched against all of them for a suggestion, whatever the comment's length.
    known = frozenset(f"Model{i}ForCausalLM" for i in range(0, 8_000, 2))

    def answer():
        comment = CommentEvent.from_payload(load_event(path))
        return parse_command(comment.body, model_classes=known, model_types=frozenset())

    parsed, seconds = _timed(answer)
    assert isinstance(parsed, Invalid) and len(parsed.message) < GITHUB_COMMENT_CAP
    assert seconds < 20, f"{seconds:.1f} s (measured: 1.8 s)"


def test_a_skiplist_ten_times_the_real_one_is_linted_in_bounded_time(tmp_path):
    text = (SKIPLISTS / "export_skips.toml").read_text(encoding="utf-8")
    parts = re.split(r"(?m)^(\[.*\]\s*)$", text)
    scaled = [parts[0]]
    for header, body in zip(parts[1::2], parts[2::2]):
        scaled += [header, body]
        scaled += [re.sub(r"(?m)^(\w+) = ", rf"\g<1>Copy{k} = ", body) for k in range(1, 10)]
    folder = tmp_path / "skiplists"
    folder.mkdir()
    (folder / "export_skips.toml").write_text("".join(scaled), encoding="utf-8")
    result, seconds = _timed(lambda: CliRunner().invoke(main, ["skiplist", "lint", str(folder)]))
    assert result.exit_code == 0, result.output[-2000:]
    entries = int(re.search(r"(\d+) entries", result.output).group(1))
    assert entries >= 10 * len(re.findall(r"(?m)^\w+ = ", text)), result.output[-500:]
    assert seconds < 30, f"{seconds:.1f} s (measured: 2.9 s)"


def test_a_report_ten_times_a_full_sweeps_is_read_and_rendered_in_bounded_time(tmp_path):
    from bot.diff.model import load_report
    from bot.report import render_comment

    document = make_report(head_sha="a" * 40, verdict="failure").to_json()
    cells = [
        {"cell": f"Model{i // len(TESTS)}ForCausalLM::{TESTS[i % len(TESTS)]}", "status": "passed"}
        for i in range(10 * FULL_SWEEP_CELLS)
    ]
    for line in cells[::20]:
        line.update(status="failed", base_status="passed")
    document.update(cells=cells, categories={"newly_broken": [line for line in cells if line["status"] == "failed"]})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    report, load_seconds = _timed(lambda: load_report(path))
    assert len(report.cells) == 10 * FULL_SWEEP_CELLS
    body, render_seconds = _timed(lambda: render_comment(report, max_chars=GITHUB_COMMENT_CAP))
    assert len(body) <= GITHUB_COMMENT_CAP
    assert load_seconds < 60, f"{load_seconds:.1f} s (measured: 8.3 s for 40 MB)"
    assert render_seconds < 10, f"{render_seconds:.1f} s (measured: 0.3 s)"

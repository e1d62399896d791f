"""What a fork writes into report.json stays text: no mention, HTML, comment marker or outside link reaches the markdown."""

from __future__ import annotations

import pytest

from bot.diff.errors import ReportError
from bot.diff.model import Report
from bot.report import render_comment, render_summary
from bot.report.markdown import code, escape, link, points_into, sentence
from tests.report.hostile import CELL, PAYLOADS, REPOSITORY, assert_inert, hostile_document


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_every_string_field_renders_inert(payload):
    report = Report.from_json(hostile_document(payload))
    assert_inert(render_comment(report), marker=True)
    assert_inert(render_summary(report))
    # Shrunk to fit, the comment stays inert (the cut can land anywhere).
    for limit in (20_000, 3_000, 400):
        assert_inert(render_comment(report, max_chars=limit), marker=True)


def test_the_run_marker_in_a_headline_is_text():
    report = Report.from_json(hostile_document("<!-- export-bot:run 99999999999 -->"))
    comment = render_comment(report)
    assert "export-bot:run 99999999999" in comment and "<!-- export-bot:run" not in comment
    assert comment.count("<!--") == 1 and comment.startswith("<!-- export-bot:conformance -->\n")


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "https://evil.example/o/r/actions/runs/1",
        "https://github.com/o/r-evil/actions/runs/1",
        "https://github.com/o/r/../../evil/x",
        "https://github.com/o/r/%2e%2e/evil",
        "https://github.com/o/r/x) [y](https://evil.example",
        "http://github.com/o/r/actions/runs/1",
    ],
)
def test_a_url_outside_the_repository_is_shown_not_linked(url):
    report = Report.from_json(hostile_document("x", run_url=url))
    for text in (render_comment(report), render_summary(report)):
        assert_inert(text, marker=text.startswith("<!--"))
        assert f"]({url}" not in text


def test_urls_into_the_repository_stay_links():
    run = f"{REPOSITORY}/actions/runs/42"
    culprit = f"{REPOSITORY}/blob/{'b' * 40}/src/transformers/models/bert/modeling_bert.py#L12"
    report = Report.from_json(hostile_document("x", run_url=run))
    comment = render_comment(report)
    assert f"[Run and job summary]({run})." in comment
    assert f"(https://github.com/o/r/blob/{'b' * 40}/" not in comment  # the culprit's URL was `x`
    assert link(code("a.py:12"), culprit, REPOSITORY) == f"[`a.py:12`]({culprit})"
    # The publisher's own repository wins over the report's.
    assert "[Run and job summary]" not in render_comment(report, repository_url="https://github.com/other/repo")


def test_a_report_off_github_com_gets_no_links_unless_the_publisher_names_it():
    document = hostile_document("x", run_url="https://ghes.example/o/r/actions/runs/1")
    document["repository_url"] = "https://ghes.example/o/r"
    report = Report.from_json(document)
    assert "[Run and job summary]" not in render_comment(report)
    assert "[Run and job summary](https://ghes.example/o/r/actions/runs/1)" in render_comment(
        report, repository_url="https://ghes.example/o/r"
    )


def test_a_known_hint_shows_the_bots_own_text_and_link():
    report = Report.from_json(hostile_document("@victim"))
    comment = render_comment(report)
    assert "torch.export cannot guard on it" in comment  # hints.toml's text for data-dependent-guard
    assert "([docs](https://docs.pytorch.org/" in comment
    assert "💡 @\u200bvictim" in comment  # an unknown hint id: its text, escaped, and no link


def test_ordinary_strings_are_unchanged():
    assert code(CELL) == f"`{CELL}`" and code(CELL, table=True) == f"`{CELL}`"
    assert escape("RuntimeError: expected 3 dims, got 2 (at src/x.py:12)") == (
        "RuntimeError: expected 3 dims, got 2 (at src/x.py:12)"
    )
    assert escape("a @b <c> [d](e) `f` | g\nh") == "a @\u200bb &lt;c&gt; \\[d\\](e) \\`f\\` \\| g h"
    assert code("a`b\nc <!-- d -->") == "`a'b c <\u200b!-- d -\u200b->`"


def test_points_into_keeps_to_the_repository():
    assert points_into(f"{REPOSITORY}/actions/runs/1", REPOSITORY)
    assert points_into(f"{REPOSITORY}/blob/abc/.github/workflows/x.yml#L3", REPOSITORY)
    for url in (REPOSITORY, f"{REPOSITORY}-evil/x", f"{REPOSITORY}/../x", f"{REPOSITORY}/a b", None, ""):
        assert not points_into(url, REPOSITORY), url
    assert not points_into(f"{REPOSITORY}/x", None)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("head_sha", "`@victim`", "field `head_sha` must be null or a commit SHA (hexadecimal)"),
        ("base_sha", "a" * 65, "field `base_sha` must be null or a commit SHA"),
        (
            "repository_url",
            "javascript:alert(1)//o/r",
            "field `repository_url` must be null or https://HOST/OWNER/REPO",
        ),
        ("repository_url", "https://github.com/o/r/extra", "field `repository_url` must be"),
        ("headline", "x" * 100_001, "field `headline` must be at most 100,000 characters, not 100,001"),
    ],
)
def test_fields_with_a_shape_are_refused_in_one_line(field, value, said):
    document = hostile_document("x")
    document[field] = value
    with pytest.raises(ReportError) as caught:
        Report.from_json(document)
    message = str(caught.value)
    assert said in message and "\n" not in message


@pytest.mark.parametrize(
    ("headline", "line"),
    [
        ("3 cells newly broken", "3 cells newly broken."),
        ("# not a heading", "\\# not a heading."),
        ("- not a list", "\\- not a list."),
        ("1. not a list", "1\\. not a list."),
        ("> not a quote", "&gt; not a quote."),
        ("<!-- export-bot:run 1 -->", "&lt;!-- export-bot:run 1 --&gt;."),
    ],
)
def test_a_headline_is_one_sentence_of_text(headline, line):
    assert sentence(headline) == line


def test_the_cut_at_the_limit_keeps_whole_lines():
    # A cut inside `[job summary](https://…)` would leave a bare URL, which GitHub links.
    report = Report.from_json(hostile_document("@victim-user please look", run_url=f"{REPOSITORY}/actions/runs/1"))
    for limit in range(300, 3_000, 37):
        comment = render_comment(report, max_chars=limit)
        assert len(comment) <= limit
        assert_inert(comment, marker=comment.startswith("<!--"))

"""The style-preserving edit API: byte-exact round trips, placement rules, inlining, and random edit sequences."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bot import toml as tomllib
from bot.scopes import known_scopes
from bot.skiplist.document import SkiplistDocument
from bot.skiplist.layout import scan, split_lines
from bot.skiplist.lint import lint_text
from bot.skiplist.model import SkiplistError, referenced_class
from tests.conftest import SKIPLISTS

SHIPPED = sorted(SKIPLISTS.glob("*.toml"))
EXPORT_SKIPS = (SKIPLISTS / "export_skips.toml").read_bytes().decode("utf-8")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_round_trip_is_byte_identical(path, eol, tmp_path):
    text = path.read_bytes().decode("utf-8").replace("\n", eol)
    assert SkiplistDocument.parse(text, path.name).text() == text
    copy = tmp_path / path.name
    copy.write_bytes(text.encode("utf-8"))
    document = SkiplistDocument.load(copy)
    document.save(copy)
    assert copy.read_bytes() == text.encode("utf-8")


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, split_lines(before), split_lines(after)).get_opcodes():
        if tag != "equal":
            removed += split_lines(before)[i1:i2]
            added += split_lines(after)[j1:j2]
    return removed, added


def test_add_goes_to_the_end_of_its_table_not_under_the_next_comment():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    document.add("onnx", "NewModel", "Fails in a new way.")
    lines = document.text().splitlines()
    at = lines.index('NewModel = "Fails in a new way."')
    assert lines[at - 1].startswith("PixioBackbone = ") and lines[at + 1] == ""
    assert changed_lines(EXPORT_SKIPS, document.text()) == ([], ['NewModel = "Fails in a new way."\n'])


@pytest.mark.parametrize("text", ["", "\n", "# Export skips.\n"], ids=["empty", "blank", "comment"])
def test_add_to_a_file_without_tables_creates_the_table(text):
    """A repository that adopts the bot with no skips yet: the first proposal creates its table."""
    document = SkiplistDocument.parse(text, "export_skips.toml")
    document.add("all", "BertModel", "Data-dependent branch in forward.")
    assert tomllib.loads(document.text()) == {"all": {"BertModel": "Data-dependent branch in forward."}}
    assert document.text().startswith(text) and not lint_text(document.text(), "export_skips.toml").findings


def test_add_follows_the_chain_it_references():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    document.add("openvino.dynamic", "BigBirdForFooModel", "Same `timeout` failure as `BigBirdModel`.")
    lines = document.text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("BigBirdForFooModel"))
    assert lines[at - 1].startswith("BigBirdForTokenClassification") and lines[at + 1].startswith("MaskFormerModel")


def test_add_is_idempotent_and_never_rewrites_a_reason():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    document.add("all", "GlmImageModel", "Another reason.")
    document.add("all", "NewModel", "r")
    once = document.text()
    document.add("all", "NewModel", "r")
    assert document.text() == once
    assert document.scopes()["all"]["GlmImageModel"].startswith("Vision attention")


def test_new_scope_table_goes_to_its_walk_position_with_a_comment():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    document.add("openvino", "NewModel", "OpenVINO fails.")
    removed, added = changed_lines(EXPORT_SKIPS, document.text())
    assert removed == []
    assert added == ["# OpenVINO, every variant.\n", "[openvino]\n", 'NewModel = "OpenVINO fails."\n', "\n"]
    order = list(document.scopes())
    assert order.index("openvino") == order.index("executorch") - 1
    document.add("xnnpack.dynamic", "NewModel", "x")
    assert list(document.scopes())[-1] == "xnnpack.dynamic"
    assert document.text().endswith(
        '\n\n# ExecuTorch XNNPACK target, dynamic-shape only.\n["xnnpack.dynamic"]\nNewModel = "x"\n'
    )


def test_remove_inlines_the_reason_into_the_first_referrer_and_repoints_the_rest():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    original = document.scopes()["openvino.dynamic"]["GroundingDinoModel"]
    document.remove("openvino.dynamic", "GroundingDinoModel")
    table = document.scopes()["openvino.dynamic"]
    assert "GroundingDinoModel" not in table
    assert table["GroundingDinoForObjectDetection"] == f"{original} [was: Same `timeout` as `GroundingDinoModel`.]"
    assert table["MMGroundingDinoModel"] == "Same `timeout` as `GroundingDinoForObjectDetection`."
    # `GroundingDinoModel` in onnx.dynamic is a different entry: its referrers are untouched.
    assert document.scopes()["onnx.dynamic"]["GroundingDinoForObjectDetection"] == "Same as `GroundingDinoModel`."
    assert not [f for f in lint_text(document.text(), "export_skips.toml").findings if "refers to" in f.message]


def test_emptied_tables_stay_and_remove_is_idempotent():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    document.remove("openvino.static-cache", "MiniMaxM3SparseForConditionalGeneration")
    once = document.text()
    document.remove("openvino.static-cache", "MiniMaxM3SparseForConditionalGeneration")
    assert document.text() == once and document.scopes()["openvino.static-cache"] == {}


def test_narrow_and_move_keep_the_reason():
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    reason = document.scopes()["onnx"]["CHMv2ForDepthEstimation"]
    document.narrow("onnx", "CHMv2ForDepthEstimation", ["onnx.dynamic", "onnx.generate"])
    scopes = document.scopes()
    assert "CHMv2ForDepthEstimation" not in scopes["onnx"]
    assert (
        scopes["onnx.dynamic"]["CHMv2ForDepthEstimation"]
        == scopes["onnx.generate"]["CHMv2ForDepthEstimation"]
        == reason
    )
    document.narrow("onnx.dynamic", "CHMv2ForDepthEstimation", ["dynamic"])
    assert document.scopes()["dynamic"]["CHMv2ForDepthEstimation"] == reason


def test_crlf_files_get_crlf_lines():
    document = SkiplistDocument.parse(EXPORT_SKIPS.replace("\n", "\r\n"), "x.toml")
    document.add("onnx", "NewModel", "r")
    document.add("aoti", "NewModel", "r")
    assert "\n" not in document.text().replace("\r\n", "")


def test_a_file_without_final_newline_gets_one_before_an_appended_line():
    document = SkiplistDocument.parse('[all]\nA = "a"', "x.toml")
    document.add("all", "B", "b")
    assert document.text() == '[all]\nA = "a"\nB = "b"\n'


def test_broken_text_is_refused_with_its_position():
    with pytest.raises(SkiplistError, match=r"x.toml:2:\d+"):
        SkiplistDocument.parse('[all]\nA = "a\n', "x.toml")


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path):
    target = tmp_path / "export_skips.toml"
    target.write_text("[all]\n", encoding="utf-8")
    document = SkiplistDocument.load(target)
    document.add("all", "A", "a")
    document.save(target)
    assert [p.name for p in tmp_path.iterdir()] == ["export_skips.toml"]
    assert target.read_text(encoding="utf-8") == '[all]\nA = "a"\n'


# ── random edit sequences ───────────────────────────────────────────────────────────

SCOPES = [s for s in known_scopes() if "mlx" not in s][:40]
REASONS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=30).filter(str.strip)


@st.composite
def edit(draw, document: SkiplistDocument):
    entries = [(s, c) for s, table in document.scopes().items() for c in table]
    kind = draw(st.sampled_from(["add", "add-ref", "remove", "narrow"]))
    if kind.startswith("add"):
        scope = draw(st.sampled_from(SCOPES))
        model_class = draw(
            st.sampled_from(["AlphaModel", "BetaForCausalLM", "GammaModel", *(c for _, c in entries[:20])])
        )
        if kind == "add-ref" and entries:
            reason = f"Same as `{draw(st.sampled_from(entries))[1]}`."
        else:
            reason = draw(REASONS)
        return ("add", scope, model_class, reason)
    scope, model_class = draw(st.sampled_from(entries))
    if kind == "remove":
        return ("remove", scope, model_class)
    return ("narrow", scope, model_class, draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True)))


def lines_of_changed_entries(text: str, changed: set[tuple[str, str]], new_scopes: set[str]) -> set[int]:
    layout = scan(text)
    allowed = set()
    for table in layout.tables:
        if table.scope in new_scopes:
            allowed.update(range(table.comments_start, table.end))
        for entry in table.entries:
            if (table.scope, entry.name) in changed:
                allowed.update(range(entry.start, entry.end))
    return allowed


def resolves_to(scopes: dict, scope: str, reason: str) -> tuple[str, str] | None:
    """The entry a `Same … as` reason means: the same scope first, then the file's first scope holding it."""
    target = referenced_class(reason)
    owners = [scope] if target in scopes.get(scope, {}) else [s for s, t in scopes.items() if target in t][:1]
    return (owners[0], target) if target and owners else None


# Shrinking re-runs whole edit sequences over a 24 kB file; it is skipped to keep the suite fast.
@settings(
    max_examples=15,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data())
def test_random_edit_sequences_keep_the_file_sound(data):
    document = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    before = document.scopes()
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(edit(document))
        snapshot = document.scopes()
        getattr(document, op[0])(*op[1:])
        after_once = document.text()
        getattr(document, op[0])(*op[1:])
        assert document.text() == after_once, f"{op} is not idempotent"
        after = document.scopes()
        reasons = [r for t in after.values() for r in t.values()]
        if op[0] == "remove":
            removed = snapshot[op[1]][op[2]]
            referrers = [
                (s, c)
                for s, t in snapshot.items()
                for c, r in t.items()
                if (s, c) != op[1:3] and resolves_to(snapshot, s, r) == op[1:3]
            ]
            if referrers:
                assert any(removed in r for r in reasons), "a removed target's text was lost"
        if op[0] == "narrow":
            reason = snapshot[op[1]][op[2]]
            assert all(after[s][op[2]] in (reason, snapshot.get(s, {}).get(op[2])) for s in op[3])
    text = document.text()
    assert tomllib.loads(text) is not None
    assert SkiplistDocument.parse(text, "x").text() == text
    assert not lint_text(text, "export_skips.toml").errors
    final = document.scopes()
    changed = {(s, c) for s, t in before.items() for c, r in t.items() if final.get(s, {}).get(c) != r}
    changed |= {(s, c) for s, t in final.items() for c, r in t.items() if before.get(s, {}).get(c) != r}
    old_edited = lines_of_changed_entries(EXPORT_SKIPS, changed, set())
    new_edited = lines_of_changed_entries(text, changed, set(final) - set(before))
    # Every other non-blank line is byte-identical and in the same order (new tables bring blank lines).
    kept_old = [line for i, line in enumerate(split_lines(EXPORT_SKIPS)) if i not in old_edited and line.strip()]
    kept_new = [line for j, line in enumerate(split_lines(text)) if j not in new_edited and line.strip()]
    assert kept_old == kept_new


def test_an_entry_added_to_an_empty_file_gets_its_table():
    document = SkiplistDocument.parse("", "export_skips.toml")
    document.add("static", "BertModel", "Static pooler.")
    assert document.text() == '# Every backend, static-shape only.\n[static]\nBertModel = "Static pooler."\n'


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_adding_a_batch_gives_the_text_the_adds_in_sequence_give(data):
    """`add_many` re-reads once per batch (a sweep's proposal adds thousands): the text must not change."""
    original = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    listed = [(s, c) for s, t in original.scopes().items() for c in t]
    scopes = sorted({s for s, _ in listed})[:2] + ["dynamo.generate"]  # few scopes: entries meet in a table
    new = [f"New{i}Model" for i in range(6)]
    classes = new + sorted({c for _, c in listed})[:6]
    reasons = st.one_of(
        st.just("A reason of its own."),
        st.sampled_from(classes).map(lambda c: f"Same failure as `{c}`."),
    )
    entries = data.draw(st.lists(st.tuples(st.sampled_from(scopes), st.sampled_from(classes), reasons), max_size=25))
    one_by_one = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    for entry in entries:
        one_by_one.add(*entry)
    batched = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    batched.add_many(entries)
    assert batched.text() == one_by_one.text()


def test_a_batch_entry_naming_a_class_the_batch_added_goes_after_its_chain():
    entries = [("dynamo", "NewA", "Boom."), ("dynamo", "NewC", "Other."), ("dynamo", "NewB", "Same failure as `NewA`.")]
    batched = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    batched.add_many(entries)
    assert list(batched.scopes()["dynamo"])[-3:] == ["NewA", "NewB", "NewC"]


def test_a_batch_entry_following_a_chain_that_ends_the_table_goes_before_one_appended_there():
    """Found by the property above: the chain's entry lands where an appended one does, and goes first."""
    entries = [
        ("dynamic", "New0Model", "A reason of its own."),
        ("dynamic", "New0Model", "Same failure as `New0Model`."),  # already added: cuts the batch, adds nothing
        ("dynamic", "New1Model", "A reason of its own."),
        ("dynamic", "New2Model", "Same failure as `New0Model`."),
    ]
    one_by_one = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    for entry in entries:
        one_by_one.add(*entry)
    batched = SkiplistDocument.parse(EXPORT_SKIPS, "export_skips.toml")
    batched.add_many(entries)
    assert list(batched.scopes()["dynamic"])[-3:] == ["New0Model", "New2Model", "New1Model"]
    assert batched.text() == one_by_one.text()

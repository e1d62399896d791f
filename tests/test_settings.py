"""`[tool.export-bot]` settings: defaults, the schema (types, ranges, unknown keys), paths relative to the pyproject."""

from __future__ import annotations

import logging
from dataclasses import fields
from pathlib import Path

import pytest

from bot.cli.common import DEFAULT_SKIPLISTS, BotError, resolve_skiplists
from bot.settings import SCHEMA, Settings, SettingsError, load_settings


def write(tmp_path, body: str):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.export-bot]\n{body}\n")
    return path


def test_no_pyproject_gives_the_defaults(tmp_path):
    assert load_settings(tmp_path / "pyproject.toml") == Settings()


def test_paths_and_checkout_sources_are_relative_to_the_pyproject(tmp_path):
    settings = load_settings(write(tmp_path, 'skiplists = "lists"\nsource = "transformers-tests:."'))
    assert settings.skiplists == tmp_path / "lists"
    assert settings.source == f"transformers-tests:{tmp_path.resolve()}"
    assert settings.configured == {"skiplists", "source"}


@pytest.mark.parametrize(
    "body, message",
    [
        ("dependents = 'yes'", "dependents must be true or false, not a string ('yes')"),
        ("core = 'BertModel'", "core must be a list of non-empty strings"),
        ("core = ['BertModel', 3]", "core must be a list of non-empty strings"),
        ("skiplists = 5", "skiplists must be a non-empty string, not a number (5)"),
        ("skiplists = ''", "skiplists must be a non-empty string"),
        ("source = 'zo'", "source must be 'zoo' or 'transformers-tests:PATH', not 'zo'"),
        ("source = 'transformers-tests:'", "source must be 'zoo' or 'transformers-tests:PATH'"),
        ("cell-timeout = 0", "cell-timeout must be above 0 and at most 604800, not 0"),
        ("cell-timeout = 'long'", "cell-timeout must be a finite number, not a string"),
        ("cell-timeout = nan", "cell-timeout must be a finite number"),
        ("cell-timeout = inf", "cell-timeout must be above 0 and at most 604800, not inf"),
        ("min-passes = 0", "min-passes must be at least 1 and at most 100, not 0"),
        ("min-passes = true", "min-passes must be a whole number, not a boolean"),
        ("github-timeout = 30.5", "github-timeout must be a whole number, not a decimal number (30.5)"),
        ("github-retries = -1", "github-retries must be at least 0 and at most 50, not -1"),
        ("github-backoff = [1]", "github-backoff must be a finite number, not a list"),
        ("min-passes = 2\nmin_passes = 3", "sets `min-passes` and `min_passes`: keep one of them"),
    ],
)
def test_each_key_has_a_type_and_a_range(tmp_path, body, message):
    with pytest.raises(SettingsError) as raised:
        load_settings(write(tmp_path, body))
    assert str(raised.value).startswith(f"{tmp_path / 'pyproject.toml'}: [tool.export-bot] ")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_numbers_in_range_are_kept_with_their_type(tmp_path):
    settings = load_settings(write(tmp_path, "cell-timeout = 30\nmin-passes = 5\ngithub-backoff = 0.5"))
    assert settings.cell_timeout == 30.0 and isinstance(settings.cell_timeout, float)
    assert settings.min_passes == 5 and settings.github_backoff == 0.5
    assert settings.configured == {"cell_timeout", "min_passes", "github_backoff"}


def test_every_setting_has_a_schema_entry():
    assert set(SCHEMA) == {f.name for f in fields(Settings)} - {"configured"}


@pytest.mark.parametrize(
    "key, hint",
    [("skiplist", "did you mean `skiplists`?"), ("min-pass", "did you mean `min-passes`?"), ("zzz", "known keys: ")],
)
def test_an_unknown_key_warns_with_the_closest_known_one(tmp_path, caplog, key, hint):
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        settings = load_settings(write(tmp_path, f"{key} = 1\nmin-passes = 4"))
    assert settings.min_passes == 4
    [record] = caplog.records
    assert f"unknown key `{key}` in [tool.export-bot] is ignored" in record.getMessage()
    assert hint in record.getMessage()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[tool]\nexport-bot = 5\n", "`tool.export-bot` must be a table"),
        ("tool = 'x'\n", "`tool` must be a table"),
        ("[tool.export-bot\n", "not valid TOML"),
        ("[tool.export-bot]\nsource = '\xff'\n".encode("latin-1"), "not UTF-8 text"),
    ],
)
def test_a_pyproject_that_is_not_a_table_of_settings_is_refused(tmp_path, text, message):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(BotError, match=message):
        load_settings(path)


def test_a_configured_skiplist_folder_that_is_missing_is_an_error(tmp_path):
    settings = load_settings(write(tmp_path, 'skiplists = "lists"'))
    with pytest.raises(BotError, match="does not exist"):
        resolve_skiplists(None, settings)
    (tmp_path / "lists").mkdir()
    assert resolve_skiplists(None, settings) == tmp_path / "lists"


def test_without_configuration_the_bots_own_skiplists_serve(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_skiplists(None) == DEFAULT_SKIPLISTS
    with pytest.raises(BotError, match="no such skiplist folder"):
        resolve_skiplists(tmp_path / "nope")


def test_backends_are_checked_against_the_four(tmp_path):
    assert load_settings(write(tmp_path, 'backends = ["dynamo"]')).backends == ("dynamo",)
    with pytest.raises(SettingsError, match="must be a list of backends"):
        load_settings(write(tmp_path, 'backends = ["tensorrt"]'))


def test_the_default_skiplists_are_package_data():
    # An installed wheel has them in bot/data (setup.py copies skiplists/ there); a checkout reads skiplists/.
    import bot

    checkout = Path(bot.__file__).resolve().parents[1] / "skiplists"
    assert DEFAULT_SKIPLISTS in (Path(bot.__file__).resolve().parent / "data" / "skiplists", checkout)
    assert (DEFAULT_SKIPLISTS / "export_skips.toml").is_file()


def test_a_moved_skiplist_folder_moves_the_paths_a_skiplist_edit_is_recognised_by(tmp_path):
    from bot.select.rules import classify

    (tmp_path / "tests/exporters/skiplists").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.export-bot]\nskiplists = "tests/exporters/skiplists"\n')
    moved = load_settings(tmp_path / "pyproject.toml")
    assert moved.skiplist_paths == ("tests/exporters/skiplists/*.toml",)
    assert classify("tests/exporters/skiplists/export_skips.toml", moved) == "skiplist"
    assert classify("skiplists/export_skips.toml", moved) == "other"
    assert "skiplist_paths" not in moved.configured  # derived, not set: the base's settings list it as unchanged
    # Set explicitly, `skiplist-paths` wins; a folder outside the repository keeps the default.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.export-bot]\nskiplists = "tests/exporters/skiplists"\nskiplist-paths = ["x/*.toml"]\n'
    )
    assert load_settings(tmp_path / "pyproject.toml").skiplist_paths == ("x/*.toml",)
    (tmp_path / "pyproject.toml").write_text(f'[tool.export-bot]\nskiplists = "{tmp_path.parent}"\n')
    assert load_settings(tmp_path / "pyproject.toml").skiplist_paths == Settings().skiplist_paths

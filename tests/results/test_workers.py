"""Reading files in a forked worker: the same result set as one process, and nothing lost if it dies."""

from __future__ import annotations

import logging
import os
import threading

import pytest

from bot.results import read_results, workers
from tests.results.factory import Case, junit

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker is forked")


def shards(tmp_path, count=6):
    """Shard files with every outcome, one cell repeated across the split, and broken files among them."""
    paths = []
    for index in range(1, count + 1):
        cases = [
            Case(f"Model{index}::test_onnx_export_static", "failed", "E: x", "tb", stage="export"),
            Case(f"Model{index}::test_torch_export_dynamic", "skipped", "why", skip_scope="dynamic"),
            Case(f"Model{index}::test_openvino_export_static", "uncompared", exactness="openvino"),
            Case("SharedModel::test_onnx_export_static"),
        ]
        path = tmp_path / f"junit-{index}.xml"
        path.write_text(junit(cases, shard=f"{index}/{count}"), encoding="utf-8")
        paths.append(path)
    (tmp_path / "empty.xml").write_text("")
    truncated = junit([Case("CutModel::test_onnx_export_static"), Case("CutModel::test_onnx_export_dynamic")])
    (tmp_path / "cut.xml").write_text(truncated[: truncated.index("test_onnx_export_dynamic")])
    return [paths[0], tmp_path / "empty.xml", *paths[1:3], tmp_path / "missing.xml", *paths[3:], tmp_path / "cut.xml"]


@needs_fork
def test_a_worker_reads_to_the_same_result_set_as_one_process(tmp_path):
    files = shards(tmp_path)
    alone, shared = (
        read_results(files, expect_shards=6, parallel=False),
        read_results(files, expect_shards=6, parallel=True),
    )
    assert shared.results == alone.results
    assert [r.source for r in shared.results.values()] == [r.source for r in alone.results.values()]
    assert shared.problems == alone.problems and shared.suites == alone.suites and shared.files == alone.files
    # The first file keeps the shared cell; every later copy is a problem, in file order.
    duplicates = [p for p in shared.problems if "SharedModel" in p.what]
    assert len(duplicates) == 5 and duplicates[0].file.endswith("junit-2.xml")


@needs_fork
def test_a_dead_worker_loses_nothing(tmp_path, monkeypatch, caplog):
    def die(files, sender):
        os._exit(1)  # as if killed: no result, the pipe closes

    monkeypatch.setattr(workers, "_read_all", die)  # the forked worker runs the patched function
    files = shards(tmp_path)
    with caplog.at_level(logging.WARNING):
        shared = read_results(files, expect_shards=6, parallel=True)
    assert "worker died" in caplog.text
    assert shared.results == read_results(files, expect_shards=6, parallel=False).results


def test_the_worker_takes_a_tail_under_its_share():
    assert workers._split([10] * 10) == 6  # 4 of 10 equal files: 40 % ≤ 45 %
    assert workers._split([100, 1, 1, 1]) == 1  # at least one file, even past the share
    assert workers._split([1, 100]) == 1
    assert workers._split([5, 5]) == 1


def test_small_inputs_and_busy_processes_stay_in_one_process(tmp_path, monkeypatch):
    files = shards(tmp_path)
    calls = []
    monkeypatch.setattr(workers, "_split", lambda sizes: calls.append(sizes) or len(sizes))
    read_results(files)  # a few KB: not worth a fork
    assert calls == []
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not workers.can_fork()  # forking beside another thread could copy a held lock
    finally:
        stop.set()
        thread.join()

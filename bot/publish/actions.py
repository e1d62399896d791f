"""GitHub Actions workflow commands, step outputs and the job summary, written to files or a stream given."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO


def _escape_data(text: str) -> str:
    # The workflow-command format (docs: "workflow commands for GitHub Actions"): %, CR and LF escaped.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Actions:
    """Where this job's annotations, outputs and summary go; `from_env()` reads the runner's variables.

    Outside Actions (no `GITHUB_OUTPUT`/`GITHUB_STEP_SUMMARY`) outputs and summary are dropped,
    so the same code runs locally without littering the working tree.
    """

    stream: TextIO
    output_path: Path | None = None
    summary_path: Path | None = None

    @classmethod
    def from_env(cls, stream: TextIO, env: dict | None = None) -> Actions:
        env = os.environ if env is None else env
        output = env.get("GITHUB_OUTPUT")
        summary = env.get("GITHUB_STEP_SUMMARY")
        return cls(stream, Path(output) if output else None, Path(summary) if summary else None)

    def annotate(self, level: str, message: str, *, file: str | None = None, line: int | None = None) -> None:
        """`level` is `error`, `warning` or `notice`."""
        props = ",".join(
            f"{key}={_escape_property(str(value))}" for key, value in (("file", file), ("line", line)) if value
        )
        self.stream.write(f"::{level}{' ' + props if props else ''}::{_escape_data(message)}\n")

    def set_output(self, name: str, value: str) -> None:
        if self.output_path is None:
            return
        # A random heredoc delimiter: a value holding "EOF" (comment text does) cannot end it early.
        delimiter = f"ghadelimiter_{uuid.uuid4().hex}"
        with self.output_path.open("a", encoding="utf-8") as fh:
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

    def write_summary(self, markdown: str) -> bool:
        """Append to the job summary; False when there is no summary file (not on Actions)."""
        if self.summary_path is None:
            return False
        with self.summary_path.open("a", encoding="utf-8") as fh:
            fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
        return True

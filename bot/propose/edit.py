"""One proposed skiplist change: add, remove or narrow an entry, with the cells that justify it."""

from __future__ import annotations

from dataclasses import dataclass

ADD, REMOVE, NARROW = "add", "remove", "narrow"


@dataclass(frozen=True)
class ProposedEdit:
    """`action` on `model_class` under `scope` of skiplist `file`; `evidence` holds cell ids."""

    action: str
    file: str
    scope: str
    model_class: str
    reason: str | None = None  # the drafted reason of an added entry
    new_scopes: tuple[str, ...] = ()  # where a narrowed entry goes
    evidence: tuple[str, ...] = ()  # failing cells for add; cells that now pass for remove/narrow
    still_failing: tuple[str, ...] = ()  # narrow: cells the narrowed entry keeps skipping

    def to_json(self) -> dict:
        data = {"action": self.action, "file": self.file, "scope": self.scope, "model_class": self.model_class}
        if self.reason is not None:
            data["reason"] = self.reason
        if self.new_scopes:
            data["new_scopes"] = list(self.new_scopes)
        data["evidence"] = list(self.evidence)
        if self.still_failing:
            data["still_failing"] = list(self.still_failing)
        return data

    @classmethod
    def from_json(cls, data: dict) -> ProposedEdit:
        return cls(
            action=data["action"],
            file=data["file"],
            scope=data["scope"],
            model_class=data["model_class"],
            reason=data.get("reason"),
            new_scopes=tuple(data.get("new_scopes", ())),
            evidence=tuple(data.get("evidence", ())),
            still_failing=tuple(data.get("still_failing", ())),
        )

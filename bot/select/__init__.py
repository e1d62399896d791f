"""Select stage (docs/selection.md): the cells a pull request must run, from the changed files between two refs."""

from bot.select.pipeline import select_cells
from bot.select.selection import Reason, Selection
from bot.select.selection_file import read_selection, write_selection

__all__ = ["Reason", "Selection", "read_selection", "select_cells", "write_selection"]

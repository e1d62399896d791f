"""Results stage: JUnit files from any producer read into typed cell results (the only JUnit reader)."""

from bot.results.merge import read_results
from bot.results.model import Problem, ResultSet, SuiteInfo

__all__ = ["Problem", "ResultSet", "SuiteInfo", "read_results"]

"""Results stage: JUnit files from any producer read into typed cell results (the one reader of their outcomes; the runner reads only testcase times, for sharding)."""

from bot.results.merge import read_results
from bot.results.model import Problem, Provenance, ResultSet, SuiteInfo

__all__ = ["Problem", "Provenance", "ResultSet", "SuiteInfo", "read_results"]

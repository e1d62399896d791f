"""Run stage: cells in, JUnit out. Importing this package must not import torch (selection uses `shard`)."""

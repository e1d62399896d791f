"""The rehearsal's own files (fixture/) are a Transformers checkout's tests, not tests to collect."""

collect_ignore = ["fixture"]

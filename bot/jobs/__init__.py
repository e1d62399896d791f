"""Jobs: one function per local command and workflow job, composing the stages; the CLI only calls them."""

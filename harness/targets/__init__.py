"""Where the implementation under test comes from, and the commands that run it."""

# padrun as a prefix for every agent harness, in zsh (source it from ~/.zshrc).
# padrun execs the real binary found in PATH, not these functions.
pi()     { padrun -- pi "$@" }
claude() { padrun -- claude "$@" }
codex()  { padrun -- codex "$@" }

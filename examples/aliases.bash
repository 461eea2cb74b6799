# padrun as a prefix for every agent harness, in bash (source it from ~/.bashrc).
# padrun execs the real binary found in PATH, not these functions.
pi()     { padrun -- pi "$@"; }
claude() { padrun -- claude "$@"; }
codex()  { padrun -- codex "$@"; }

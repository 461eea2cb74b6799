# padrun as a prefix for every agent harness, in bash (source it from ~/.bashrc).
# padrun execs the real binary found in PATH, not these functions; 'command pi'
# runs pi bare, and padrun still refuses to start beside it.
pi()       { padrun -- pi "$@"; }
claude()   { padrun -- claude "$@"; }
codex()    { padrun -- codex "$@"; }
gemini()   { padrun -- gemini "$@"; }
qwen()     { padrun -- qwen "$@"; }
copilot()  { padrun -- copilot "$@"; }
opencode() { padrun -- opencode "$@"; }
kilo()     { padrun -- kilo "$@"; }
droid()    { padrun -- droid "$@"; }
omp()      { padrun -- omp "$@"; }
cline()    { padrun -- cline "$@"; }

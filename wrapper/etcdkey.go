package wrapper

import (
	"path/filepath"
	"strings"

	"github.com/padrun/padrun/marker/ident"

	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/wrapper/harness"
)

// EtcdKey is a session's key in etcd, derived alike on every machine
// (docs/spec.md §15): the user's --session-key first, else the harness's
// session id, else the guarded file's absolute path. Every key a run holds,
// and every key status, ls and unlock look at, comes from it.
func EtcdKey(c *etcdhold.Client, sessionKey, id, file string) string {
	switch {
	case sessionKey != "":
		return c.Key(sessionKey)
	case id != "":
		return c.Key(id)
	}
	return c.Key(strings.TrimPrefix(file, "/"))
}

// EtcdKeyOf is EtcdKey for a file as it is: its id is the one the file
// names itself (FileSessionID).
func EtcdKeyOf(c *etcdhold.Client, sessionKey, file string) string {
	return EtcdKey(c, sessionKey, FileSessionID(file), file)
}

// FileSessionID is the harness's session id that a session file names
// itself: its header's (pi, codex, gemini), else a uuid as its name
// (claude's and qwen's NAME.jsonl, copilot's NAME/events.jsonl); else "".
func FileSessionID(file string) string {
	if id := harness.HeaderID(file); id != "" {
		return id
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if base == "events" {
		base = filepath.Base(filepath.Dir(file))
	}
	if ident.ValidUUID36(base) {
		return base
	}
	return ""
}

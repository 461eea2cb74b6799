// Package marker guards a session file with a kernel lock and a published
// marker, and judges the markers that other sessions left behind.
//
// For a session file F it uses two files in F's folder: F.live.lock, which a
// live holder keeps flocked for its whole run, and F.live.json, which says
// who the holder is for people, for other tools and for readers on other
// machines.
package marker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// maxSize bounds every read of a marker.
const maxSize = 64 << 10

// Tool is the value of the "tool" field in markers written by padrun.
const Tool = "padrun"

// Paths of the files that guard a session file. The lock and break files
// are F.live.lock and F.live.break for every file and every harness, so two
// padruns that name F's marker differently still take one lock. The
// marker is F.live.json, or .F.padrun.json where a harness's own listing
// would read F.live.json as one of its sessions (hiddenMarkers).
func Path(file string) string {
	if hiddenName(filepath.Base(file)) {
		return hiddenPath(file)
	}
	return file + markerSuffix
}
func lockPath(file string) string { return file + ".live.lock" }

// LockPath is the lock file of file, F.live.lock.
func LockPath(file string) string { return lockPath(file) }

// hiddenPath is the hidden name of file's marker, .F.padrun.json.
func hiddenPath(file string) string {
	return filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+hiddenSuffix)
}

// markerPaths are both names a marker of file may have, the one padrun
// writes first: readers find a marker that a padrun naming it the other
// way wrote.
func markerPaths(file string) []string {
	p, q := Path(file), file+markerSuffix
	if p == q {
		q = hiddenPath(file)
	}
	return []string{p, q}
}

// absent reports whether err says a marker's path holds nothing: missing,
// or a name too long to exist (the other name of a long file's marker).
func absent(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG)
}

// markerSuffix ends the name of a marker beside its session file; a
// session file's folder watcher must not take a marker for a session file.
const markerSuffix = ".live.json"

// hiddenSuffix ends a hidden marker's name, after a leading dot.
const hiddenSuffix = ".padrun.json"

// hiddenMarkers are the session file name patterns (filepath.Match of the
// base name) whose markers are hidden, .F.padrun.json: the harness that
// writes them would take F.live.json for a session of its own. They are the
// harness adapters' HiddenMarkers (gemini's listing and cleanup read every
// chats/session-*.json*), declared here as a plain value, since marker
// imports no harness; TestHiddenMarkers_AreTheAdapters keeps them equal.
var hiddenMarkers = []string{"session-*.json", "session-*.jsonl"}

func hiddenName(base string) bool {
	for _, p := range hiddenMarkers {
		if ok, _ := filepath.Match(p, base); ok {
			return true
		}
	}
	return false
}

// Marker is the JSON object published at F.live.json. Readers accept unknown
// fields and markers of other tools, which carry at least pid.
type Marker struct {
	V           int    `json:"v"`
	Tool        string `json:"tool,omitempty"`
	Version     string `json:"version,omitempty"`
	Nonce       string `json:"nonce,omitempty"`
	SessionFile string `json:"sessionFile,omitempty"`
	SessionID   string `json:"sessionId,omitempty"`
	// ID is its writer: pid, startToken, bootId, machineId, hostname,
	// pidNamespace, timeNamespace.
	ident.ID
	UID             int         `json:"uid"`
	ChildPid        int         `json:"childPid,omitempty"`
	ChildStartToken ident.Token `json:"childStartToken,omitempty"`
	// Cgroup is the cgroup v2 folder that holds every process of the
	// session, when padrun could make one.
	Cgroup string `json:"cgroup,omitempty"`
	// ChildPgid and ChildSid are the process group and session that the
	// child leads, when it leads one: its descendants stay in them unless
	// they leave.
	ChildPgid int    `json:"childPgid,omitempty"`
	ChildSid  int    `json:"childSid,omitempty"`
	Harness   string `json:"harness,omitempty"`
	Mode      string `json:"mode,omitempty"`
	Agent     string `json:"agent,omitempty"`
	// Tty is the terminal padrun runs on (pts/3), for people to find it.
	Tty              string `json:"tty,omitempty"`
	CreatedAt        string `json:"createdAt,omitempty"`
	HeartbeatSeconds int    `json:"heartbeatSeconds"`

	// ModTime is the marker file's mtime when it was read: the heartbeat.
	ModTime time.Time `json:"-"`
}

// New returns a marker for this process, holding file with a fresh nonce.
func New(self ident.Self, file, nonce string, now time.Time) Marker {
	return Marker{
		V: 1, Tool: Tool, Nonce: nonce, SessionFile: file, ID: self.ID, UID: self.UID,
		CreatedAt: now.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
}

// parse decodes a marker. A marker with no pid is not usable.
func parse(b []byte) (*Marker, error) {
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("marker: not JSON: %w", err)
	}
	if m.Pid == 0 {
		return nil, errors.New("marker: no pid")
	}
	return &m, nil
}

// proc is what the verdict ladder needs to know of a process that holds,
// or held, a session file: its identity, and its heartbeat.
type proc struct {
	ident.ID
	Heartbeat        time.Time // the marker's mtime
	HeartbeatSeconds int
}

// proc returns the marker's writer, for the ladder.
func (m *Marker) proc() proc {
	return proc{ID: m.ID, Heartbeat: m.ModTime, HeartbeatSeconds: m.HeartbeatSeconds}
}

// child returns the child that a padrun marker records, on the same
// machine as its padrun, and whether there is one.
func (m *Marker) child() (proc, bool) {
	h := m.proc()
	h.Pid, h.StartToken = m.ChildPid, m.ChildStartToken
	return h, m.ChildPid > 0
}

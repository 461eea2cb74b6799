// Package registry keeps pad-compatible session records: one JSON file per
// session pid in a folder (by default ~/.pad/sessions), written under the
// folder's lock, and read, listed and pruned exactly as pad v2 reads them
// (pad's internal/cli/session_registry.go and its OwnerLiveness).
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// MaxSize bounds every read of a record.
const MaxSize = 64 << 10

// EnvDir names the folder that overrides the default registry.
const EnvDir = "PADRUN_REGISTRY_DIR"

// Record is a session record as padrun writes it. The top-level names are
// pad's; padrun's own facts go under "padrun", which pad ignores.
type Record struct {
	SessionPID         int         `json:"session_pid,omitempty"`
	SessionPIDSource   string      `json:"session_pid_source,omitempty"`
	SessionPIDVerified bool        `json:"session_pid_verified,omitempty"`
	ProcStart          ident.Token `json:"proc_start,omitempty"`
	SessionID          string      `json:"session_id,omitempty"`
	Agent              string      `json:"agent,omitempty"`
	Pid                int         `json:"pid"`
	Cwd                string      `json:"cwd,omitempty"`
	RegisteredAt       string      `json:"registered_at,omitempty"`
	Padrun             *Padrun     `json:"padrun,omitempty"`
}

// Padrun holds what padrun adds to a record.
type Padrun struct {
	Version          string      `json:"version"`
	Harness          string      `json:"harness,omitempty"`
	Mode             string      `json:"mode,omitempty"`
	SessionFiles     []string    `json:"session_files"`
	Markers          []string    `json:"markers"`
	ChildPid         int         `json:"child_pid,omitempty"`
	ChildProcStart   ident.Token `json:"child_proc_start,omitempty"`
	ParentSessionPid int         `json:"parent_session_pid,omitempty"`
	Command          string      `json:"command"`
	// WaitingFor is what a run queued by --wait waits for: it holds
	// nothing yet.
	WaitingFor []string `json:"waiting_for,omitempty"`
	// PidNamespace and TimeNamespace are the namespaces session_pid and
	// proc_start were read in: from any other, they cannot be checked.
	PidNamespace  string `json:"pid_namespace,omitempty"`
	TimeNamespace string `json:"time_namespace,omitempty"`
}

// Owner returns the pid and start token that the record's liveness follows.
// For a listed Entry, SessionPID is already the owner pad derives (for a v1
// record, from its socket's name or its pid).
func (r *Record) Owner() (pid int, token string) {
	if r.SessionPID > 0 {
		return r.SessionPID, string(r.ProcStart)
	}
	return r.Pid, string(r.ProcStart)
}

// Dir returns the registry folder: $PADRUN_REGISTRY_DIR, else ~/.pad/sessions.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	return defaultDir()
}

func defaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("registry: no home folder (set %s): %w", EnvDir, err)
	}
	return filepath.Join(home, ".pad", "sessions"), nil
}

// Registry is a folder of records.
type Registry struct {
	Dir string
	// OnWait, when set, is told once who holds the folder's lock when a
	// mutation has to wait for it.
	OnWait func(holder string)

	mu        sync.Mutex
	written   map[int][]byte // each record this Registry last wrote, by session pid
	reclaimed bool           // the temps of dead writers were removed at its first write
}

// Path returns the path of pid's record.
func (r *Registry) Path(pid int) string { return filepath.Join(r.Dir, strconv.Itoa(pid)+".json") }

// Write publishes rec as <session_pid>.json under the folder lock, through a
// temp file whose name never matches a record's. It waits for the lock at
// most LockWait.
func (r *Registry) Write(ctx context.Context, rec *Record) error {
	return r.write(ctx, rec, LockWait)
}

// TryWrite is Write without waiting: while another process holds the
// folder's lock it returns a *LockError at once, and writes nothing.
func (r *Registry) TryWrite(rec *Record) error {
	return r.write(context.Background(), rec, 0)
}

func (r *Registry) write(ctx context.Context, rec *Record, wait time.Duration) error {
	b := append(rec.encode(), '\n')
	path := r.Path(rec.SessionPID)
	tmp := filepath.Join(r.Dir, ident.TempName())
	return r.locked(ctx, wait, func() error {
		r.mu.Lock()
		first, last := !r.reclaimed, r.written[rec.SessionPID]
		r.reclaimed = true
		r.mu.Unlock()
		if first {
			ident.ReclaimTemps(r.Dir) // left by writers killed before their rename: once per Registry
		}
		if !unchanged(path, last) { // a rewrite of what this Registry wrote there has nothing to judge
			if err := taken(path); err != nil {
				return err
			}
		}
		if err := safefile.WriteNew(tmp, b); err != nil {
			return fmt.Errorf("registry: write %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp) // Best effort.
			return fmt.Errorf("registry: write %s: %w", path, err)
		}
		r.mu.Lock()
		if r.written == nil {
			r.written = map[int][]byte{}
		}
		r.written[rec.SessionPID] = b
		r.mu.Unlock()
		return nil
	})
}

// unchanged tells whether path holds last, the bytes a Registry last
// wrote there.
func unchanged(path string, last []byte) bool {
	if last == nil {
		return false
	}
	f, err := readRecordFile(path)
	return err == nil && bytes.Equal(f.data, last)
}

// TakenError says that a record's path holds the record of a session of
// another pid or time namespace that is not proven dead: pids repeat across
// pid namespaces (each one's first process is pid 1), and that session's
// record is not this one's to replace.
type TakenError struct {
	Path      string
	Namespace string // "another pid namespace (N)", or a time namespace
	Reason    string // its verdict's reason
}

func (e *TakenError) Error() string {
	return e.Path + " is the record of a session in " + e.Namespace + ", not proven dead"
}

// taken returns a *TakenError when path holds the record of a session of
// another namespace whose owner is not proven dead; nil when it holds none,
// or one of this namespace (a stale one of a reused pid, or this session's
// own, which it may rewrite).
func taken(path string) error {
	e, ok := load(path)
	if !ok || e.Malformed || e.Liveness == ident.Dead {
		return nil
	}
	if ns := otherNamespace(e.owner); ns != "" {
		return &TakenError{Path: path, Namespace: ns, Reason: e.Reason}
	}
	return nil
}

// ours tells whether b, the content of pid's record, is ours: the bytes
// this Registry last wrote there, or else, parsed, a record of the same
// session pid and start.
func (r *Registry) ours(b []byte, pid int, procStart string) bool {
	r.mu.Lock()
	w := r.written[pid]
	r.mu.Unlock()
	return safefile.Ours(b, w, func(b []byte) bool {
		var rec Record
		if json.Unmarshal(b, &rec) != nil || rec.SessionPID != pid || string(rec.ProcStart) != procStart {
			return false
		}
		// The same pid and start token in another namespace is another session.
		return rec.Padrun == nil || otherNamespace(Owner{PidNamespace: rec.Padrun.PidNamespace, TimeNamespace: rec.Padrun.TimeNamespace}) == ""
	})
}

// Remove deletes pid's record if it is still ours: a child that runs
// `pad session register` may have rewritten it, and that record is its own.
func (r *Registry) Remove(ctx context.Context, pid int, procStart string) error {
	path := r.Path(pid)
	return r.locked(ctx, LockWait, func() error {
		f, err := readRecordFile(path)
		if errors.Is(err, errNotRecord) {
			return nil // gone, or not a record: nothing of ours
		}
		if err != nil || !r.ours(f.data, pid, procStart) {
			return nil // not ours any more
		}
		if _, err := removeSame(path, f.info); err != nil {
			return fmt.Errorf("registry: remove %s: %w", path, err)
		}
		return nil
	})
}

// Package registry keeps pad-compatible session records: one JSON file per
// session pid in a folder (by default ~/.pad/sessions), written under the
// folder's lock, listed and pruned by the liveness of their owners.
package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// MaxSize bounds every read of a record.
const MaxSize = 64 << 10

// EnvDir names the folder that overrides the default registry.
const EnvDir = "PADRUN_REGISTRY_DIR"

// Record is a session record. The top-level names are pad's; padrun's own
// facts go under "padrun", which pad ignores.
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
}

// Owner returns the pid and start token that the record's liveness follows:
// the session pid, or for pad's v1 records (no session_pid) their pid.
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
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("registry: no home folder (set %s): %w", EnvDir, err)
	}
	return filepath.Join(home, ".pad", "sessions"), nil
}

// Registry is a folder of records.
type Registry struct {
	Dir string
}

// Open returns the registry at dir, creating it 0700 or tightening a looser mode.
func Open(dir string) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("registry: %s is not a folder", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("registry: tighten %s: %w", dir, err)
		}
	}
	return &Registry{Dir: dir}, nil
}

// Path returns the path of pid's record.
func (r *Registry) Path(pid int) string { return filepath.Join(r.Dir, strconv.Itoa(pid)+".json") }

// locked runs f under an exclusive flock on <dir>/.lock.
func (r *Registry) locked(f func() error) error {
	path := filepath.Join(r.Dir, ".lock")
	h, err := safefile.OpenLock(path)
	if err != nil {
		return fmt.Errorf("registry: open %s: %w", path, err)
	}
	defer safefile.Close(h)
	if err := safefile.Lock(h); err != nil {
		return fmt.Errorf("registry: lock %s: %w", path, err)
	}
	return f()
}

// Write publishes rec as <session_pid>.json under the folder lock, through a
// temp file whose name never matches a record's.
func (r *Registry) Write(rec *Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("registry: encode: %w", err)
	}
	b = append(b, '\n')
	path := r.Path(rec.SessionPID)
	tmp := filepath.Join(r.Dir, "."+strconv.Itoa(rec.SessionPID)+".json."+uuid.NewString()[:8]+".tmp")
	return r.locked(func() error {
		if err := safefile.WriteNew(tmp, b); err != nil {
			return fmt.Errorf("registry: write %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp) // Best effort.
			return fmt.Errorf("registry: write %s: %w", path, err)
		}
		return nil
	})
}

// Remove deletes pid's record if it is still ours: a child that runs
// `pad session register` may have rewritten it, and that record is its own.
func (r *Registry) Remove(pid int, procStart string) error {
	path := r.Path(pid)
	return r.locked(func() error {
		rec, err := read(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil || rec.SessionPID != pid || string(rec.ProcStart) != procStart {
			return nil // not ours any more
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("registry: remove %s: %w", path, err)
		}
		return nil
	})
}

// Entry is one file of the registry as listed: a record, pad's or padrun's,
// or a malformed file, with its owner's liveness.
type Entry struct {
	Record
	Path      string
	Malformed bool
	Legacy    bool // pad's v1 record: no session_pid
	Liveness  ident.Verdict
	Reason    string
	Time      time.Time // registered_at, or the file's mtime
	raw       []byte
}

// MarshalJSON writes the record as it is on disk, every field kept, with
// path and liveness added.
func (e Entry) MarshalJSON() ([]byte, error) {
	extra, err := json.Marshal(struct {
		Path         string `json:"path"`
		Liveness     string `json:"liveness"`
		Malformed    bool   `json:"malformed,omitempty"`
		RegisteredAt string `json:"registered_at,omitempty"`
	}{e.Path, e.Liveness.String(), e.Malformed, malformedTime(e)})
	if err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(e.raw)
	if e.Malformed || len(raw) < 2 {
		return extra, nil
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	out := make([]byte, 0, len(body)+len(extra)+2)
	out = append(out, '{')
	if len(body) > 0 {
		out = append(append(out, body...), ',')
	}
	return append(out, extra[1:]...), nil
}

func malformedTime(e Entry) string {
	if !e.Malformed {
		return ""
	}
	return e.Time.UTC().Format(time.RFC3339Nano)
}

// List returns every record and malformed file of the registry with its
// liveness, newest first.
func (r *Registry) List() ([]Entry, error) {
	des, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	var paths []string
	for _, de := range des {
		if isRecordName(de.Name()) {
			paths = append(paths, filepath.Join(r.Dir, de.Name()))
		}
	}
	// Each record costs a few reads of its own and of /proc: spread them
	// over the processors, and judge each owner once.
	entries := make([]Entry, len(paths))
	var probes sync.Map
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(paths); i += workers {
				entries[i] = loadWith(paths[i], &probes)
			}
		}()
	}
	wg.Wait()
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.After(entries[j].Time) })
	return entries, nil
}

// load reads and judges one registry file.
func load(path string) Entry { return loadWith(path, nil) }

// probe is a verdict on an owner, shared by the records it owns.
type probe struct {
	v      ident.Verdict
	reason string
}

// loadWith is load, judging each owner once through the cache when set.
func loadWith(path string, cache *sync.Map) Entry {
	e := Entry{Path: path}
	b, mtime, err := safefile.ReadBounded(path, MaxSize)
	e.Time = mtime
	if err != nil {
		return malformed(e, err.Error())
	}
	if !utf8.Valid(b) {
		return malformed(e, "not UTF-8")
	}
	if err := json.Unmarshal(b, &e.Record); err != nil {
		return malformed(e, "not a record: "+err.Error())
	}
	e.raw = b
	e.Legacy = e.SessionPID <= 0
	pid, token := e.Owner()
	if pid <= 0 {
		return malformed(e, "no pid")
	}
	if t, err := time.Parse(time.RFC3339Nano, e.RegisteredAt); err == nil {
		e.Time = t
	}
	key := strconv.Itoa(pid) + "/" + token
	if cache != nil {
		if p, ok := cache.Load(key); ok {
			e.Liveness, e.Reason = p.(probe).v, p.(probe).reason
			return e
		}
	}
	e.Liveness, e.Reason = ident.Probe(pid, token)
	if cache != nil {
		cache.Store(key, probe{e.Liveness, e.Reason})
	}
	return e
}

func malformed(e Entry, why string) Entry {
	e.Malformed, e.Liveness, e.Reason = true, ident.Unknown, "malformed: "+why
	e.raw = nil
	return e
}

func read(path string) (*Record, error) {
	b, _, err := safefile.ReadBounded(path, MaxSize)
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// isRecordName matches ^[0-9]+\.json$.
func isRecordName(name string) bool {
	digits, ok := strings.CutSuffix(name, ".json")
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PruneResult counts what Prune did.
type PruneResult struct {
	Dead    int `json:"dead"`
	Unknown int `json:"unknown"`
	Kept    int `json:"kept"`
}

// Prune deletes records whose owner is dead, and unknown ones (malformed
// files included) older than olderThan when it is positive; never an alive
// one. Each is judged again under the folder lock just before it goes.
func (r *Registry) Prune(olderThan time.Duration, now time.Time) (PruneResult, error) {
	var res PruneResult
	entries, err := r.List()
	if err != nil {
		return res, err
	}
	err = r.locked(func() error {
		for _, e := range entries {
			if e.Liveness == ident.Alive {
				res.Kept++
				continue
			}
			if _, err := os.Lstat(e.Path); errors.Is(err, os.ErrNotExist) {
				continue // gone meanwhile
			}
			e = load(e.Path) // the verdict that counts is the one just before deleting
			switch {
			case e.Liveness == ident.Dead:
				res.Dead++
			case e.Liveness == ident.Unknown && olderThan > 0 && now.Sub(e.Time) > olderThan:
				res.Unknown++
			default:
				res.Kept++
				continue
			}
			if err := os.Remove(e.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("registry: remove %s: %w", e.Path, err)
			}
		}
		return nil
	})
	return res, err
}

package registry

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/padrun/padrun/marker/ident"
)

// registration is a record as pad reads it, with pad's field types exactly:
// a file that pad calls malformed (a numeric proc_start, a string pid) is
// malformed here too. "padrun" is padrun's, which pad ignores.
type registration struct {
	SessionPID          int             `json:"session_pid"`
	SessionPIDSource    string          `json:"session_pid_source"`
	SessionPIDVerified  bool            `json:"session_pid_verified"`
	ProcStart           string          `json:"proc_start"`
	Socket              string          `json:"messaging_socket_path"`
	SocketMtimeUnixNano int64           `json:"socket_mtime_unix_nano"`
	SocketIno           uint64          `json:"socket_ino"`
	SocketDev           uint64          `json:"socket_dev"`
	SessionID           string          `json:"session_id"`
	Agent               string          `json:"agent"`
	Pid                 int             `json:"pid"`
	Cwd                 string          `json:"cwd"`
	RegisteredAt        string          `json:"registered_at"`
	Padrun              json.RawMessage `json:"padrun"`
}

// illFormed says why a parsed file is not a record every writer (pad v1,
// pad v2, padrun) would have written, or "" when it is well formed.
func (g *registration) illFormed() string {
	switch {
	case g.RegisteredAt == "":
		return "no registered_at"
	case g.Cwd == "":
		return "no cwd"
	case g.Pid <= 0:
		return "pid is not positive"
	case g.SessionPID < 0:
		return "session_pid is negative"
	}
	if _, err := time.Parse(time.RFC3339, g.RegisteredAt); err != nil {
		return "registered_at is not RFC3339"
	}
	return ""
}

// legacyOwner is the owner of a v1 record (no session_pid): the pid in its
// socket's name (<pid>.sock) when that parses, else its pid. The socket is
// not a signal: v1 recorded no identity for it.
func legacyOwner(g *registration) (Owner, string) {
	if g.Socket != "" {
		base := strings.TrimSuffix(filepath.Base(g.Socket), filepath.Ext(g.Socket))
		if n, err := strconv.Atoi(base); err == nil && n > 0 {
			return Owner{PID: n}, "legacy-socket"
		}
	}
	return Owner{PID: g.Pid}, "legacy-registrar"
}

// Entry is one record of the registry as listed, pad's or padrun's, or a
// malformed file, with its owner's liveness. For a legacy (v1) record,
// SessionPID and SessionPIDSource are the owner pad derives, and it carries
// no agent, no session id and no padrun object: it can say that a session
// exists, never who it is.
type Entry struct {
	Record
	Path      string
	Malformed bool
	Legacy    bool
	Liveness  ident.Verdict
	Reason    string
	Time      time.Time // registered_at, or the file's mtime when malformed
	Socket    string    // messaging_socket_path, as recorded

	owner  Owner
	padrun json.RawMessage
	info   os.FileInfo
}

// load reads and judges one registry file; ok is false when it is no record.
func load(path string) (Entry, bool) { return loadWith(path, nil) }

// probe is a verdict on an owner, shared by the records it owns.
type probe struct {
	v      ident.Verdict
	reason string
}

// loadWith is load, judging each owner once through the cache when set.
func loadWith(path string, cache *sync.Map) (Entry, bool) {
	f, err := readRecordFile(path)
	if errors.Is(err, errNotRecord) {
		return Entry{}, false
	}
	e := Entry{Path: path, info: f.info}
	if f.info != nil {
		e.Time = f.info.ModTime()
	}
	if err != nil {
		return malformed(e, err.Error()), true
	}
	if !utf8.Valid(f.data) {
		return malformed(e, "not UTF-8"), true
	}
	var g registration
	if err := json.Unmarshal(f.data, &g); err != nil {
		return malformed(e, "not a record: "+err.Error()), true
	}
	if why := g.illFormed(); why != "" {
		return malformed(e, why), true
	}
	e.fill(&g)
	if cache != nil {
		if p, ok := cache.Load(e.owner); ok {
			e.Liveness, e.Reason = p.(probe).v, p.(probe).reason
			return e, true
		}
	}
	e.Liveness, e.Reason = OwnerLiveness(e.owner)
	if cache != nil {
		cache.Store(e.owner, probe{e.Liveness, e.Reason})
	}
	return e, true
}

// fill takes a well-formed registration's fields as pad's list shows them.
func (e *Entry) fill(g *registration) {
	e.Record = Record{
		SessionPID: g.SessionPID, SessionPIDSource: g.SessionPIDSource, SessionPIDVerified: g.SessionPIDVerified,
		ProcStart: ident.Token(g.ProcStart), SessionID: g.SessionID, Agent: g.Agent,
		Pid: g.Pid, Cwd: g.Cwd, RegisteredAt: g.RegisteredAt,
	}
	e.Socket = g.Socket
	e.Time, _ = time.Parse(time.RFC3339, g.RegisteredAt) // well formed: it parses
	if g.SessionPID == 0 {
		e.Legacy = true
		e.owner, e.SessionPIDSource = legacyOwner(g)
		e.SessionPID, e.ProcStart = e.owner.PID, ""
		e.Agent, e.SessionID, e.SessionPIDVerified = "", "", false
		return
	}
	e.owner = Owner{
		PID: g.SessionPID, ProcStart: g.ProcStart, Socket: g.Socket,
		SocketMtimeUnixNano: g.SocketMtimeUnixNano, SocketIno: g.SocketIno, SocketDev: g.SocketDev,
	}
	if len(g.Padrun) > 0 && g.Padrun[0] == '{' {
		e.padrun = g.Padrun
		var p Padrun
		if json.Unmarshal(g.Padrun, &p) == nil {
			e.Padrun = &p
			e.owner.PidNamespace, e.owner.TimeNamespace = p.PidNamespace, p.TimeNamespace
		}
	}
}

func malformed(e Entry, why string) Entry {
	e.Malformed, e.Liveness, e.Reason = true, ident.Unknown, "malformed: "+why
	return e
}

// row is a listed record in the shape of pad's SessionRecord, key for key,
// with padrun's own object added.
type row struct {
	SessionPID          int             `json:"session_pid"`
	SessionPIDSource    string          `json:"session_pid_source,omitempty"`
	SessionPIDVerified  bool            `json:"session_pid_verified"`
	Agent               string          `json:"agent"`
	Cwd                 string          `json:"cwd"`
	SessionID           string          `json:"session_id,omitempty"`
	Liveness            string          `json:"liveness"`
	RegisteredAt        string          `json:"registered_at"`
	Legacy              bool            `json:"legacy,omitempty"`
	Malformed           bool            `json:"malformed,omitempty"`
	MessagingSocketPath string          `json:"messaging_socket_path,omitempty"`
	Path                string          `json:"path"`
	Padrun              json.RawMessage `json:"padrun,omitempty"`
}

// MarshalJSON writes the entry as `pad session list --json` writes a
// record, plus padrun's object as it is on disk: a script written for pad
// reads it unchanged. A malformed file has only its path, its liveness
// (unknown) and its mtime as registered_at.
func (e Entry) MarshalJSON() ([]byte, error) { return json.Marshal(e.row()) }

func (e Entry) row() row {
	r := row{Liveness: e.Liveness.String(), Path: e.Path, Malformed: e.Malformed}
	if e.Malformed {
		r.RegisteredAt = e.Time.UTC().Format(time.RFC3339)
		return r
	}
	r.SessionPID, r.SessionPIDSource, r.SessionPIDVerified = e.SessionPID, e.SessionPIDSource, e.SessionPIDVerified
	r.Agent, r.Cwd, r.SessionID = e.Agent, e.Cwd, e.SessionID
	r.RegisteredAt, r.Legacy, r.MessagingSocketPath = e.RegisteredAt, e.Legacy, e.Socket
	r.Padrun = e.padrun
	return r
}

// List returns every record and malformed file of the registry with its
// liveness, newest first. Only regular files named ^[0-9]+\.json$ are
// records: symlinks, folders, FIFOs and pad's other files are not listed.
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
		if isRecordName(de.Name()) && de.Type().IsRegular() {
			paths = append(paths, filepath.Join(r.Dir, de.Name()))
		}
	}
	// Each record costs a few reads of its own and of /proc: spread them
	// over the processors, and judge each owner once.
	entries := make([]Entry, len(paths))
	found := make([]bool, len(paths))
	var probes sync.Map
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(paths); i += workers {
				entries[i], found[i] = loadWith(paths[i], &probes)
			}
		}()
	}
	wg.Wait()
	out := entries[:0]
	for i, e := range entries {
		if found[i] {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c // newest first
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
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

// Filter picks listed rows as `pad session list` does.
type Filter struct {
	All   bool   // dead rows too
	Agent string // only this agent's rows; legacy and malformed rows have none
	Cwd   string // only rows of this folder, compared canonical on both sides
}

// Select returns the entries that pass f, in order.
func Select(entries []Entry, f Filter) []Entry {
	want := ""
	if f.Cwd != "" {
		want = canonical(f.Cwd)
	}
	seen := map[string]string{}
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if !f.All && e.Liveness == ident.Dead {
			continue
		}
		if f.Agent != "" && e.Agent != f.Agent { // legacy and malformed rows have no agent
			continue
		}
		if want != "" {
			c, ok := seen[e.Cwd]
			if !ok {
				c = canonical(e.Cwd)
				seen[e.Cwd] = c
			}
			if e.Malformed || c != want {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// canonical resolves a folder's symlinks (pad records os.Getwd(), which may
// hold one); a folder that cannot be resolved is compared as written.
func canonical(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// WriteRows writes entries as `ls --json` does: an array of rows (see
// MarshalJSON) indented by two spaces, like status --json, row by row.
func WriteRows(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[")
	for i, e := range entries {
		b, err := json.MarshalIndent(e.row(), "  ", "  ")
		if err != nil {
			return fmt.Errorf("registry: encode %s: %w", e.Path, err)
		}
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  ")
		bw.Write(b)
	}
	if len(entries) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

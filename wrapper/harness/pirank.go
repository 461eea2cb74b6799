package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// piSession is what pi's session list knows of a file (SessionManager.list
// in pi 0.74): its header id and its last activity.
type piSession struct {
	path     string
	id       string
	cwd      string // the header's, when a string
	modified int64  // ms since the epoch
}

// piEntry is the part of a session line that pi's list reads.
type piEntry struct {
	Type      string          `json:"type"`
	ID        any             `json:"id"`
	Cwd       any             `json:"cwd"`
	Timestamp json.RawMessage `json:"timestamp"`
	Message   *struct {
		Role      *string         `json:"role"`
		Content   json.RawMessage `json:"content"`
		Timestamp json.RawMessage `json:"timestamp"`
	} `json:"message"`
}

// readPiSession reads a session file as pi's buildSessionInfo does: lines
// that do not parse are skipped, the first that does must be the "session"
// header. Its last activity is the newest timestamp of a user or assistant
// message with content (the message's numeric timestamp, else the entry's
// ISO one), else the header's timestamp, else the file's mtime.
func readPiSession(path string) (piSession, bool) {
	b, err := readSession(path)
	if err != nil {
		return piSession{}, false
	}
	var header *piEntry
	last, seen := 0.0, false
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var e piEntry
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		if header == nil {
			header = &e
			if e.Type != "session" {
				return piSession{}, false
			}
			continue
		}
		if t, ok := piActivity(e); ok && (!seen || t > last) {
			last, seen = t, true
		}
	}
	id, _ := headerID(header)
	if header == nil || id == "" {
		return piSession{}, false
	}
	s := piSession{path: path, id: id}
	s.cwd, _ = header.Cwd.(string)
	switch t, ok := jsTime(header.Timestamp); {
	case seen && last > 0:
		s.modified = int64(last)
	case ok:
		s.modified = t
	default:
		fi, err := os.Stat(path)
		if err != nil {
			return piSession{}, false
		}
		s.modified = fi.ModTime().UnixMilli()
	}
	return s, true
}

func headerID(h *piEntry) (string, bool) {
	if h == nil {
		return "", false
	}
	id, ok := h.ID.(string)
	return id, ok
}

// piActivity is a line's activity time, when it is a user or assistant
// message with content.
func piActivity(e piEntry) (float64, bool) {
	if e.Type != "message" || e.Message == nil || e.Message.Role == nil || e.Message.Content == nil {
		return 0, false
	}
	if r := *e.Message.Role; r != "user" && r != "assistant" {
		return 0, false
	}
	var n float64
	if json.Unmarshal(e.Message.Timestamp, &n) == nil {
		return n, true
	}
	if t, ok := jsTime(e.Timestamp); ok {
		return float64(t), true
	}
	return 0, false
}

// jsTime parses an ISO timestamp string to ms, as new Date(s) does for the
// ISO form harnesses write.
func jsTime(raw json.RawMessage) (int64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// piList lists the sessions of dirs as pi 0.74 does: files in name order,
// folder by folder, then stably sorted by last activity, newest first.
func piList(dirs ...string) []piSession {
	var out []piSession
	for _, dir := range dirs {
		des, err := os.ReadDir(dir) // sorted by name, as libuv's scandir
		if err != nil {
			continue
		}
		for _, de := range des {
			if !strings.HasSuffix(de.Name(), ".jsonl") {
				continue
			}
			if s, ok := readPiSession(filepath.Join(dir, de.Name())); ok {
				out = append(out, s)
			}
		}
	}
	return byActivity(out)
}

// piList1 lists one folder's sessions as pi 1.x does: files in reverse
// name order, then stably sorted by last activity, newest first.
func piList1(dir string) []piSession {
	des, _ := os.ReadDir(dir)
	var out []piSession
	for _, de := range slices.Backward(des) {
		if !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if s, ok := readPiSession(filepath.Join(dir, de.Name())); ok {
			out = append(out, s)
		}
	}
	return byActivity(out)
}

// piListAll1 is pi 1.x's listAll of every project's folder under the agent
// dir: files newest first by mtime, then by reverse name, then stably
// sorted by last activity.
func piListAll1(agentDir string) []piSession {
	root := filepath.Join(agentDir, "sessions")
	des, _ := os.ReadDir(root)
	type file struct {
		path  string
		mtime int64
	}
	var files []file
	for _, de := range des {
		if !de.IsDir() && de.Type()&os.ModeSymlink == 0 {
			continue
		}
		sub, _ := os.ReadDir(filepath.Join(root, de.Name()))
		for _, f := range sub {
			if !strings.HasSuffix(f.Name(), ".jsonl") {
				continue
			}
			p := filepath.Join(root, de.Name(), f.Name())
			var mt int64 = -1 << 63
			if fi, err := os.Stat(p); err == nil {
				mt = fi.ModTime().UnixNano()
			}
			files = append(files, file{p, mt})
		}
	}
	slices.SortStableFunc(files, func(a, b file) int {
		if a.mtime != b.mtime {
			return cmpDesc(a.mtime, b.mtime)
		}
		return strings.Compare(filepath.Base(b.path), filepath.Base(a.path))
	})
	var out []piSession
	for _, f := range files {
		if s, ok := readPiSession(f.path); ok {
			out = append(out, s)
		}
	}
	return byActivity(out)
}

func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// byActivity sorts sessions stably by last activity, newest first.
func byActivity(out []piSession) []piSession {
	slices.SortStableFunc(out, func(a, b piSession) int {
		switch {
		case a.modified > b.modified:
			return -1
		case a.modified < b.modified:
			return 1
		}
		return 0
	})
	return out
}

// piMatch is pi's resolveSessionPath for an id prefix: the first session of
// the list whose id starts with prefix.
func piMatch(list []piSession, prefix string) string {
	for _, s := range list {
		if strings.HasPrefix(s.id, prefix) {
			return s.path
		}
	}
	return ""
}

// piHead is what pi's session discovery reads of a header.
type piHead struct{ id, cwd string }

// piHeader1 is pi 1.x's readSessionHeader: the first line that parses,
// skipping blank and malformed ones, within the first MiB, must be a
// "session" line with a string id.
func piHeader1(path string) (piHead, bool) {
	f, err := openSession(path)
	if err != nil {
		return piHead{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e piEntry
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		id, ok := e.ID.(string)
		if e.Type != "session" || !ok {
			return piHead{}, false
		}
		cwd, _ := e.Cwd.(string)
		return piHead{id: id, cwd: cwd}, true
	}
	return piHead{}, false
}

// piHeader074 is pi 0.74's isValidSessionFile: the first line of the
// first 512 bytes is a "session" line with a string id.
func piHeader074(path string) bool {
	f, err := openSession(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(f, b)
	first, _, _ := bytes.Cut(b[:n], []byte("\n"))
	var e piEntry
	if len(first) == 0 || json.Unmarshal(first, &e) != nil {
		return false
	}
	_, ok := e.ID.(string)
	return e.Type == "session" && ok
}

package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/safefile"
)

// claudeLiveRecords lists claude's records of a live session of file,
// ${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<enc>/<id>.jsonl: while it runs,
// claude keeps <config>/sessions/<pid>.json, {pid, sessionId, cwd,
// startedAt (ms), procStart (its /proc/PID/stat starttime)}, and from 2.1.332
// pidDomain ("linux:<machine id>:pid:[<pid namespace inode>]"), written at
// its start and on a session switch (2.1.197 and 2.1.332 bin/claude.exe:
// writeFile(..., {pid: process.pid, sessionId, cwd, startedAt, procStart})).
func claudeLiveRecords(file string) []LiveRecord {
	project := filepath.Dir(file)
	if filepath.Base(filepath.Dir(project)) != "projects" || filepath.Ext(file) != ".jsonl" {
		return nil
	}
	id := strings.TrimSuffix(filepath.Base(file), ".jsonl")
	dir := filepath.Join(filepath.Dir(filepath.Dir(project)), "sessions")
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []LiveRecord
	for _, de := range des {
		pid, ok := strings.CutSuffix(de.Name(), ".json")
		if n, err := strconv.Atoi(pid); !ok || err != nil || n <= 0 {
			continue
		}
		path := filepath.Join(dir, de.Name())
		b, _, err := safefile.ReadBounded(path, 64<<10)
		if err != nil {
			continue
		}
		var r struct {
			Pid       int    `json:"pid"`
			SessionID string `json:"sessionId"`
			StartedAt int64  `json:"startedAt"`
			ProcStart string `json:"procStart"`
			PidDomain string `json:"pidDomain"`
		}
		if json.Unmarshal(b, &r) != nil || r.SessionID != id || r.Pid <= 0 {
			continue
		}
		l := LiveRecord{Pid: r.Pid, ProcStart: r.ProcStart, PidDomain: r.PidDomain, Path: path}
		if r.StartedAt > 0 {
			l.Since = time.UnixMilli(r.StartedAt)
		}
		out = append(out, l)
	}
	return out
}

package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/padrun/padrun/marker/ident"
)

// claudeTitled finds the session that `claude -p -r TITLE` resumes, as
// Claude Code 2.1 does in print mode: the sessions of the project whose
// title (the last custom title set with --name or /rename, else the last
// title claude generated) equals TITLE, ignoring case and surrounding
// space. One match is that session; none or several is unknown (claude
// itself then refuses the run), and why says so.
func claudeTitled(dir, title string) (id, why string) {
	want := strings.ToLower(strings.TrimSpace(title))
	if strings.HasSuffix(strings.ToLower(want), ".jsonl") || strings.Contains(want, "://") {
		return "", "--resume names a transcript file or a URL"
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return "", "no session of this project is titled " + title
	}
	var found []string
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !de.Type().IsRegular() || !ident.ValidUUID(name) {
			continue
		}
		if t := claudeTitle(filepath.Join(dir, de.Name())); t != "" && strings.ToLower(strings.TrimSpace(t)) == want {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", "no session of this project is titled " + title
	case 1:
		return found[0], ""
	}
	return "", "several sessions are titled " + title
}

// claudeTitle is a transcript's title: its last custom title, else its
// last generated one.
func claudeTitle(path string) string {
	f, err := openSession(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	custom, ai := "", ""
	sc := bufio.NewScanner(io.LimitReader(f, maxSession))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`-title"`)) {
			continue
		}
		var e struct {
			Type        string `json:"type"`
			CustomTitle string `json:"customTitle"`
			AITitle     string `json:"aiTitle"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch {
		case e.Type == "custom-title" && e.CustomTitle != "":
			custom = e.CustomTitle
		case e.Type == "ai-title" && e.AITitle != "":
			ai = e.AITitle
		}
	}
	if custom != "" {
		return custom
	}
	return ai
}

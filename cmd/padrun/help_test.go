package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every variable the code reads is named in the help.
func TestHelp_NamesEveryVariable(t *testing.T) {
	var help bytes.Buffer
	mainHelp(&help)
	read := regexp.MustCompile(`(?:Getenv|LookupEnv)\("([A-Z_]+)"\)|orEnv\([^,]+, "([A-Z_]+)"|Env[A-Za-z]* += "([A-Z_]+)"`)
	found := 0
	for _, dir := range []string{".", "../../wrapper", "../../wrapper/harness", "../../registry", "../../marker", "../../marker/ident", "../../supervise"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range read.FindAllStringSubmatch(string(src), -1) {
				name := m[1] + m[2] + m[3]
				found++
				if !regexp.MustCompile(`(?m)^  ` + name + ` `).Match(help.Bytes()) {
					t.Errorf("%s reads $%s, which padrun help does not name", f, name)
				}
			}
		}
	}
	if found < 10 {
		t.Fatalf("found only %d reads of variables: is the pattern stale?", found)
	}
}

func TestDuration_BareNumberIsSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10": 10 * time.Second, "0": 0, "1.5": 1500 * time.Millisecond, "90s": 90 * time.Second,
		"10m": 10 * time.Minute, "1h30m": 90 * time.Minute, "-5": -5 * time.Second, "2.": 2 * time.Second,
		"-0.25": -250 * time.Millisecond,
	} {
		var d time.Duration
		if err := (duration{&d}).Set(in); err != nil || d != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"", "ten", "10x", "1e3", "0x10", "99999999999", "inf", "NaN", "-", ".", ".5", "--5", "1.5.", "+5", " 5", "1,5"} {
		var d time.Duration
		if err := (duration{&d}).Set(in); err == nil {
			t.Errorf("Set(%q) = %v, want an error", in, d)
		}
	}
}

func TestNearVerb(t *testing.T) {
	for in, want := range map[string]string{
		"stauts": "status", "statu": "status", "unlcok": "unlock", "sl": "ls", "prnue": "prune",
		"verison": "version", "hlep": "help", "status": "", "ls": "", "git": "", "pi": "", "xyzzy": "", "l": "",
	} {
		if got := nearVerb(in); got != want {
			t.Errorf("nearVerb(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCut_KeepsTheFileName(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		id   bool
		want string
	}{
		{"~/short.jsonl", 20, false, "~/short.jsonl"},
		{"~/projects/long-name/sessions/one.jsonl", 20, false, "~/proje.../one.jsonl"},
		{"~/a/a-very-long-file-name-indeed.jsonl", 20, false, "~/a/a-...ndeed.jsonl"},
		{"0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", 8, true, "0193a1b2"},
	} {
		got := cut(c.in, c.n, c.id)
		if got != c.want || runeLen(got) > c.n {
			t.Errorf("cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := tilde("/home/u/s.jsonl", "/home/u"); got != "~/s.jsonl" {
		t.Errorf("tilde = %q", got)
	}
	if got := tilde("/home/uu/s.jsonl", "/home/u"); got != "/home/uu/s.jsonl" {
		t.Errorf("tilde of a sibling folder = %q", got)
	}
}

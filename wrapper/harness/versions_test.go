package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersions_MatchTestSh: the releases each adapter declares as tested
// are the ones test.sh pins in its oldest and newest columns.
func TestVersions_MatchTestSh(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]map[string]string{} // column -> npm package -> version
	for _, column := range columns {
		m := regexp.MustCompile(`(?m)^` + column + `=\(([^)]*)\)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("test.sh has no %s=(...) array", column)
		}
		pins[column] = map[string]string{}
		for _, p := range strings.Fields(string(m[1])) {
			at := strings.LastIndex(p, "@")
			pkg := p[:at]
			// HARNESS:platform@PKG@VERSION: PKG's platform package alone.
			if _, wrapper, ok := strings.Cut(pkg, ":platform@"); ok {
				pkg = wrapper
			}
			pins[column][pkg] = p[at+1:]
		}
	}
	tested := TestedVersions()
	if len(tested) != len(Names()) {
		t.Errorf("tested versions of %d harnesses, want %s: %v", len(tested), List(Names(), "and"), tested)
	}
	for _, tv := range tested {
		pkg := must(Lookup(tv.Harness)).Packages[0]
		if got := pins["oldest"][pkg]; got != tv.Oldest {
			t.Errorf("%s: test.sh's oldest column pins %s@%s, the adapter declares %s", tv.Harness, pkg, got, tv.Oldest)
		}
		if got := pins["newest"][pkg]; got != tv.Newest {
			t.Errorf("%s: test.sh's newest column pins %s@%s, the adapter declares %s", tv.Harness, pkg, got, tv.Newest)
		}
	}
}

// npmInstall lays out an npm install of a harness, as a global install or
// npm's .bin does: bin/NAME a symlink into the package's own script.
func npmInstall(t *testing.T, name, pkg, version, script string) (bin string) {
	t.Helper()
	root := t.TempDir()
	pkgDir := filepath.Join(root, "lib", "node_modules", filepath.FromSlash(pkg))
	os.MkdirAll(filepath.Join(pkgDir, filepath.Dir(script)), 0o755)
	os.WriteFile(filepath.Join(pkgDir, script), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(pkgDir, "package.json"), []byte(`{"name":"`+pkg+`","version":"`+version+`"}`), 0o644)
	bin = filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	if err := os.Symlink(filepath.Join("..", "lib", "node_modules", filepath.FromSlash(pkg), script), filepath.Join(bin, name)); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestResolve_ReadsTheReleaseFromThePackage: the release of the command
// found in PATH, read from its npm package, for each harness's layout.
func TestResolve_ReadsTheReleaseFromThePackage(t *testing.T) {
	for _, tc := range []struct{ name, pkg, version, script string }{
		{"pi", "@earendil-works/pi-coding-agent", "1.6.0", "dist/bundle/cli.js"},
		{"pi", "@mariozechner/pi-coding-agent", "0.74.2", "dist/cli.js"},
		{"claude", "@anthropic-ai/claude-code", "2.1.332", "bin/claude.exe"},
		{"codex", "@openai/codex", "0.171.0", "bin/codex.js"},
	} {
		bin := npmInstall(t, tc.name, tc.pkg, tc.version, tc.script)
		env := Env{Getenv: func(k string) string { return map[string]string{"PATH": "/nonexistent:" + bin}[k] }, Cwd: "/w/proj", Home: t.TempDir()}
		p, err := Resolve("", []string{tc.name, "--help"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != tc.version {
			t.Errorf("%s from %s: version %q, want %q", tc.name, tc.pkg, p.Version, tc.version)
		}
	}
}

// TestResolve_VersionPicksTheRules: the release read from the package
// decides pi's rules: "--" ends the flags for 1.6, not for 0.74.
func TestResolve_VersionPicksTheRules(t *testing.T) {
	f := newFixture(t)
	for version, files := range map[string]int{"1.6.0": 0, "0.74.2": 1} {
		bin := npmInstall(t, "pi", piPackage, version, "dist/cli.js")
		env := f.env
		env.Getenv = func(k string) string { return map[string]string{"PATH": bin}[k] }
		p, _ := Resolve("", []string{"pi", "-p", "--", "--session", "01900000-0000-7000-8000-000000000001"}, env)
		if p.Version != version || len(p.Files) != files || p.Unknown != "" {
			t.Errorf("pi %s: version %q, files %v, unknown %q; want %d files", version, p.Version, p.Files, p.Unknown, files)
		}
	}
}

// TestUntested: a release newer than the newest tested major.minor, or
// older than the oldest, is named with the tested one; a patch release of
// the newest tested minor and an unknown release are not.
func TestUntested(t *testing.T) {
	for _, tc := range []struct {
		harness, version string
		want             string // a word the line must hold; empty: no line
	}{
		{"pi", "1.7.0", "1.6.0"}, {"pi", "2.0.0", "newer"}, {"pi", "1.6.9", ""}, {"pi", "1.6.0", ""}, {"pi", "1.0.0", ""},
		{"pi", "0.74.2", ""}, {"pi", "0.73.9", "older"}, {"pi", "", ""}, {"pi", "junk", ""},
		{"claude", "2.2.0", "2.1.332"}, {"claude", "2.1.400", ""}, {"codex", "0.172.0", "0.171.0"}, {"none", "9.9.9", ""},
	} {
		got := Untested(Plan{Harness: tc.harness, Version: tc.version})
		if (got != "") != (tc.want != "") || !strings.Contains(got, tc.want) || (got != "" && !strings.Contains(got, tc.version)) {
			t.Errorf("Untested(%s %s) = %q, want a line with %q", tc.harness, tc.version, got, tc.want)
		}
	}
}

// BenchmarkInstalledVersion: what reading the release costs a run, with
// the newest column's pi (npm's .bin symlink into the package).
func BenchmarkInstalledVersion(b *testing.B) {
	bin, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "harness", "newest", "node_modules", ".bin"))
	env := Env{Getenv: func(k string) string { return map[string]string{"PATH": "/usr/local/bin:/usr/bin:" + bin}[k] }, Cwd: "/"}
	if installedVersion("pi", env, must(Lookup("pi")).Packages) == "" {
		b.Skip("the newest column is not installed")
	}
	for b.Loop() {
		installedVersion("pi", env, must(Lookup("pi")).Packages)
	}
}

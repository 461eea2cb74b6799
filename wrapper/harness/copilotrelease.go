package harness

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/marker/safefile"
)

// copilotRelease is the release copilot's native launcher runs, which may
// be newer than its npm package: it runs the newest package it finds in its
// caches (auto-update). The rule, from the launcher's sea-loader.js of
// 1.0.102 (and the launcher in 1.0.40's binary, which has neither
// COPILOT_PKG_CACHE_HOME nor COPILOT_CLI_DIST_DIR nor the manifest check):
//
//	if(!r&&i?(r=await Nf(i), ...):!r&&Fs()&&!h?r=await Af():r||(r=await Pf())
//	Fs(){return!(process.argv.includes("--no-auto-update")||process.argv.includes("--prefer-version")||Rh())}
//	Rh(){return process.env.COPILOT_AUTO_UPDATE?.toLowerCase()==="false"}
//	Af(){... Zi("index.js",...e), Ki(t.filter(r=>basename(r)!=="1.0.102"&&Yi(basename(r),"1.0.102")>=0))}
//
// that is: `--prefer-version V` runs the cached package named V (else the
// built-in one); with auto-update on, the newest cached package not older
// than the built-in one; else the built-in one, whose release is the
// package's. A cached package is a folder <root>/pkg/{universal,<platform>}/
// <release>/ holding index.js (Xi() lists the roots, Zi() sorts them newest
// first).
func copilotRelease(installed string, argv []string, env Env) string {
	builtin, ok := parseVersion(installed)
	if !ok {
		return installed
	}
	newer := compare(builtin, version{1, 0, 40}) > 0 // 1.0.40 reads neither variable
	args := argv[1:]
	prefer := ""
	if i := slices.Index(args, "--prefer-version"); i >= 0 && i+1 < len(args) {
		prefer = args[i+1]
	}
	if dist := env.Getenv("COPILOT_CLI_DIST_DIR"); newer && dist != "" && prefer == "" {
		if isFile(filepath.Join(dist, "index.js")) {
			return packageVersion(dist) // a build of its own: its manifest says which
		}
	}
	cached := copilotCached(env, newer)
	switch {
	case prefer != "":
		if slices.ContainsFunc(cached, func(dir string) bool { return filepath.Base(dir) == prefer }) {
			return prefer
		}
		return installed
	case slices.Contains(args, "--no-auto-update") || strings.EqualFold(env.Getenv("COPILOT_AUTO_UPDATE"), "false"):
		return installed
	}
	for _, dir := range cached {
		name := filepath.Base(dir)
		if compareRelease(name, installed) < 0 {
			break // sorted newest first: the built-in one is newer than the rest
		}
		if !newer || copilotComplete(dir) {
			return name
		}
	}
	return installed
}

// copilotCached lists the cached packages, newest first: every folder
// holding index.js in each root's universal and platform folders.
func copilotCached(env Env, newer bool) []string {
	cache := cmp.Or(env.Getenv("XDG_CACHE_HOME"), filepath.Join(env.Home, ".cache"))
	osCache := filepath.Join(cache, "copilot")
	switch runtime.GOOS {
	case "darwin":
		osCache = filepath.Join(env.Home, "Library", "Caches", "copilot")
	case "windows":
		osCache = filepath.Join(cmp.Or(env.Getenv("LOCALAPPDATA"), filepath.Join(env.Home, ".cache")), "copilot")
	}
	var roots []string
	add := func(dir string) {
		if p := filepath.Join(dir, "pkg"); !slices.Contains(roots, p) {
			roots = append(roots, p)
		}
	}
	if v := env.Getenv("COPILOT_PKG_CACHE_HOME"); v != "" && newer {
		add(v)
	}
	if v := env.Getenv("COPILOT_CACHE_HOME"); v != "" {
		add(v)
	}
	add(osCache)
	add(filepath.Join(cache, "copilot"))
	if v := env.Getenv("COPILOT_HOME"); v != "" {
		add(v)
	}
	add(filepath.Join(env.Home, ".copilot"))
	var dirs []string
	for _, root := range roots {
		for _, sub := range []string{"universal", copilotPlatform()} {
			des, err := os.ReadDir(filepath.Join(root, sub))
			if err != nil {
				continue
			}
			for _, de := range des {
				dir := filepath.Join(root, sub, de.Name())
				if isFile(filepath.Join(dir, "index.js")) {
					dirs = append(dirs, dir)
				}
			}
		}
	}
	slices.SortStableFunc(dirs, func(a, b string) int {
		return cmp.Or(compareRelease(filepath.Base(b), filepath.Base(a)), strings.Compare(a, b))
	})
	return dirs
}

// copilotPlatform is the launcher's platform folder: linux-x64,
// linuxmusl-arm64, darwin-arm64, win32-x64.
func copilotPlatform() string {
	osName, arch := runtime.GOOS, runtime.GOARCH
	switch osName {
	case "windows":
		osName = "win32"
	case "linux":
		if m, _ := filepath.Glob("/lib/ld-musl-*"); len(m) > 0 {
			osName = "linuxmusl"
		}
	}
	if arch == "amd64" {
		arch = "x64"
	}
	return osName + "-" + arch
}

// copilotComplete is the launcher's check of a cached package (at()): a
// package whose manifest lists cli-main.js needs it and app.js.
func copilotComplete(dir string) bool {
	b, _, err := safefile.ReadBounded(filepath.Join(dir, "package.json"), 64<<10)
	if err != nil {
		return true
	}
	var pkg struct {
		Files []string `json:"files"`
	}
	if json.Unmarshal(b, &pkg) != nil || !slices.Contains(pkg.Files, "cli-main.js") {
		return true
	}
	return isFile(filepath.Join(dir, "app.js")) && isFile(filepath.Join(dir, "cli-main.js"))
}

// packageVersion is the release in dir's package.json, or "".
func packageVersion(dir string) string {
	b, _, err := safefile.ReadBounded(filepath.Join(dir, "package.json"), 64<<10)
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	if _, ok := parseVersion(pkg.Version); !ok {
		return ""
	}
	return pkg.Version
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// compareRelease orders folder names as the launcher's Yi does: by the
// leading major.minor.patch (a name without one is older than any), then a
// release above its pre-releases, then pre-release fields as semver orders
// them.
func compareRelease(a, b string) int {
	va, okA := leadingVersion(a)
	vb, okB := leadingVersion(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	if c := compare(va, vb); c != 0 {
		return c
	}
	_, preA, hasA := strings.Cut(strings.SplitN(a, "+", 2)[0], "-")
	_, preB, hasB := strings.Cut(strings.SplitN(b, "+", 2)[0], "-")
	switch {
	case hasA != hasB && hasA:
		return -1
	case hasA != hasB:
		return 1
	}
	fa, fb := strings.Split(preA, "."), strings.Split(preB, ".")
	for i := range min(len(fa), len(fb)) {
		na, errA := strconv.Atoi(fa[i])
		nb, errB := strconv.Atoi(fb[i])
		switch {
		case errA == nil && errB == nil && na != nb:
			return cmp.Compare(na, nb)
		case (errA == nil) != (errB == nil) && errA == nil:
			return -1
		case (errA == nil) != (errB == nil):
			return 1
		case fa[i] != fb[i]:
			return strings.Compare(fa[i], fb[i])
		}
	}
	return cmp.Compare(len(fa), len(fb))
}

// leadingVersion reads the major.minor.patch a name starts with.
func leadingVersion(s string) (version, bool) {
	var v version
	for i := range 3 {
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 {
			return version{}, false
		}
		v[i], _ = strconv.Atoi(s[:n])
		s = s[n:]
		if i < 2 {
			if !strings.HasPrefix(s, ".") {
				return version{}, false
			}
			s = s[1:]
		}
	}
	return v, true
}

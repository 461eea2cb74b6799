package wrapper

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/registry"
)

// outputAdvice is what a refused --record or --log-file is told.
const outputAdvice = "give it a new file, or one of your own, in a folder that only you can write (mkdir -m 0700 DIR)"

// LogFile is --log-file's FILE, open to append padrun's logs.
type LogFile struct {
	*os.File
	created bool // padrun made it: removed again when the run refuses it
}

// OpenLog opens --log-file's FILE with openOutput's rules. It runs before
// the run knows what it guards: resolve then refuses a log that is one of
// its session files.
func OpenLog(path string) (*LogFile, error) {
	f, created, err := openOutput("--log-file", path, false, nil)
	if err != nil {
		return nil, err
	}
	return &LogFile{f, created}, nil
}

// checkLog refuses a log that is one of the run's session files, and
// removes it again when padrun created it for this run.
func checkLog(lf *LogFile, files []string) error {
	err := notSessionFile("--log-file", lf.Name(), files)
	if err != nil && lf.created {
		if fi, serr := lf.Stat(); serr == nil && fi.Size() == 0 {
			if li, lerr := os.Lstat(lf.Name()); lerr == nil && os.SameFile(fi, li) {
				os.Remove(lf.Name()) // Best effort: the empty file this run made.
			}
		}
	}
	return err
}

// openOutput opens the FILE of --record (trunc) or --log-file (append):
// never a session file (one this run guards, or one with a marker or lock
// beside it: another padrun holds or held it), never a marker or lock, and
// otherwise as safefile.OpenOutput (no symlink followed, only the user's
// own regular file). Each refusal is 125, naming the flag, the path and why.
func openOutput(flag, path string, trunc bool, guarded []string) (*os.File, bool, error) {
	if err := notSessionFile(flag, path, guarded); err != nil {
		return nil, false, err
	}
	f, created, err := safefile.OpenOutput(path, trunc)
	if err != nil {
		return nil, false, &UsageError{Err: errorf(flag, err), Advice: outputAdvice}
	}
	return f, created, nil
}

// notSessionFile refuses an output path that names a session file or a
// file that guards one, by the name the kernel opens: its folder resolved,
// its last component as it is (it is never followed).
func notSessionFile(flag, path string, guarded []string) error {
	dir, err := Resolve(filepath.Dir(path))
	if err != nil {
		return &UsageError{Err: errorf(flag, err)}
	}
	name := filepath.Join(dir, filepath.Base(path))
	why := ""
	switch {
	case marker.IsGuardFile(name):
		why = "is a marker or lock of padrun's: padrun never writes its output there"
	case slices.Contains(guarded, name):
		why = "is a session file this run guards: padrun never writes its output into a session"
	case inRegistry(dir):
		why = "is in the registry folder: padrun never writes its output among the records and their lock"
	default:
		if g := marker.GuardBeside(name); g != "" {
			why = "is a session file (" + filepath.Base(g) + " lies beside it): padrun never writes its output into a session"
		}
	}
	if why == "" {
		return nil
	}
	return &UsageError{Err: errorf(flag, &safefile.HostileError{Path: path, Why: why}), Advice: outputAdvice}
}

// inRegistry reports whether dir, resolved, is the registry folder.
func inRegistry(dir string) bool {
	reg, err := registry.Dir()
	if err != nil {
		return false
	}
	r, err := Resolve(reg)
	return err == nil && r == dir
}

// flagError prefixes an error with the flag whose value it is about.
type flagError struct {
	flag string
	err  error
}

func (e *flagError) Error() string { return e.flag + " " + e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func errorf(flag string, err error) error { return &flagError{flag, err} }

package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports_Downward: imports flow cmd/padrun -> wrapper -> {supervise,
// marker, registry}; marker (the verdict ladder, the hold in etcd) imports
// no package of supervise (a run hands etcdhold supervise/reap's Start and
// Wait for its TLS helper), and cmd/padrun reaches supervise only through
// wrapper.
func TestImports_Downward(t *testing.T) {
	const mod = "github.com/padrun/padrun/"
	banned := map[string]string{
		"../../marker": mod + "supervise",
		".":            mod + "supervise",
	}
	for dir, prefix := range banned {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				if d != nil && d.IsDir() && d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == prefix || strings.HasPrefix(p, prefix+"/") {
					t.Errorf("%s imports %s: it reaches it through a package below it", path, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

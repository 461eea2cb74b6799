package wrapper

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the only places below cmd (main, the edge) that read the
// process's environment: Env, and the registry's folder, which the run, the
// verbs and --log-file's check all find through registry.Dir.
var envReaders = map[string]bool{
	"wrapper/env.go":       true,
	"registry/registry.go": true,
	// Test helpers, built only into test binaries: a helper child reads
	// what its test set for it.
	"supervise/childtest/childtest.go": true,
}

// The environment is read at the edge and passed down: a package that
// reads a variable itself parses it its own way.
func TestEnv_ReadAtTheEdgeOnly(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == "cmd" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && rel != ".":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		osName := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "os" {
				osName = "os"
				if im.Name != nil {
					osName = im.Name.Name
				}
			}
		}
		if osName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == osName {
				switch sel.Sel.Name {
				case "Getenv", "LookupEnv", "Environ", "ExpandEnv":
					if !envReaders[rel] {
						t.Errorf("%s reads the environment (os.%s): take it from Env, which main reads", rel, sel.Sel.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

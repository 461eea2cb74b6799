package main

import (
	"os"
	"regexp"
	"testing"
)

// Comments cite the contract as docs/spec.md §N: each section they name is
// one the document has, so a renumbered section breaks this test, not the
// reader's trust in the comment.
func TestSpecReferences_NameSectionsThatExist(t *testing.T) {
	spec, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,3} (\d+(?:\.\d+)?)\.? `).FindAllStringSubmatch(string(spec), -1) {
		have[m[1]] = true
	}
	if len(have) < 20 {
		t.Fatalf("found only %d sections in docs/spec.md", len(have))
	}
	cite := regexp.MustCompile(`docs/spec\.md\s+(?://\s*)?§(\d+(?:\.\d+)?)`)
	n := 0
	for path, src := range sources(t) {
		for _, m := range cite.FindAllStringSubmatch(src, -1) {
			n++
			if !have[m[1]] {
				t.Errorf("%s cites docs/spec.md §%s, which it does not have", path, m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d citations of docs/spec.md", n)
	}
}

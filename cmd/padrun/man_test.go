package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
)

var updateMan = flag.Bool("update-man", false, "rewrite padrun.1 from the help text")

// The man page is made from the help's own data; this test fails when the
// checked-in padrun.1 is not what the help says now. Regenerate it with
// go generate ./cmd/padrun (go test -run TestManPage -update-man).
func TestManPage(t *testing.T) {
	var b bytes.Buffer
	manPage(&b)
	if *updateMan {
		if err := os.WriteFile("padrun.1", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile("padrun.1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("cmd/padrun/padrun.1 is not current with the help text: run go generate ./cmd/padrun")
	}
	// An empty line in roff is a blank line in the page (the SYNOPSIS had
	// one after a verb that takes no arguments).
	if i := bytes.Index(have, []byte("\n\n")); i >= 0 {
		t.Fatalf("padrun.1 has an empty line after %q", have[max(0, i-40):i])
	}
	if !bytes.Contains(have, []byte("\n.SH EXAMPLES\n")) {
		t.Fatal("padrun.1 has no EXAMPLES")
	}
	if _, err := exec.LookPath("groff"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no groff to check that padrun.1 renders (CI is set: nothing may be skipped)")
		}
		t.Skip("skipped: no groff to check that padrun.1 renders (./test.sh installs it)")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", "padrun.1")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("groff warns about padrun.1: %v\n%s", err, out)
	}
}

// roff escapes text for a man page line.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`, "'", `\(aq`, `"`, `\(dq`).Replace(s)
	if strings.HasPrefix(s, ".") {
		s = `\&` + s
	}
	return s
}

// manPage writes padrun.1 from the same verbs, flags, variables and exit
// statuses as the help.
func manPage(w io.Writer) {
	fmt.Fprintf(w, ".\\\" Generated from padrun's help by go generate ./cmd/padrun: do not edit.\n")
	fmt.Fprintf(w, ".TH PADRUN 1 \"\" \"padrun %s\" \"User Commands\"\n", wrapper.Version)
	fmt.Fprintf(w, ".SH NAME\npadrun \\- %s\n.SH SYNOPSIS\n", roff(summary))
	fmt.Fprint(w, ".B padrun\n[\\fIflags\\fR] [\\fB\\-\\-\\fR] \\fICOMMAND\\fR [\\fIARG\\fR...]\n")
	for _, v := range shownVerbs() {
		fmt.Fprintf(w, ".br\n.B padrun %s\n", v.name)
		if args := strings.TrimSpace(strings.TrimPrefix(v.synopsis(), "padrun "+v.name)); args != "" {
			fmt.Fprintln(w, roff(args)) // an empty line here would be a blank line
		}
	}
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n.SH EXAMPLES\n", roff(strings.ReplaceAll(description(), "\n", " ")))
	for _, e := range examples {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(e.name), roff(e.desc))
	}
	fmt.Fprint(w, ".SH OPTIONS\n")
	manFlags(w, runFlagSet())
	fmt.Fprint(w, ".SH COMMANDS\n")
	for _, v := range shownVerbs() {
		fmt.Fprintf(w, ".SS %s\n%s\n", roff(v.synopsis()), roff(v.summary))
		fs, _, _ := v.flagSet()
		fmt.Fprint(w, ".RS\n")
		manFlags(w, fs)
		fmt.Fprint(w, ".RE\n")
	}
	fmt.Fprint(w, ".SH ENVIRONMENT\n")
	for _, e := range envVars() {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", e.name, roff(e.desc))
	}
	fmt.Fprint(w, ".SH EXIT STATUS\n")
	for _, e := range exitStatuses {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(e.name), roff(e.desc))
	}
	fmt.Fprint(w, ".SH SEE ALSO\n.BR flock (1),\n.BR timeout (1)\n")
}

func manFlags(w io.Writer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		name := `\fB\-\-` + roff(f.Name) + `\fR`
		if f.Shorthand != "" {
			name = `\fB\-` + f.Shorthand + `\fR, ` + name
		}
		if arg := flagArg(f); arg != "" {
			name += ` \fI` + arg + `\fR`
		}
		fmt.Fprintf(w, ".TP\n%s\n%s\n", name, roff(flagText(f)))
	})
}

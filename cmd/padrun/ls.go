package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/registry"
)

// The columns of ls's table, and the order in which they give way to fit
// the width: each step narrows a column down to a width, the session
// folder first, the file last.
var (
	lsHeader = []string{"AGENT", "PID", "STATE", "HARNESS", "MODE", "SESSION", "FILE", "CWD", "AGE"}
	lsShrink = [][2]int{{7, 16}, {5, 8}, {0, 10}, {7, 8}, {6, 12}, {0, 5}} // column, width
)

const colSession = 5

// printTable writes ls's rows as a table: one line per session, and one more
// per guarded file past the first. Paths under the home folder start with
// ~. A width > 0 is the most the lines may take: long cells are cut in the
// middle (a session id keeps its start, which the harnesses accept as a
// prefix); 0 cuts nothing.
func printTable(w io.Writer, rows []registry.Entry, now time.Time, width int) {
	home, _ := os.UserHomeDir() // Best effort: paths are then shown whole.
	table := [][]string{lsHeader}
	for _, e := range rows {
		var files []string
		if e.Padrun != nil {
			files = e.Padrun.SessionFiles
		}
		file := "-"
		if len(files) > 0 {
			file = tilde(files[0], home)
		}
		table = append(table, []string{dash(e.Agent), pidOf(e), e.Liveness.String(), harnessOf(e), dash(modeOf(e)),
			dash(e.SessionID), file, dash(tilde(e.Cwd, home)), age(now.Sub(e.Time))})
		for _, f := range files[min(1, len(files)):] {
			table = append(table, []string{"", "", "", "", "", "", tilde(f, home), "", ""})
		}
	}
	for _, row := range table {
		for c := range row {
			row[c] = shown(row[c]) // measured as shown
		}
	}
	widths := fit(table, width)
	var b strings.Builder
	for _, row := range table {
		b.Reset()
		for c, cell := range row {
			cell = cut(cell, widths[c], c == colSession)
			if c == len(row)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[c]-runeLen(cell)+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func modeOf(e registry.Entry) string {
	if e.Padrun != nil {
		return e.Padrun.Mode
	}
	return ""
}

// fit returns the columns' widths: each column's widest cell, narrowed
// by lsShrink while the lines are wider than width.
func fit(table [][]string, width int) []int {
	widths := make([]int, len(lsHeader))
	for _, row := range table {
		for c, cell := range row {
			widths[c] = max(widths[c], runeLen(cell))
		}
	}
	total := 2 * (len(widths) - 1)
	for _, n := range widths {
		total += n
	}
	for _, step := range lsShrink {
		c, least := step[0], step[1]
		for width > 0 && total > width && widths[c] > least {
			widths[c]--
			total--
		}
	}
	return widths
}

// cut shortens s to n runes: an id keeps its start; a path its file name
// when that leaves room for some of its start, else more of its end than
// of its start, with "..." between.
func cut(s string, n int, id bool) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if id || n < 5 {
		return string(r[:n])
	}
	keep := n - 3
	tail := keep - keep*2/5
	if base := runeLen(filepath.Base(s)) + 1; base <= keep-4 {
		tail = base
	}
	return string(r[:keep-tail]) + "..." + string(r[len(r)-tail:])
}
func runeLen(s string) int { return len([]rune(s)) }

// tilde writes path with ~ for the home folder.
func tilde(path, home string) string {
	if home == "" || home == "/" || path == "" {
		return path
	}
	if path == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return path
}

// tableWidth is the width ls fits its table to: $COLUMNS, else the width
// of the terminal stdout is, else 0 (a pipe or a file: nothing is cut).
func tableWidth(stdout io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := stdout.(*os.File); ok {
		return terminalWidth(f)
	}
	return 0
}

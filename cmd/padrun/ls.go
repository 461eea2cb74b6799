package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// The columns of ls's table. A table wider than the screen keeps every
// session file's name whole: the files go to lines of their own under their
// session's row, and the other columns give way in lsShrink's order (each
// step narrows a column down to a width: the session id first).
var (
	lsHeader = []string{"AGENT", "PID", "STATE", "HARNESS", "MODE", "SESSION", "FILE", "CWD", "AGE"}
	lsShrink = [][2]int{{colSession, 8}, {colCwd, 16}, {colCwd, 10}, {colMode, 5}, {colAgent, 8}, {colCwd, 5}} // column, width
)

const (
	colAgent   = 0
	colMode    = 4
	colSession = 5
	colFile    = 6
	colCwd     = 7
)

// printTable writes ls's rows as a table: one line per session, and one more
// per guarded file past the first. Paths under the home folder start with
// ~. A width > 0 is the most the lines may take: when the table is wider,
// the files are listed under their rows, cut in their folder only, and the
// other long cells are cut in the middle (a session id keeps its start,
// which the harnesses accept as a prefix); 0 cuts nothing.
func printTable(w io.Writer, rows []registry.Entry, now time.Time, width int) {
	home, _ := os.UserHomeDir() // Best effort: paths are then shown whole.
	table := [][]string{lsHeader}
	var files [][]string // per row of table, the files of its session
	files = append(files, nil)
	for _, e := range rows {
		var fs []string
		state := e.Liveness.String()
		if e.Padrun != nil {
			files := e.Padrun.SessionFiles
			if len(e.Padrun.WaitingFor) > 0 && e.Liveness == ident.Alive {
				state, files = "queued", e.Padrun.WaitingFor // --wait: it holds nothing yet
			}
			for _, f := range files {
				fs = append(fs, shown(tilde(f, home)))
			}
		}
		file := "-"
		if len(fs) > 0 {
			file = fs[0]
		}
		table = append(table, []string{dash(e.Agent), pidOf(e), state, harnessOf(e), dash(modeOf(e)),
			dash(e.SessionID), file, dash(tilde(e.Cwd, home)), age(now.Sub(e.Time))})
		files = append(files, fs)
		for _, f := range fs[min(1, len(fs)):] {
			table = append(table, []string{"", "", "", "", "", "", f, "", ""})
			files = append(files, nil)
		}
	}
	for _, row := range table {
		for c := range row {
			row[c] = shown(row[c]) // measured as shown
		}
	}
	if widths := fit(table, 0); width <= 0 || total(widths) <= width {
		writeRows(w, table, widths)
		return
	}
	// Too wide: the files under their rows, the rest fitted.
	var narrow [][]string
	var under [][]string
	for i, row := range table {
		if i > 0 && row[0] == "" && row[1] == "" {
			continue // a further file: listed under its row
		}
		narrow = append(narrow, slices.Delete(slices.Clone(row), colFile, colFile+1))
		under = append(under, files[i])
	}
	widths := fit(narrow, width)
	for i, row := range narrow {
		writeRows(w, [][]string{row}, widths)
		for _, f := range under[i] {
			fmt.Fprintln(w, "  "+cutFolder(f, width-2))
		}
	}
}

// writeRows writes rows in columns of widths, cutting what is wider.
func writeRows(w io.Writer, rows [][]string, widths []int) {
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for c, cell := range row {
			cell = cut(cell, widths[c], c == colSession) // before FILE: the same in both tables
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

// total is the width of a table whose columns have widths, two spaces
// between them.
func total(widths []int) int {
	n := 2 * (len(widths) - 1)
	for _, c := range widths {
		n += c
	}
	return n
}

// cutFolder shortens a path to n runes by cutting its folder in the middle:
// the file's name is kept whole, however long.
func cutFolder(path string, n int) string {
	if runeLen(path) <= n {
		return path
	}
	dir, name := filepath.Split(path)
	room := n - runeLen(name) - 3
	if room < 2 {
		return ".../" + name
	}
	d := []rune(dir)
	head := room - room/2
	return string(d[:head]) + "..." + string(d[len(d)-(room-head):]) + name
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
	widths := make([]int, len(table[0]))
	for _, row := range table {
		for c, cell := range row {
			widths[c] = max(widths[c], runeLen(cell))
		}
	}
	sum := total(widths)
	for _, step := range lsShrink {
		c, least := step[0], step[1]
		if len(widths) < len(lsHeader) && c > colFile {
			c-- // a table without its FILE column
		}
		for width > 0 && sum > width && widths[c] > least {
			widths[c]--
			sum--
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

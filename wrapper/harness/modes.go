package harness

import (
	"fmt"
	"strings"
	"sync"
)

// Guard is how one mode of a harness is guarded: by a test that shows a
// second writer kept out of a held session (By, a script in
// cmd/padrun/testdata), or unknown, with the harness's fact that leaves it
// so (Why). A mode the harness does not have is not listed.
type Guard struct {
	Mode string
	By   string
	Why  string
}

// Guarded reports whether the mode is guarded.
func (g Guard) Guarded() bool { return g.By != "" }

// The modes of docs/harnesses.md's table, in its order.
const (
	ModePrintRun  = "print"
	ModeJSONOut   = "json"
	ModeRPCOrACP  = "rpc/acp"
	ModeTUIStart  = "TUI start"
	ModePicker    = "picker"
	ModeInAppSwap = "in-app switch"
	ModeServer    = "server"
)

// TableModes are the table's columns.
var TableModes = []string{ModePrintRun, ModeJSONOut, ModeRPCOrACP, ModeTUIStart, ModePicker, ModeInAppSwap, ModeServer}

func guarded(mode, by string) Guard  { return Guard{Mode: mode, By: by} }
func unknown(mode, why string) Guard { return Guard{Mode: mode, Why: why} }

// modeTable is how each mode of each harness is guarded, by harness,
// built at its first use (doctor and docs ask for it, a run does not).
var modeTable = sync.OnceValue(func() map[string][]Guard {
	return map[string][]Guard{
		"pi": {guarded(ModePrintRun, "pi_print"), guarded(ModeJSONOut, "pi_json_rpc"), guarded(ModeRPCOrACP, "pi_companion_rpc"),
			guarded(ModeTUIStart, "pi_interactive"), guarded(ModePicker, "pi_picker_held"), guarded(ModeInAppSwap, "pi_companion_tui")},
		"omp": {guarded(ModePrintRun, "omp_print"), guarded(ModeJSONOut, "omp_print"), guarded(ModeRPCOrACP, "omp_print"),
			guarded(ModeTUIStart, "omp_tui"), guarded(ModePicker, "omp_tui"), guarded(ModeInAppSwap, "omp_tui")},
		"claude": {guarded(ModePrintRun, "claude"), guarded(ModeJSONOut, "claude_modes"), guarded(ModeRPCOrACP, "claude_modes"),
			guarded(ModeTUIStart, "claude_companion_tui"), guarded(ModePicker, "claude_picker"),
			guarded(ModeInAppSwap, "claude_companion_tui"),
			unknown(ModeServer, "--bg hands the session to claude's background daemon, which is not padrun's child")},
		"codex": {guarded(ModePrintRun, "codex"), guarded(ModeJSONOut, "codex_modes"),
			guarded(ModeTUIStart, "codex_modes"), unknown(ModePicker, "resume without an id picks by codex's own database"),
			unknown(ModeInAppSwap, "codex has no hook that runs before it opens another session")},
		"gemini": {guarded(ModePrintRun, "gemini_wrapped"), guarded(ModeJSONOut, "gemini_modes"),
			guarded(ModeRPCOrACP, "gemini_modes"),
			guarded(ModeTUIStart, "gemini_nonroot"), guarded(ModeInAppSwap, "gemini_companion_tui")},
		"qwen": {guarded(ModePrintRun, "qwen_ids"), guarded(ModeJSONOut, "qwen_modes"),
			guarded(ModeRPCOrACP, "qwen_modes"), guarded(ModeTUIStart, "qwen_companion"),
			guarded(ModePicker, "qwen_companion"), guarded(ModeInAppSwap, "qwen_companion")},
		"copilot": {guarded(ModePrintRun, "copilot_claim"), guarded(ModeJSONOut, "copilot_modes"),
			guarded(ModeRPCOrACP, "copilot_acp"),
			guarded(ModeTUIStart, "copilot_tui_resume"), guarded(ModePicker, "copilot_picker"),
			guarded(ModeInAppSwap, "copilot_tui_resume"), unknown(ModeServer, "--connect runs the session on a remote host")},
		"opencode": {guarded(ModePrintRun, "opencode_guard"), guarded(ModeJSONOut, "opencode_modes"),
			guarded(ModeRPCOrACP, "opencode_held_rows"), guarded(ModeTUIStart, "opencode_tui_rows"),
			guarded(ModeInAppSwap, "opencode_tui_rows"), guarded(ModeServer, "opencode_held_rows")},
		"kilo": {guarded(ModePrintRun, "kilo_guard"), guarded(ModeJSONOut, "kilo_modes"), guarded(ModeRPCOrACP, "kilo_held_rows"),
			guarded(ModeTUIStart, "kilo_tui_rows"), guarded(ModeInAppSwap, "kilo_tui_rows"), guarded(ModeServer, "kilo_held_rows")},
		"droid": {guarded(ModePrintRun, "droid_tui"), unknown(ModeJSONOut, droidExecResume), unknown(ModeRPCOrACP, droidExecResume),
			guarded(ModeTUIStart, "droid_tui"), guarded(ModePicker, "droid_switch"), guarded(ModeInAppSwap, "droid_switch")},
		"cline": {guarded(ModePrintRun, "cline_print"), guarded(ModeJSONOut, "cline_print"),
			unknown(ModeRPCOrACP, "an ACP client's session/load names the session after the start, and cline runs no hook that can refuse it"),
			guarded(ModeTUIStart, "cline_tui"), unknown(ModePicker, clineNoVeto), unknown(ModeInAppSwap, clineNoVeto),
			unknown(ModeServer, "--zen and the hub daemon: the daemon writes the session and goes on after the run")},
	}
})

// What leaves droid's modes untested offline (docs/harnesses.md).
const droidExecResume = "droid exec -s ID loads the session from Factory's API, which airgap mode refuses: untested offline"

// clineNoVeto is why cline's history picker and in-app switches are not
// guarded: nothing runs before cline rewrites the session it opens.
const clineNoVeto = "cline's hooks cannot veto a turn and a plugin's beforeRun comes after the prompt is written"

// Modes lists how each mode of the harness name is guarded, for padrun
// doctor and docs/harnesses.md (TestModes_Documented keeps the table
// there equal to this, and each By a script that exists).
func Modes(name string) []Guard { return modeTable()[name] }

// ModesTable is docs/harnesses.md's table of harness x mode.
func ModesTable() string {
	var b strings.Builder
	b.WriteString("| harness | " + strings.Join(TableModes, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---|", len(TableModes)) + "\n")
	for _, name := range Names() {
		cells := make([]string, len(TableModes))
		for i := range cells {
			cells[i] = "-"
		}
		for _, g := range Modes(name) {
			for i, m := range TableModes {
				if m != g.Mode {
					continue
				}
				if g.Guarded() {
					cells[i] = fmt.Sprintf("guarded (`%s`)", g.By)
				} else {
					cells[i] = "unknown: " + g.Why
				}
			}
		}
		b.WriteString("| " + name + " | " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

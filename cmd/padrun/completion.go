package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

// The completion scripts are written from the same verbs and flags as the
// help: a flag added there completes everywhere.

func setupCompletion(*pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, _ io.Writer) error {
		switch args[0] {
		case "bash":
			bashCompletion(stdout)
		case "zsh":
			zshCompletion(stdout)
		case "fish":
			fishCompletion(stdout)
		default:
			return &wrapper.UsageError{Err: fmt.Errorf("completion: unknown shell %q", args[0]), Advice: "padrun completion bash|zsh|fish"}
		}
		return nil
	}
}

// valueKind says what a flag's value completes to: "file", "dir", a list
// of words, or "" for anything.
func valueKind(name string) (kind string, words []string) {
	switch name {
	case "guard", "record", "log-file":
		return "file", nil
	case "cwd":
		return "dir", nil
	case "harness":
		return "words", append(harness.Names(), harness.None)
	case "log-level":
		return "words", []string{"debug", "info", "warn", "error"}
	case "log-format":
		return "words", []string{"console", "json"}
	}
	return "", nil
}

// argKind says what a verb's arguments complete to.
func argKind(v *verb) (kind string, words []string) {
	switch v.name {
	case "status", "unlock":
		return "jsonl", nil
	case "help":
		return "words", strings.Fields(verbNames2())
	case "completion":
		return "words", []string{"bash", "zsh", "fish"}
	}
	return "none", nil
}

func verbNames2() string { return strings.ReplaceAll(verbNames(), ",", "") }

// flagNames lists a flag set's flags as the shell types them.
func flagNames(fs *pflag.FlagSet) (all, valued []string) {
	fs.VisitAll(func(f *pflag.Flag) {
		all = append(all, "--"+f.Name)
		if f.Shorthand != "" {
			all = append(all, "-"+f.Shorthand)
		}
		if flagArg(f) != "" {
			valued = append(valued, "--"+f.Name)
		}
	})
	return all, valued
}

func bashCompletion(w io.Writer) {
	fmt.Fprint(w, `# bash completion for padrun. Load it with: source <(padrun completion bash)
_padrun_value() {
  case $1 in
`)
	seen := map[string]bool{}
	each := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			kind, words := valueKind(f.Name)
			if seen[f.Name] || kind == "" {
				return
			}
			seen[f.Name] = true
			switch kind {
			case "file":
				fmt.Fprintf(w, "  --%s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$2\")) ;;\n", f.Name)
			case "dir":
				fmt.Fprintf(w, "  --%s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$2\")) ;;\n", f.Name)
			default:
				fmt.Fprintf(w, "  --%s) COMPREPLY=($(compgen -W %q -- \"$2\")) ;;\n", f.Name, strings.Join(words, " "))
			}
		})
	}
	each(runFlagSet())
	for _, v := range shownVerbs() {
		fs, _, _ := v.flagSet()
		each(fs)
	}
	fmt.Fprint(w, "  *) COMPREPLY=() ;;\n  esac\n}\n\n_padrun() {\n")
	fmt.Fprint(w, "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i=1 w flags valued\n")
	fmt.Fprint(w, "  case ${COMP_WORDS[1]} in\n")
	for _, v := range shownVerbs() {
		fs, _, _ := v.flagSet()
		all, valued := flagNames(fs)
		fmt.Fprintf(w, "  %s)\n    if (( COMP_CWORD == 1 )); then COMPREPLY=(%s); return; fi\n", v.name, v.name)
		if len(valued) > 0 {
			fmt.Fprintf(w, "    case $prev in %s) _padrun_value \"$prev\" \"$cur\"; return ;; esac\n", strings.Join(valued, "|"))
		}
		fmt.Fprintf(w, "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(all, " "))
		switch kind, words := argKind(v); kind {
		case "jsonl":
			fmt.Fprint(w, "    compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -X '!*.jsonl' -- \"$cur\") $(compgen -d -- \"$cur\")) ;;\n")
		case "words":
			fmt.Fprintf(w, "    (( COMP_CWORD == 2 )) && COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(words, " "))
		default:
			fmt.Fprint(w, "    COMPREPLY=() ;;\n")
		}
	}
	all, valued := flagNames(runFlagSet())
	fmt.Fprintf(w, "  *)\n    flags=%q valued=%q\n", strings.Join(all, " "), " "+strings.Join(valued, " ")+" ")
	fmt.Fprint(w, `    # The run's flags come first, then the command and its arguments.
    while (( i < COMP_CWORD )); do
      w=${COMP_WORDS[i]}
      if [[ $w == -- ]]; then (( i++ )); break; fi
      [[ $w == -* ]] || break
      [[ $valued == *" $w "* ]] && (( i++ ))
      (( i++ ))
    done
    if (( i > COMP_CWORD )); then _padrun_value "$prev" "$cur"; return; fi
    if (( i < COMP_CWORD )); then
      if declare -F _command_offset >/dev/null; then _command_offset "$i"
      else compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); fi
      return
    fi
    if [[ $cur == -* && ${COMP_WORDS[i-1]} != -- ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); return; fi
`)
	fmt.Fprintf(w, "    (( i == 1 )) && COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", verbNames2())
	fmt.Fprint(w, "    COMPREPLY+=($(compgen -c -- \"$cur\")) ;;\n  esac\n}\n")
	fmt.Fprint(w, "complete -F _padrun padrun\n")
}

// zshQuote makes s safe inside a single-quoted _arguments spec.
func zshQuote(s string) string {
	return strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

// zshSpecs are _arguments specs for a flag set.
func zshSpecs(fs *pflag.FlagSet) []string {
	var specs []string
	fs.VisitAll(func(f *pflag.Flag) {
		_, text := pflag.UnquoteUsage(f)
		spec := "[" + zshQuote(text) + "]"
		if arg := flagArg(f); arg != "" {
			spec = "=" + spec + ":" + strings.ToLower(arg) + ":"
			switch kind, words := valueKind(f.Name); kind {
			case "file":
				spec += "_files"
			case "dir":
				spec += "_files -/"
			case "words":
				spec += "(" + strings.Join(words, " ") + ")"
			}
		}
		switch {
		case f.Shorthand != "":
			specs = append(specs, "{-"+f.Shorthand+",--"+f.Name+"}'"+spec+"'")
		case f.Name == "guard":
			specs = append(specs, "'*--"+f.Name+spec+"'")
		default:
			specs = append(specs, "'--"+f.Name+spec+"'")
		}
	})
	return specs
}

func zshCompletion(w io.Writer) {
	fmt.Fprint(w, `#compdef padrun
# zsh completion for padrun. Load it with: source <(padrun completion zsh)
# after compinit, or save it as _padrun in a folder of $fpath.
_padrun() {
  local -a verbs
  verbs=(
`)
	for _, v := range shownVerbs() {
		fmt.Fprintf(w, "    '%s:%s'\n", v.name, zshQuote(v.short))
	}
	fmt.Fprint(w, "  )\n  local curcontext=$curcontext state line ret=1\n  case $words[2] in\n")
	for _, v := range shownVerbs() {
		fs, _, _ := v.flagSet()
		args := zshSpecs(fs)
		switch kind, words := argKind(v); kind {
		case "jsonl":
			args = append(args, `'*:session file:_files -g "*.jsonl(-.)"'`)
		case "words":
			args = append(args, "'1:"+v.args+":("+strings.Join(words, " ")+")'")
		}
		fmt.Fprintf(w, "  %s)\n    (( CURRENT > 2 )) || { _describe -t verbs verb verbs; return }\n", v.name)
		fmt.Fprintf(w, "    words=(${words[2,-1]}); (( CURRENT-- ))\n    _arguments -s %s\n    return ;;\n", strings.Join(args, " "))
	}
	fmt.Fprintf(w, "  esac\n  _arguments -S -A '-*' %s \\\n", strings.Join(zshSpecs(runFlagSet()), " "))
	fmt.Fprint(w, `    '1: :->command' '*:: :->args' && ret=0
  case $state in
  command)
    (( CURRENT == 2 )) && _describe -t verbs verb verbs && ret=0
    _command_names -e && ret=0 ;;
  args) _normal && ret=0 ;;
  esac
  return ret
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _padrun "$@"
else
  compdef _padrun padrun
fi
`)
}

func fishCompletion(w io.Writer) {
	fs := runFlagSet()
	_, valued := flagNames(fs)
	fmt.Fprintf(w, `# fish completion for padrun. Load it with: padrun completion fish | source
# or save it as ~/.config/fish/completions/padrun.fish.

# __padrun_command prints where the command of a run starts among the
# words typed so far (1 is padrun), or nothing while flags may come.
function __padrun_command
    set -l words (commandline -opc)
    set -l i 2
    contains -- "$words[2]" %s; and return
    while test $i -le (count $words)
        switch $words[$i]
            case --
                math $i + 1
                return
            case %s
                set i (math $i + 2)
            case '-*'
                set i (math $i + 1)
            case '*'
                echo $i
                return
        end
    end
end

function __padrun_before_command
    set -l at (__padrun_command)
    test -z "$at"; or test $at -gt (count (commandline -opc))
end

function __padrun_in_command
    set -l at (__padrun_command)
    test -n "$at"; and test $at -le (count (commandline -opc))
end

function __padrun_complete_command
    set -l words (commandline -opc)
    set -l at (__padrun_command)
    complete -C (string join -- ' ' (string escape -- $words[$at..-1]) (commandline -ct))
end

function __padrun_verb
    set -l words (commandline -opc)
    test (count $words) -ge 2; and contains -- $words[2] $argv
end

# Session files: *.jsonl, and folders to find them in.
function __padrun_session_files
    __fish_complete_suffix .jsonl | string match -r -- '^.*(?:\.jsonl|/)(?:\t.*)?$'
end

function __padrun_first
    test (count (commandline -opc)) -eq 1
end

complete -c padrun -n __padrun_in_command -f -a '(__padrun_complete_command)'
complete -c padrun -n '__padrun_before_command; and not __padrun_verb %s' -f -a '(__fish_complete_command)'
`, verbNames2(), strings.Join(valued, " "), verbNames2())
	for _, v := range shownVerbs() {
		fmt.Fprintf(w, "complete -c padrun -n __padrun_first -f -a %s -d '%s'\n", v.name, fishQuote(v.short))
	}
	fishFlags(w, fs, "__padrun_before_command; and not __padrun_verb "+verbNames2())
	for _, v := range shownVerbs() {
		vfs, _, _ := v.flagSet()
		cond := "__padrun_verb " + v.name
		fishFlags(w, vfs, cond)
		switch kind, words := argKind(v); kind {
		case "jsonl":
			fmt.Fprintf(w, "complete -c padrun -n '%s' -f -k -a '(__padrun_session_files)'\n", cond)
		case "words":
			fmt.Fprintf(w, "complete -c padrun -n '%s; and test (count (commandline -opc)) -eq 2' -f -a '%s'\n", cond, strings.Join(words, " "))
		default:
			fmt.Fprintf(w, "complete -c padrun -n '%s' -f\n", cond)
		}
	}
}

func fishQuote(s string) string { return strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) }

func fishFlags(w io.Writer, fs *pflag.FlagSet, cond string) {
	fs.VisitAll(func(f *pflag.Flag) {
		_, text := pflag.UnquoteUsage(f)
		line := fmt.Sprintf("complete -c padrun -n '%s' -l %s", cond, f.Name)
		if f.Shorthand != "" {
			line += " -s " + f.Shorthand
		}
		if flagArg(f) != "" {
			switch kind, words := valueKind(f.Name); kind {
			case "file":
				line += " -r -F"
			case "dir":
				line += " -x -a '(__fish_complete_directories)'"
			case "words":
				line += " -x -a '" + strings.Join(words, " ") + "'"
			default:
				line += " -x"
			}
		} else {
			line += " -f"
		}
		fmt.Fprintf(w, "%s -d '%s'\n", line, fishQuote(text))
	})
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
)

// logFlags configure zerolog. Logs go to stderr only: stdout is the child's.
type logFlags struct {
	level, format, file string
}

func (f *logFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.level, "log-level", "", "log `LEVEL`: debug, info, warn, error (default warn; $PADRUN_LOG_LEVEL)")
	fs.StringVar(&f.format, "log-format", "", "log `FORMAT`: console or json (default console; $PADRUN_LOG_FORMAT)")
	fs.StringVar(&f.file, "log-file", "", "append logs to `PATH` instead of stderr ($PADRUN_LOG_FILE)")
}

// logs is padrun's logger and whether it writes JSON.
type logs struct {
	zerolog.Logger
	json bool
	file *wrapper.LogFile // --log-file's, when given
}

// logger builds the logger: flags, then the environment, then defaults.
func (f logFlags) logger(stderr io.Writer) (logs, error) {
	level := orEnv(f.level, "PADRUN_LOG_LEVEL", "warn")
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return newLogger(logFlags{}, stderr), usagef("unknown log level %q (want debug, info, warn or error)", level)
	}
	f.format = orEnv(f.format, "PADRUN_LOG_FORMAT", "console")
	if f.format != "console" && f.format != "json" {
		return newLogger(logFlags{}, stderr), usagef("unknown log format %q (want console or json)", f.format)
	}
	out := stderr
	var file *wrapper.LogFile
	if path := orEnv(f.file, "PADRUN_LOG_FILE", ""); path != "" {
		if file, err = wrapper.OpenLog(path); err != nil {
			return newLogger(logFlags{}, stderr), err
		}
		out = file // open until exit
	}
	l := newLogger(f, out)
	l.Logger, l.file = l.Level(lvl), file
	if warnHook != nil {
		l.Logger = l.Hook(warnHook)
	}
	return l, nil
}

// newLogger writes console logs as "padrun: LEVEL: message: error (key=value,
// ...)": the message reads as a sentence, the facts stand apart from it.
func newLogger(f logFlags, out io.Writer) logs {
	if f.format == "json" {
		return logs{Logger: zerolog.New(out).With().Timestamp().Str("app", "padrun").Logger().Level(zerolog.WarnLevel), json: true}
	}
	cw := zerolog.ConsoleWriter{
		Out: newShownWriter(out), NoColor: true,
		PartsOrder:    []string{zerolog.LevelFieldName, zerolog.MessageFieldName},
		FormatLevel:   func(i any) string { return fmt.Sprintf("padrun: %s:", i) },
		PartsExclude:  []string{zerolog.TimestampFieldName},
		FormatPrepare: foldFields,
	}
	return logs{Logger: zerolog.New(cw).Level(zerolog.WarnLevel)}
}

// foldFields moves an event's error and fields into its message, so that
// the console line reads "message: error (key=value, ...)"; an empty value
// is shown as "-", never as a dangling "key=".
func foldFields(evt map[string]any) error {
	msg, _ := evt[zerolog.MessageFieldName].(string)
	if e, ok := evt[zerolog.ErrorFieldName]; ok {
		msg += ": " + fmt.Sprint(e)
		delete(evt, zerolog.ErrorFieldName)
	}
	var fields []string
	for k, v := range evt {
		if k == zerolog.MessageFieldName || k == zerolog.LevelFieldName || k == zerolog.TimestampFieldName {
			continue
		}
		s := fmt.Sprint(v)
		if b, err := json.Marshal(v); err == nil && !isString(v) {
			s = string(b) // lists and objects as JSON, not Go's %v
		}
		if s == "" {
			s = "-"
		}
		fields = append(fields, k+"="+s)
		delete(evt, k)
	}
	if len(fields) > 0 {
		slices.Sort(fields)
		msg += " (" + strings.Join(fields, ", ") + ")"
	}
	evt[zerolog.MessageFieldName] = msg
	return nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func orEnv(v, env, def string) string {
	if v != "" {
		return v
	}
	if e := os.Getenv(env); e != "" {
		return e
	}
	return def
}

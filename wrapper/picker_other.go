//go:build !linux

package wrapper

// pickNotify is Linux's inotify watch of a picker; here there is none, and
// padrun says so (watchPicker).
type pickNotify struct{}

func startPickNotify(string, string, func(), func(string)) *pickNotify { return nil }
func (*pickNotify) stop()                                              {}

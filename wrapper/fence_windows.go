package wrapper

import "time"

// FenceName is the name padrun runs itself under as a session's fence
// process, on the systems that have one.
const FenceName = "padrun-fence"

// fenceProc is the fence process, which Windows runs without: padrun's own
// fencing job stops the session there.
type fenceProc struct{}

func startFence(string, int64, time.Duration) (*fenceProc, error) { return nil, nil }

func (f *fenceProc) send(string, ...any) {}

func (f *fenceProc) end() string { return "" }

// FenceMain is the fence process: none here.
func FenceMain([]string) int { return 2 }

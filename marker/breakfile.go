package marker

// The break file protocol serialises takeovers where no flock reaches every
// holder (no flock at all, or one that stays on this machine): a taker
// judges and replaces F's marker only while it holds F.live.break, made by
// exclusive create with its identity (ident.ID, as a marker writes it) as
// content.
//
// The states of F.live.break, and what a taker does in each:
//   - absent: no takeover under way; the taker creates it, judges the
//     marker, publishes, then removes it (dropBreak: only while it still
//     holds the taker's own tag).
//   - held by a live taker, or one the ladder cannot judge: a takeover is
//     under way; a waitable refusal (HeldPolled).
//   - held by a dead taker (on another machine: its mtime, a heartbeat of
//     breakLeaseSeconds, silent for three of them): cleared under
//     F.live.break.clear, then created once more.
//
// The states of F.live.break.clear, which serialises the clearers:
//   - absent: the clearer creates it with a fresh tag, reads the break file
//     again and removes it only if it still holds what was judged dead.
//   - fresh (younger than clearLease): another clearer at work; waited for
//     up to clearWait, then the break file is left for the next try.
//   - older than clearLease: a dead clearer's; taken aside (takeAside).
//   - cannot be made (a name too long): the break file is read again and
//     removed without it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// breakLeaseSeconds is how long a takeover may take, as a heartbeat
// interval: a break file of another machine (whose taker cannot be probed)
// is dead once its mtime is older than three of them.
const breakLeaseSeconds = 10

// takeBreak creates F.live.break exclusively and returns what it wrote
// there, for dropBreak. A break file whose taker the ladder proves dead is
// cleared and tried once more; any other is a waitable refusal: another
// process is taking the file over.
func (e env) takeBreak(file string, self ident.Self) ([]byte, error) {
	brk := breakPath(file)
	tag, _ := json.Marshal(self.ID)
	for tries := 0; ; tries++ {
		err := safefile.WriteNew(brk, tag)
		if err == nil {
			return tag, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("marker: create %s: %w", brk, err)
		}
		var taker *Judgement
		if tries == 0 {
			j, judged, ok := judgeBreak(brk, self)
			if ok && j.Verdict == ident.Dead {
				e.clearDeadBreak(brk, judged) // its taker is dead; try once more
				continue
			}
			if ok {
				taker = &j
			}
		}
		return nil, &HeldError{File: file, Kind: HeldPolled, Judgement: breakBusyOf(filepath.Base(brk), taker)}
	}
}

// dropBreak removes this taker's own break file brk at the end of its
// takeover (or a clearer's own .clear file) if it still holds tag: never
// one another made after judging this one dead (which takes a silent lease
// on another machine).
func dropBreak(brk string, tag []byte) {
	if b, _, err := safefile.ReadBounded(brk, maxSize); err == nil && bytes.Equal(b, tag) {
		os.Remove(brk) // Best effort: the next taker judges what is left.
	}
}

// clearDeadBreak removes the break file brk, judged dead, if it still
// holds dead, and never another taker's. Clearers are serialised by
// brk+".clear", created exclusively with a tag of their own: under it brk
// is read again, so of two takers that judged one dead file, the later
// finds the file the first made since and leaves it. A .clear file older
// than clearLease is a dead clearer's; one that is fresh is waited for,
// briefly (what it guards takes a read and an unlink), then brk is left for
// the next try. Where the .clear file cannot be made at all (a name too
// long for it), brk is read again and removed without it.
func (e env) clearDeadBreak(brk string, dead []byte) {
	lock := brk + ".clear"
	own := []byte(e.tempName()) // a tag no other clearer writes
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		err := safefile.WriteNew(lock, own)
		if err == nil {
			defer dropBreak(lock, own)
			break
		}
		if !errors.Is(err, os.ErrExist) {
			break
		}
		if b, mtime, err := safefile.ReadBounded(lock, maxSize); err == nil && time.Since(mtime) > clearLease {
			e.takeAside(lock, b) // a dead clearer's
		}
		if time.Since(start) > clearWait {
			return
		}
	}
	dropBreak(brk, dead)
}

// takeAside removes path if it still holds b. It renames path aside first:
// of several removers, one rename wins and the others find nothing; what it
// took that is not b (made since) goes back, unless yet another is there.
func (e env) takeAside(path string, b []byte) {
	aside := filepath.Join(filepath.Dir(path), e.tempName())
	if os.Rename(path, aside) != nil {
		return // gone: taken by another
	}
	if got, _, err := safefile.ReadBounded(aside, maxSize); err == nil && !bytes.Equal(got, b) {
		os.Link(aside, path) // Best effort: it fails only when a new one is there.
	}
	os.Remove(aside) // Best effort: a temp name, ignored by every reader.
}

// clearLease is how old a .clear file must be to be a dead clearer's: as
// for a break file of another machine, three lease intervals.
const clearLease = 3 * breakLeaseSeconds * time.Second

// clearWait is how long clearDeadBreak waits for a live clearer.
const clearWait = 100 * time.Millisecond

// judgeBreak runs the ladder on a break file's taker, its mtime serving as
// a heartbeat of breakLeaseSeconds; it returns the bytes it judged.
func judgeBreak(brk string, self ident.Self) (Judgement, []byte, bool) {
	b, mtime, err := safefile.ReadBounded(brk, maxSize)
	var t ident.ID
	if err != nil || json.Unmarshal(b, &t) != nil {
		return Judgement{}, nil, false
	}
	return verdictOf(proc{ID: t, Heartbeat: mtime, HeartbeatSeconds: breakLeaseSeconds}, self, time.Now()), b, true
}

// breakPath is the file that serialises takeovers where flock is missing.
func breakPath(file string) string { return file + ".live.break" }

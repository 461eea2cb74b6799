//go:build !linux

package wrapper

// claimsWatched says that the harness's in-use locks cannot be watched
// here (nor told to be of the run's tree: ofTree): what the harness names
// itself stays unknown, as padrun warns.
const claimsWatched = false

type claimNotify struct{}

func startClaimNotify(string, func(dir string)) *claimNotify { return nil }
func (*claimNotify) stop()                                   {}

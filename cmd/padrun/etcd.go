package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper"
)

// etcdFlags are the settings of the hold in etcd, with etcdctl's names.
type etcdFlags struct {
	endpoints              string
	cacert, cert, key      string
	user, prefix, sessions string
	ttl                    time.Duration
}

func (f *etcdFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoints, "etcd", "", "also hold the session in etcd at `ENDPOINTS` (comma-separated client URLs, as etcdctl --endpoints; $PADRUN_ETCD)")
	fs.StringVar(&f.cacert, "etcd-cacert", "", "verify etcd's members with the CA bundle `FILE`")
	fs.StringVar(&f.cert, "etcd-cert", "", "present the client certificate `FILE` to etcd")
	fs.StringVar(&f.key, "etcd-key", "", "the client certificate's key `FILE`")
	fs.StringVar(&f.user, "etcd-user", "", "authenticate to etcd as `NAME:PASSWORD`")
	fs.StringVar(&f.prefix, "etcd-prefix", etcdhold.DefaultPrefix, "the `PREFIX` of padrun's keys in etcd")
	durationVar(fs, &f.ttl, "etcd-ttl", etcdhold.DefaultTTL, "the lease's time to live: a holder that cannot renew it is stopped within `DURATION`")
	fs.StringVar(&f.sessions, "session-key", "", "the session's `KEY` in etcd, over the harness's session id (default: that id, else the session file's path)")
}

// config is the etcd hold's settings, or nil without --etcd.
func (f *etcdFlags) config() (*etcdhold.Config, error) {
	eps := f.endpoints
	if eps == "" {
		eps = os.Getenv("PADRUN_ETCD")
	}
	if eps == "" {
		return nil, nil
	}
	if f.ttl < 2*time.Second {
		return nil, usagef("--etcd-ttl %s leaves no time to stop the session: at least 2s", f.ttl)
	}
	return &etcdhold.Config{
		Endpoints: strings.Split(eps, ","), CACert: f.cacert, Cert: f.cert, Key: f.key,
		User: f.user, Prefix: f.prefix, TTL: f.ttl,
	}, nil
}

// client is the etcd client of a verb, or nil without --etcd.
func (f *etcdFlags) client() (*etcdhold.Client, error) {
	cfg, err := f.config()
	if cfg == nil || err != nil {
		return nil, err
	}
	c, err := etcdhold.New(*cfg)
	if err != nil {
		return nil, &wrapper.UsageError{Err: err}
	}
	return c, nil
}

// keyOf is the key a verb looks at for file, derived as the run derives
// it (wrapper.EtcdKeyOf): --session-key, else the id the file names, else
// its path.
func (f *etcdFlags) keyOf(c *etcdhold.Client, file string) string {
	return wrapper.EtcdKeyOf(c, f.sessions, file)
}

// etcdRow is a key in etcd as status and ls show it.
type etcdRow struct {
	Key    string           `json:"key"`
	Lease  string           `json:"lease"`
	TTL    int64            `json:"ttl"` // seconds left; 0 or less: gone
	Holder *etcdhold.Holder `json:"holder"`
	found  *etcdhold.Found
	state  etcdhold.KeyState
}

func (r etcdRow) line(now time.Time) string {
	return fmt.Sprintf("%s held by %s, lease %s (%s)", r.Key, etcdHolderLine(r.found, now), r.Lease, r.state)
}

// etcdRows reads the keys under the prefix that match, with their leases'
// time to live.
func etcdRows(ctx context.Context, c *etcdhold.Client, match func(*etcdhold.Found) bool) ([]etcdRow, error) {
	all, err := c.List(ctx, 10000)
	if err != nil {
		return nil, err
	}
	var rows []etcdRow
	for _, k := range all {
		if !match(k) {
			continue
		}
		st, err := c.State(ctx, k)
		if err != nil {
			return nil, err
		}
		rows = append(rows, etcdRow{k.Key, etcdhold.LeaseHex(k.Lease), st.TTL, k.Holder, k, st})
	}
	return rows, nil
}

// etcdStatus reads who holds file in etcd: its key, or any key whose
// holder names the file.
func etcdStatus(ctx context.Context, c *etcdhold.Client, f *etcdFlags, file string) ([]etcdRow, error) {
	key := f.keyOf(c, file)
	return etcdRows(ctx, c, func(k *etcdhold.Found) bool {
		return k.Key == key || (k.Holder != nil && k.Holder.SessionFile == file)
	})
}

func etcdHolderLine(k *etcdhold.Found, now time.Time) string {
	if k.Holder == nil {
		return "a value that is not padrun's"
	}
	m := k.Holder.Marker
	return wording{now: now}.holderLine(&m) + ", machine " + dash(m.MachineID)
}

// etcdLs lists the holders under the prefix.
func etcdLs(c *etcdhold.Client, asJSON bool, stdout io.Writer) error {
	rows, err := etcdRows(context.Background(), c, func(*etcdhold.Found) bool { return true })
	if err != nil {
		return err
	}
	if asJSON {
		writeJSON(stdout, append([]etcdRow{}, rows...))
		return nil
	}
	now := time.Now()
	for _, r := range rows {
		fmt.Fprintln(stdout, r.line(now))
	}
	return nil
}

// etcdUnlock deletes file's key when its lease is gone, or when it has
// none (no live padrun's); never one whose lease is alive, even with
// --force. It reports whether the key is free afterwards.
func etcdUnlock(c *etcdhold.Client, f *etcdFlags, file string, stdout, stderr io.Writer) (bool, error) {
	ctx := context.Background()
	key := f.keyOf(c, file)
	k, err := c.Get(ctx, key)
	if err != nil || k == nil {
		if k == nil && err == nil {
			fmt.Fprintf(stdout, "%s: free in etcd\n", key)
		}
		return err == nil, err
	}
	st, err := c.State(ctx, k)
	if err != nil {
		return false, err
	}
	if st.Held() {
		fmt.Fprintf(stderr, "padrun: kept %s in etcd: held by %s, lease %s (%s)\n", key, etcdHolderLine(k, time.Now()), etcdhold.LeaseHex(k.Lease), st)
		return false, nil
	}
	ok, err := c.Delete(ctx, k)
	if err != nil {
		return false, err
	}
	if !ok {
		fmt.Fprintf(stderr, "padrun: kept %s in etcd: it changed while padrun looked\n", key)
		return false, nil
	}
	fmt.Fprintf(stdout, "%s: unlocked in etcd\n", key)
	return true, nil
}

// addVerbFlags declares the flags status, ls and unlock take: where etcd
// is and which key to look at.
func (f *etcdFlags) addVerbFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoints, "etcd", "", "look at the holders in etcd at `ENDPOINTS` instead ($PADRUN_ETCD)")
	fs.StringVar(&f.cacert, "etcd-cacert", "", "verify etcd's members with the CA bundle `FILE`")
	fs.StringVar(&f.cert, "etcd-cert", "", "present the client certificate `FILE` to etcd")
	fs.StringVar(&f.key, "etcd-key", "", "the client certificate's key `FILE`")
	fs.StringVar(&f.user, "etcd-user", "", "authenticate to etcd as `NAME:PASSWORD`")
	fs.StringVar(&f.prefix, "etcd-prefix", etcdhold.DefaultPrefix, "the `PREFIX` of padrun's keys in etcd")
	fs.StringVar(&f.sessions, "session-key", "", "the session's `KEY` in etcd (default: the id the file names, else its path)")
	f.ttl = etcdhold.DefaultTTL
}

// etcdStatusAll is status --etcd: the local verdict, then etcd's holders.
func etcdStatusAll(c *etcdhold.Client, f *etcdFlags, files []string, asJSON bool, stdout io.Writer, err error) error {
	if err != nil {
		return err
	}
	type both struct {
		Local marker.Status `json:"local"`
		Etcd  []etcdRow     `json:"etcd"`
	}
	self, now := ident.ReadSelf(), time.Now()
	var held error
	var all []both
	for _, file := range files {
		st := marker.Inspect(file, self, now)
		rows, err := etcdStatus(context.Background(), c, f, file)
		if err != nil {
			return err
		}
		if len(rows) > 0 || !st.Free() {
			held = exitStatus(exitRefused)
		}
		all = append(all, both{st, append([]etcdRow{}, rows...)})
	}
	if asJSON {
		writeJSON(stdout, all)
		return held
	}
	for i, b := range all {
		printStatus(stdout, b.Local, now)
		for _, r := range b.Etcd {
			fmt.Fprintln(stdout, "  etcd: "+r.line(now))
		}
		if len(b.Etcd) == 0 {
			fmt.Fprintf(stdout, "  etcd: %s free\n", f.keyOf(c, files[i]))
		}
	}
	return held
}

// etcdUnlockAll is unlock --etcd: the local marker as unlock does, then
// the key in etcd.
func etcdUnlockAll(c *etcdhold.Client, f *etcdFlags, args []string, force bool, stdout, stderr io.Writer, err error) error {
	if err != nil {
		return err
	}
	files, err := fileArgs("unlock", args)
	if err != nil {
		return err
	}
	localErr := unlock(args, force, stdout, stderr)
	code := 0
	for _, file := range files {
		free, err := etcdUnlock(c, f, file, stdout, stderr)
		if err != nil {
			return err
		}
		if !free {
			code = exitRefused
		}
	}
	if localErr != nil {
		return localErr
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

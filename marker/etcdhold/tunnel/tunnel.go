// Package tunnel is padrun-etcd-tls: it carries one connection to an etcd
// member over TLS between its stdin/stdout and the member. padrun runs it
// for https:// endpoints so that padrun itself links no crypto/tls, whose
// packages would slow every start-up, --etcd or not (BenchmarkOverhead).
package tunnel

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Exit statuses padrun reads: refused is a rejection that no retry
// changes (a certificate either side refused); failed is anything else.
const (
	exitFailed  = 1
	exitRefused = 3
)

// Main runs the tunnel with args and returns its exit status.
func Main(args []string) int {
	fs := flag.NewFlagSet("padrun-etcd-tls", flag.ContinueOnError)
	connect := fs.String("connect", "", "the member's `HOST:PORT`")
	name := fs.String("servername", "", "the `NAME` its certificate must hold (default: the host)")
	cacert := fs.String("cacert", "", "verify the member with the CA bundle `FILE`")
	cert := fs.String("cert", "", "present the client certificate `FILE`")
	key := fs.String("key", "", "the client certificate's key `FILE`")
	timeout := fs.Duration("timeout", 10*time.Second, "bound the connection and handshake")
	if err := fs.Parse(args); err != nil || *connect == "" {
		fmt.Fprintln(os.Stderr, "usage: padrun-etcd-tls -connect HOST:PORT [-servername NAME] [-cacert FILE] [-cert FILE -key FILE]")
		return exitFailed
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: *name}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(*connect)
	}
	if *cacert != "" {
		pem, err := os.ReadFile(*cacert)
		if err != nil {
			return fail(exitRefused, "read --etcd-cacert: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return fail(exitRefused, "--etcd-cacert %s holds no PEM certificate", *cacert)
		}
	}
	if *cert != "" || *key != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			return fail(exitRefused, "read --etcd-cert/--etcd-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	d := net.Dialer{Timeout: *timeout}
	raw, err := d.Dial("tcp", *connect)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	conn := tls.Client(raw, cfg)
	conn.SetDeadline(time.Now().Add(*timeout)) // Best effort.
	if err := conn.Handshake(); err != nil {
		return fail(status(err), "%v", err)
	}
	conn.SetDeadline(time.Time{}) // Best effort: padrun bounds the rest.
	go func() {
		io.Copy(conn, os.Stdin) // Best effort: padrun ends the request.
		conn.CloseWrite()
	}()
	if _, err := io.Copy(os.Stdout, conn); err != nil {
		return fail(status(err), "%v", err)
	}
	return 0
}

// status is the exit status err calls for.
func status(err error) int {
	var (
		verify *tls.CertificateVerificationError
		header tls.RecordHeaderError
		op     *net.OpError
	)
	if errors.As(err, &verify) || errors.As(err, &header) || (errors.As(err, &op) && op.Op == "remote error") {
		return exitRefused // a TLS alert from the member: crypto/tls words it "remote error"
	}
	return exitFailed
}

func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return code
}

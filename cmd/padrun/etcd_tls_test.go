//go:build linux

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEtcd_Auth: with auth enabled, --etcd-user NAME:PASSWORD runs; a
// wrong password is 125, naming the failure, and the child never runs.
func TestEtcd_Auth(t *testing.T) {
	c := startCluster(t)
	ctl := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("etcdctl", append([]string{"--endpoints", c.endpoints()}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("etcdctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ctl("user", "add", "root:sesame")
	ctl("auth", "enable")
	dir := t.TempDir()
	a := newMachine(t, dir, 0)
	log := filepath.Join(dir, "log")
	r := startRun(t, a.padrun(c, "--etcd-user", "root:sesame", "--session-key", "auth", "--", "etcdchild", "-for", "0s", log, "a"))
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("with the password: exit %d:\n%s", code, r.stderr)
	}
	r = startRun(t, a.padrun(c, "--etcd-user", "root:wrong", "--session-key", "auth", "--", "etcdchild", "-for", "0s", log, "b"))
	if code := r.wait(t, 30*time.Second); code != exitFailed || !strings.Contains(r.stderr.String(), "authenticate as root") {
		t.Fatalf("a wrong password: exit %d, want 125 naming it:\n%s", code, r.stderr)
	}
	if ss := spans(t, log); len(ss) != 1 {
		t.Fatalf("want one child run, got %v", ss)
	}
}

// TestEtcd_TLS: a member that wants client certificates: --etcd-cacert,
// --etcd-cert and --etcd-key reach it; without the certificate, 125.
func TestEtcd_TLS(t *testing.T) {
	requireTool(t, "etcd")
	dir := t.TempDir()
	ca, caKey := newCert(t, dir, "ca", nil, nil)
	newCert(t, dir, "server", ca, caKey)
	newCert(t, dir, "client", ca, caKey)
	client := fmt.Sprintf("https://127.0.0.1:%d", freePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	m := exec.Command("etcd", "--name", "tls", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "tls="+peer,
		"--cert-file", filepath.Join(dir, "server.pem"), "--key-file", filepath.Join(dir, "server-key.pem"),
		"--trusted-ca-file", filepath.Join(dir, "ca.pem"), "--client-cert-auth",
		"--logger", "zap", "--log-outputs", filepath.Join(dir, "etcd.log"))
	m.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Process.Kill(); m.Wait() })
	log := filepath.Join(dir, "log")
	tlsFlags := []string{"--etcd", client, "--etcd-cacert", filepath.Join(dir, "ca.pem"),
		"--etcd-cert", filepath.Join(dir, "client.pem"), "--etcd-key", filepath.Join(dir, "client-key.pem")}
	padrun := func(extra []string, id string) (int, string) {
		args := append(append(extra, "--guard", filepath.Join(dir, "s.jsonl"), "--session-key", "tls", "--"), "etcdchild", "-for", "0s", log, id)
		cmd := exec.Command("padrun", args...)
		cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"))
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	var code int
	var out string
	waitUntil(t, 60*time.Second, "the TLS member answers", func() bool {
		code, out = padrun(tlsFlags, "a")
		return code == 0
	})
	t0 := time.Now()
	if code, out = padrun(tlsFlags[:4], "b"); code != exitFailed {
		t.Fatalf("without the client certificate: exit %d, want 125:\n%s", code, out)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("a rejected certificate took %s to refuse: no retry can change it", d)
	}
	t0 = time.Now()
	if code, out = padrun([]string{"--etcd", client}, "c"); code != exitFailed || !strings.Contains(out, "certificate") {
		t.Fatalf("without the CA: exit %d, want 125 naming the certificate:\n%s", code, out)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("an unknown authority took %s to refuse: no retry can change it", d)
	}
	if ss := spans(t, log); len(ss) != 1 {
		t.Fatalf("want one child run, got %v", ss)
	}
}

// newCert writes NAME.pem and NAME-key.pem to dir: a CA when parent is nil,
// else a certificate for 127.0.0.1 signed by it.
func newCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "padrun-test-" + name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, name+"-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestBinary_LinksNoTLS: padrun itself links neither crypto/tls nor
// net/http, whose packages' initialisation would slow every start-up, with
// --etcd or without; padrun-etcd-tls carries TLS.
func TestBinary_LinksNoTLS(t *testing.T) {
	requireTool(t, "go")
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "crypto/tls" || pkg == "net/http" || pkg == "crypto/x509" {
			t.Errorf("padrun links %s", pkg)
		}
	}
}

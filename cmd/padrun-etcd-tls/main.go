// Command padrun-etcd-tls carries padrun's requests to etcd members over
// TLS (https:// endpoints of --etcd). Install it beside padrun.
package main

import (
	"os"

	"github.com/padrun/padrun/marker/etcdhold/tunnel"
)

func main() { os.Exit(tunnel.Main(os.Args[1:])) }

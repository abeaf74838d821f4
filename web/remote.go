package web

import (
	"net"
	"net/http"
)

// RemoteIP is the address a request came from, without its port: what the
// audit log records as "from where" (docs/dashboard.md, Audit log). The
// server reads no forwarding header: behind a proxy it is the proxy's.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

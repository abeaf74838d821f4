//go:build benchpprof

package main

import (
	"net/http"
	_ "net/http/pprof" // the profiles, on the listener below only
	"os"
)

// A binary built with -tags benchpprof (`make bench-external
// ARGS=-cpuprofile=DIR` builds one) serves net/http/pprof on
// RECON_BENCH_PPROF_ADDR, a loopback address apart from the API's, so that
// the external benchmark can take CPU profiles of the server under its load
// (docs/benchmarks.md, "Ratios to the engine's own limit"). Release builds
// never hold it.
func init() {
	if addr := os.Getenv("RECON_BENCH_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}

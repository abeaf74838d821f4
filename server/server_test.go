package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"recon/api"
	"recon/apiv2"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// newServer builds a server on db as the route tests need it: every route
// registered, nothing served.
func newServer(t *testing.T, db *sqlstore.DB, sandbox bool) *Server {
	t.Helper()
	s, err := New(context.Background(), db, Config{BaseURL: "http://127.0.0.1", Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryRouteDocumented checks each route the server registers against
// the OpenAPI document served at /openapi.json.
func TestEveryRouteDocumented(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	mux := newServer(t, db, true).Mux
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	// API v2 has its own document (apiv2/openapi/, served at /v2/openapi.json).
	var v2 struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(apiv2.OpenAPI(), &v2); err != nil {
		t.Fatal(err)
	}
	for path, ops := range v2.Paths {
		// and the e-invoice API under /v1/invoices and /v1/provider-accounts
		// (docs/invoices.md, API).
		v2Path := strings.HasPrefix(path, "/v2/") || strings.HasPrefix(path, "/v1/invoices") || path == "/v1/provider-accounts"
		if _, dup := doc.Paths[path]; dup || !v2Path {
			t.Errorf("apiv2's document has %q, which is not under /v2/ (or the invoice paths) or is in api/openapi.json too", path)
		}
		doc.Paths[path] = ops
	}
	patterns := mux.Patterns()
	if len(patterns) < 10 {
		t.Fatalf("only %d routes registered: %v", len(patterns), patterns)
	}
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			t.Errorf("route %q has no method", p)
			continue
		}
		path = strings.TrimSuffix(path, "{$}")
		if strings.HasPrefix(path, "/dashboard/") {
			continue // the dashboard's HTML pages are no API (docs/dashboard.md)
		}
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("route %q is not in api/openapi.json (or apiv2/openapi/ for /v2)", p)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			p := strings.ToUpper(method) + " " + path
			if path == "/" {
				p += "{$}"
			}
			if !slices.Contains(patterns, p) {
				t.Errorf("api/openapi.json (or apiv2/openapi/) documents %q, which the server does not serve", p)
			}
		}
	}
}

// TestUnmatchedRoutesUseTheFamilyEnvelope: a request matching no route gets
// the gateway's error body under /v1/ and the /api/v1 one elsewhere; so
// does one whose input is refused before any handler.
func TestUnmatchedRoutesUseTheFamilyEnvelope(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	mux := newServer(t, db, false).Mux
	for _, tt := range []struct{ method, path, want string }{
		{"GET", "/v1/order/nothing", `{"error":{"code":"not_found","message":"no endpoint GET /v1/order/nothing; see /openapi.json"},"message":"no endpoint GET /v1/order/nothing; see /openapi.json"}`},
		{"DELETE", "/v1/ipn", `{"error":{"code":"method_not_allowed","message":"method DELETE is not allowed on /v1/ipn; allowed: GET, HEAD, PUT"},"message":"method DELETE is not allowed on /v1/ipn; allowed: GET, HEAD, PUT"}`},
		{"GET", "/api/v1/nothing", `{"status":"error","error":"not_found","message":"no endpoint GET /api/v1/nothing; see /openapi.json"}`},
		{"GET", "/nothing", `{"status":"error","error":"not_found","message":"no endpoint GET /nothing; see /openapi.json"}`},
		{"GET", "/v1/order?q=%00", `{"error":{"code":"validation_error","message":"query parameter \"q\" holds the control character U+0000"},"message":"query parameter \"q\" holds the control character U+0000"}`},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if got := strings.TrimSpace(rec.Body.String()); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.method, tt.path, got, tt.want)
		}
	}
}

// TestReadyzWithADeadDatabase: /healthz says the process is up, /readyz
// says the database is gone (503), with no detail.
func TestReadyzWithADeadDatabase(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	mux := newServer(t, db, false).Mux
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("GET %s with the database closed: %d %s, want %d", path, rec.Code, rec.Body, want)
		}
	}
}

// TestServeSaysListeningOn checks the log line a newcomer waits for
// (README, docs/getting-started.md): "listening on" with the address bound;
// and that Serve returns only once its maintenance loops and dispatcher have
// ended, whether it was stopped or its listener failed, since its caller
// closes the store next. Not parallel, so that the goroutines looked for are
// this test's alone.
func TestServeSaysListeningOn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stop    func(cancel context.CancelFunc, ln net.Listener)
		wantErr bool
	}{
		{"stopped", func(cancel context.CancelFunc, _ net.Listener) { cancel() }, false},
		{"listener failed", func(_ context.CancelFunc, ln net.Listener) { ln.Close() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := dbtest.OpenStore(t, "sqlite")
			logs := &testkit.Buffer{}
			s, err := New(context.Background(), db, Config{BaseURL: "http://127.0.0.1", MetricsAddr: "off", ShutdownTimeout: 5 * time.Second,
				Dispatch: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- s.Serve(ctx, ln) }()
			want := "listening on http://" + ln.Addr().String()
			testkit.WaitFor(t, "the listening line", 10*time.Second, func() bool { return strings.Contains(logs.String(), want) })
			tt.stop(cancel, ln)
			if err := <-done; (err != nil) != tt.wantErr {
				t.Fatalf("Serve: %v, want an error: %t", err, tt.wantErr)
			}
			stacks := make([]byte, 1<<20)
			stacks = stacks[:runtime.Stack(stacks, true)]
			for _, fn := range []string{"recon/server.Loop.Run", "recon/delivery.(*Dispatcher).Run"} {
				if bytes.Contains(stacks, []byte(fn)) {
					t.Errorf("%s still runs after Serve returned:\n%s", fn, stacks)
				}
			}
		})
	}
}

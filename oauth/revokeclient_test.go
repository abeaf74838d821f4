package oauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestRevokedClientFailsAtOnce: a client revoked from the dashboard
// (recon.ClientStore.DeleteClient, the dashboard's call) while the server
// holds it in its client cache is refused by the very next request, with
// 401 invalid_client at the token endpoint (client credentials with the
// right secret), and at introspection and revocation the same 401 as a
// client that never existed: nothing tells whether its secret was right. Before, the cached client passed
// authentication for up to a minute and the token insert failed on the
// deleted client (a 500 "The error is unrecognizable").
func TestRevokedClientFailsAtOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		cc := url.Values{"grant_type": {"client_credentials"}, "scope": {recon.ScopeTransactionRead}}
		r := b.post(t, "/oauth/token", cc, b.conf.ID, b.confSecret)
		if r.status != http.StatusOK {
			t.Fatalf("client credentials: %d %v", r.status, r.json)
		}
		token := r.str("access_token")
		if r := b.introspect(t, b.conf.ID, b.confSecret, token); r.status != http.StatusOK || r.json["active"] != true {
			t.Fatalf("introspect: %d %v", r.status, r.json)
		}

		if err := b.db.DeleteClient(ctx, b.company.ID, false, b.conf.ID); err != nil {
			t.Fatal(err)
		}
		r = b.post(t, "/oauth/token", cc, b.conf.ID, b.confSecret)
		if r.status != http.StatusUnauthorized || r.str("error") != "invalid_client" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("token after revocation: %d %v (WWW-Authenticate %q), want 401 invalid_client",
				r.status, r.json, r.header.Get("WWW-Authenticate"))
		}
		// Every endpoint answers the revoked client as it answers a client
		// that never existed: nothing tells whether the secret was right.
		for _, e := range []struct {
			path string
			form url.Values
		}{
			{"/oauth/token", cc},
			{"/oauth/introspect", url.Values{"token": {token}}},
			{"/oauth/revoke", url.Values{"token": {token}}},
		} {
			got := b.post(t, e.path, e.form, b.conf.ID, b.confSecret)
			want := b.post(t, e.path, e.form, "never-registered", b.confSecret)
			if got.status != http.StatusUnauthorized || got.status != want.status || got.str("error") != want.str("error") {
				t.Errorf("%s after revocation: %d %v, want %d %v as for an unknown client", e.path, got.status, got.json, want.status, want.json)
			}
		}
		b.wantUnauthorized(t, token)
	})
}

// revokingStore is a real store that deletes the client the first time a
// token of it is about to be stored: the dashboard revoking it in the middle
// of a token request, after the client was read and authenticated.
type revokingStore struct {
	recon.Store
	companyID int64
	once      sync.Once
}

func (s *revokingStore) CreateTokenSession(ctx context.Context, ts *recon.TokenSession) error {
	var err error
	s.once.Do(func() { err = s.Store.DeleteClient(ctx, s.companyID, false, ts.ClientID) })
	if err != nil {
		return err
	}
	return s.Store.CreateTokenSession(ctx, ts)
}

// TestClientRevokedMidRequest: a client deleted between its authentication
// and the storing of its token (the token insert then fails on the deleted
// client) gets 401 invalid_client, not a server error.
func TestClientRevokedMidRequest(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			b := setup(t, engine)
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			s, err := New(Config{
				Issuer: srv.URL,
				Secret: []byte("0123456789abcdef0123456789abcdef"),
				Clock:  b.clock,
				Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
			}, &revokingStore{Store: b.db, companyID: b.company.ID})
			if err != nil {
				t.Fatal(err)
			}
			s.Register(mux)
			b.srv = srv
			r := b.post(t, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, b.conf.ID, b.confSecret)
			if r.status != http.StatusUnauthorized || r.str("error") != "invalid_client" {
				t.Fatalf("token for a client revoked mid-request: %d %v, want 401 invalid_client", r.status, r.json)
			}
			if _, err := b.db.Client(context.Background(), b.conf.ID); recon.ErrorCode(err) != recon.ENOTFOUND {
				t.Fatalf("the client was not deleted: %v", err)
			}
		})
	}
}

package oauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
)

// TestTestTokensAreMarked: the access and refresh tokens of a test client
// start with test_ like its id and secret (docs/testmode.md), by every
// grant (client credentials, code exchange, refresh, the operator's
// IssueToken); they authenticate, introspect, refresh and revoke as any
// token; a live client's tokens are not marked; and the mark cannot be
// stripped from a test token nor added to a live one.
func TestTestTokensAreMarked(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		testTenant, err := b.db.TestTenant(ctx, b.company.ID)
		if err != nil {
			t.Fatal(err)
		}
		tc := &recon.Client{Company: b.company.ID, Name: "test app", Test: true, RedirectURIs: []string{redirectURI},
			Scopes: []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeOfflineAccess}}
		secret, err := RegisterClient(ctx, b.db, tc, false)
		if err != nil {
			t.Fatal(err)
		}
		const markAccess, markRefresh = recon.TestClientPrefix + prefixAccess, recon.TestClientPrefix + prefixRefresh

		cc := url.Values{"grant_type": {"client_credentials"}, "scope": {recon.ScopeTransactionRead}}
		r := b.post(t, "/oauth/token", cc, tc.ID, secret)
		feed := r.str("access_token")
		if r.status != http.StatusOK || !strings.HasPrefix(feed, markAccess) {
			t.Fatalf("client credentials of a test client: %d %v, want a %s... token", r.status, r.json, markAccess)
		}
		c, err := b.server.Authenticate(ctx, feed)
		if err != nil || c.Livemode() || c.Tenant != testTenant.ID || c.ClientID != tc.ID {
			t.Fatalf("Authenticate(test token) = %+v, %v", c, err)
		}
		if r := b.introspect(t, tc.ID, secret, feed); r.status != http.StatusOK || r.json["active"] != true || r.str("client_id") != tc.ID {
			t.Fatalf("introspect a test token: %d %v", r.status, r.json)
		}

		code, verifier := b.authorize(t, tc, "transaction:read offline_access")
		r = b.exchange(t, tc, secret, code, verifier)
		access, refresh := r.str("access_token"), r.str("refresh_token")
		if r.status != http.StatusOK || !strings.HasPrefix(access, markAccess) || !strings.HasPrefix(refresh, markRefresh) {
			t.Fatalf("code exchange of a test client: %d %v, want %s... and %s... tokens", r.status, r.json, markAccess, markRefresh)
		}
		if r := b.introspect(t, tc.ID, secret, refresh); r.status != http.StatusOK || r.json["active"] != true || r.str("token_use") != "refresh_token" {
			t.Fatalf("introspect a test refresh token: %d %v", r.status, r.json)
		}
		// The mark cannot be stripped: not from an access token (also once
		// the token is in the caller cache), not from a refresh token.
		if _, err := b.server.Authenticate(ctx, access); err != nil {
			t.Fatalf("Authenticate(test access token): %v", err)
		}
		b.wantUnauthorized(t, strings.TrimPrefix(access, recon.TestClientPrefix))
		stripped := b.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {strings.TrimPrefix(refresh, recon.TestClientPrefix)}}, tc.ID, secret)
		wantError(t, stripped, http.StatusBadRequest, "invalid_request") // fosite's answer to a refresh token that does not validate

		r = b.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, tc.ID, secret)
		if r.status != http.StatusOK || !strings.HasPrefix(r.str("access_token"), markAccess) || !strings.HasPrefix(r.str("refresh_token"), markRefresh) {
			t.Fatalf("refresh of a test grant: %d %v", r.status, r.json)
		}
		refreshed := r.str("access_token")
		if _, err := b.server.Authenticate(ctx, refreshed); err != nil {
			t.Fatalf("Authenticate(refreshed test token): %v", err)
		}

		issued, err := b.server.IssueToken(ctx, tc.ID, testEmail, []string{recon.ScopeCompany}, 0)
		if err != nil || !strings.HasPrefix(issued.Token, markAccess) {
			t.Fatalf("IssueToken for a test client = %+v, %v", issued, err)
		}

		// Revocation (RFC 7009) of a marked token.
		if r := b.post(t, "/oauth/revoke", url.Values{"token": {refreshed}}, tc.ID, secret); r.status != http.StatusOK {
			t.Fatalf("revoke: %d %v", r.status, r.json)
		}
		b.wantUnauthorized(t, refreshed)

		// A live client's tokens carry no mark, and take none.
		r = b.post(t, "/oauth/token", cc, b.conf.ID, b.confSecret)
		live := r.str("access_token")
		if r.status != http.StatusOK || !strings.HasPrefix(live, prefixAccess) {
			t.Fatalf("client credentials of a live client: %d %v", r.status, r.json)
		}
		if _, err := b.server.Authenticate(ctx, live); err != nil {
			t.Fatalf("Authenticate(live token): %v", err)
		}
		b.wantUnauthorized(t, recon.TestClientPrefix+live)
		_, liveRefresh := b.tokens(t, "transaction:read offline_access")
		if !strings.HasPrefix(liveRefresh, prefixRefresh) {
			t.Fatalf("live refresh token %q", liveRefresh)
		}
		wantError(t, b.refresh(t, recon.TestClientPrefix+liveRefresh), http.StatusBadRequest, "invalid_request")
	})
}

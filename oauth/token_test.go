package oauth

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
)

func TestClientCredentials(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		cc := func(scope string) url.Values {
			v := url.Values{"grant_type": {"client_credentials"}}
			if scope != "" {
				v.Set("scope", scope)
			}
			return v
		}
		t.Run("basic", func(t *testing.T) {
			r := b.post(t, "/oauth/token", cc("transaction:read"), b.conf.ID, b.confSecret)
			if r.status != http.StatusOK || r.str("access_token") == "" || r.json["expires_in"] != float64(3600) {
				t.Fatalf("%d %v", r.status, r.json)
			}
			if _, ok := r.json["refresh_token"]; ok {
				t.Errorf("client credentials issued a refresh token")
			}
			c, err := b.server.Authenticate(ctx, r.str("access_token"))
			if err != nil {
				t.Fatal(err)
			}
			want := recon.Caller{Tenant: recon.TenantFromRow(b.company.ID, false), ClientID: b.conf.ID, Scopes: []string{"transaction:read"}}
			if c.User != nil || c.Tenant.ID() != want.Tenant.ID() || c.ClientID != want.ClientID || !slices.Equal(c.Scopes, want.Scopes) {
				t.Errorf("caller %+v, want %+v", c, want)
			}
		})
		t.Run("post", func(t *testing.T) {
			form := cc("company")
			form.Set("client_id", b.conf.ID)
			form.Set("client_secret", b.confSecret)
			if r := b.post(t, "/oauth/token", form, "", ""); r.status != http.StatusOK || r.str("scope") != "company" {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("no scope means the client's scopes", func(t *testing.T) {
			r := b.post(t, "/oauth/token", cc(""), b.conf.ID, b.confSecret)
			if r.status != http.StatusOK || r.str("scope") != strings.Join(b.conf.Scopes, " ") {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("bad secret", func(t *testing.T) {
			r := b.post(t, "/oauth/token", cc("company"), b.conf.ID, b.confSecret+"x")
			wantError(t, r, http.StatusUnauthorized, "invalid_client")
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("no WWW-Authenticate")
			}
		})
		t.Run("no secret", func(t *testing.T) {
			form := cc("company")
			form.Set("client_id", b.conf.ID)
			wantError(t, b.post(t, "/oauth/token", form, "", ""), http.StatusUnauthorized, "invalid_client")
		})
		t.Run("unknown client", func(t *testing.T) {
			wantError(t, b.post(t, "/oauth/token", cc("company"), "nope", "x"), http.StatusUnauthorized, "invalid_client")
		})
		t.Run("scope not allowed", func(t *testing.T) {
			wantError(t, b.post(t, "/oauth/token", cc("company webhook:write"), b.conf.ID, b.confSecret), http.StatusBadRequest, "invalid_scope")
		})
		t.Run("public client", func(t *testing.T) {
			form := cc("transaction:read")
			form.Set("client_id", b.pub.ID)
			r := b.post(t, "/oauth/token", form, "", "")
			if r.status != http.StatusBadRequest || r.str("access_token") != "" {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("unknown grant", func(t *testing.T) {
			form := url.Values{"grant_type": {"password"}, "username": {testEmail}, "password": {testPassword}}
			r := b.post(t, "/oauth/token", form, b.conf.ID, b.confSecret)
			if r.status != http.StatusBadRequest || r.str("access_token") != "" {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
	})
}

func TestRevocation(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		revoke := func(t *testing.T, id, secret, token, hint string) {
			t.Helper()
			form := url.Values{"token": {token}}
			if hint != "" {
				form.Set("token_type_hint", hint)
			}
			if r := b.post(t, "/oauth/revoke", form, id, secret); r.status != http.StatusOK {
				t.Fatalf("revoke: %d %v", r.status, r.json)
			}
		}
		t.Run("access token", func(t *testing.T) {
			access, refresh := b.tokens(t, "company")
			revoke(t, b.conf.ID, b.confSecret, access, "")
			b.wantUnauthorized(t, access)
			// Revoking one token revokes its grant.
			wantError(t, b.refresh(t, refresh), http.StatusBadRequest, "invalid_grant")
		})
		t.Run("refresh token", func(t *testing.T) {
			access, refresh := b.tokens(t, "company")
			revoke(t, b.conf.ID, b.confSecret, refresh, "refresh_token")
			wantError(t, b.refresh(t, refresh), http.StatusBadRequest, "invalid_grant")
			b.wantUnauthorized(t, access)
		})
		t.Run("client credentials token", func(t *testing.T) {
			r := b.post(t, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, b.conf.ID, b.confSecret)
			revoke(t, b.conf.ID, b.confSecret, r.str("access_token"), "access_token")
			b.wantUnauthorized(t, r.str("access_token"))
		})
		t.Run("unknown token", func(t *testing.T) {
			revoke(t, b.conf.ID, b.confSecret, "ory_at_nonsense.nonsense", "")
		})
		t.Run("another client's token", func(t *testing.T) {
			access, _ := b.tokens(t, "company")
			revoke(t, b.otherConf.ID, b.otherConfSecret, access, "")
			if _, err := b.server.Authenticate(ctx, access); err != nil {
				t.Fatalf("another client revoked the token: %v", err)
			}
		})
		t.Run("no client authentication", func(t *testing.T) {
			access, _ := b.tokens(t, "company")
			r := b.post(t, "/oauth/revoke", url.Values{"token": {access}}, "", "")
			if r.status == http.StatusOK {
				t.Fatalf("revoked without client authentication")
			}
			if _, err := b.server.Authenticate(ctx, access); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func TestIntrospection(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		access, refresh := b.tokens(t, "company transaction:read")
		t.Run("access token", func(t *testing.T) {
			r := b.introspect(t, b.conf.ID, b.confSecret, access)
			if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v", r.status, r.json)
			}
			wantIntrospection(t, r.json, map[string]any{
				"active":     true,
				"scope":      "company transaction:read",
				"client_id":  b.conf.ID,
				"sub":        "user:" + itoa(b.user.ID),
				"iss":        b.srv.URL,
				"token_type": "Bearer",
				"token_use":  "access_token",
				"company_id": float64(b.company.ID),
			}, DefaultAccessTTL)
		})
		t.Run("refresh token", func(t *testing.T) {
			r := b.introspect(t, b.conf.ID, b.confSecret, refresh)
			wantIntrospection(t, r.json, map[string]any{
				"active":     true,
				"scope":      "company transaction:read",
				"client_id":  b.conf.ID,
				"sub":        "user:" + itoa(b.user.ID),
				"iss":        b.srv.URL,
				"token_use":  "refresh_token",
				"company_id": float64(b.company.ID),
			}, DefaultRefreshTTL)
		})
		inactive := func(t *testing.T, r tokenResponse) {
			t.Helper()
			if r.status != http.StatusOK || len(r.json) != 1 || r.json["active"] != false {
				t.Fatalf("%d %v, want {\"active\":false}", r.status, r.json)
			}
		}
		t.Run("unknown token", func(t *testing.T) { inactive(t, b.introspect(t, b.conf.ID, b.confSecret, "garbage")) })
		t.Run("forged token", func(t *testing.T) {
			// The right signature with another random part fails the HMAC check.
			sig := access[strings.LastIndex(access, ".")+1:]
			inactive(t, b.introspect(t, b.conf.ID, b.confSecret, prefixAccess+"AAAA."+sig))
		})
		t.Run("client of another company", func(t *testing.T) {
			inactive(t, b.introspect(t, b.otherConf.ID, b.otherConfSecret, access))
		})
		t.Run("client credentials token", func(t *testing.T) {
			cc := b.post(t, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"company"}}, b.conf.ID, b.confSecret)
			r := b.introspect(t, b.conf.ID, b.confSecret, cc.str("access_token"))
			wantIntrospection(t, r.json, map[string]any{
				"active": true, "scope": "company", "client_id": b.conf.ID, "sub": "client:" + b.conf.ID, "iss": b.srv.URL,
				"token_type": "Bearer", "token_use": "access_token", "company_id": float64(b.company.ID),
			}, DefaultAccessTTL)
		})
		t.Run("no client authentication", func(t *testing.T) {
			wantError(t, b.post(t, "/oauth/introspect", url.Values{"token": {access}}, "", ""), http.StatusUnauthorized, "invalid_client")
		})
		t.Run("wrong secret", func(t *testing.T) {
			r := b.introspect(t, b.conf.ID, "wrong", access)
			if r.status != http.StatusUnauthorized || r.json["active"] == true {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("public client", func(t *testing.T) {
			r := b.introspect(t, b.pub.ID, "", access)
			if r.status != http.StatusUnauthorized || r.json["active"] == true {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("bearer instead of basic", func(t *testing.T) {
			form := url.Values{"token": {access}, "access_token": {access}}
			r := b.post(t, "/oauth/introspect", form, b.otherConf.ID, "not-checked-by-fosite-then")
			if r.status != http.StatusBadRequest || r.json["active"] == true {
				t.Fatalf("%d %v", r.status, r.json)
			}
		})
		t.Run("revoked", func(t *testing.T) {
			if r := b.post(t, "/oauth/revoke", url.Values{"token": {access}}, b.conf.ID, b.confSecret); r.status != http.StatusOK {
				t.Fatal(r.status)
			}
			inactive(t, b.introspect(t, b.conf.ID, b.confSecret, access))
			inactive(t, b.introspect(t, b.conf.ID, b.confSecret, refresh))
		})
	})
}

// wantIntrospection compares an introspection response with want, checking
// iat against the clock and exp against iat + ttl.
func wantIntrospection(t *testing.T, got, want map[string]any, ttl time.Duration) {
	t.Helper()
	got = maps.Clone(got)
	iat, _ := got["iat"].(float64)
	exp, _ := got["exp"].(float64)
	delete(got, "iat")
	delete(got, "exp")
	if !maps.Equal(got, want) {
		t.Errorf("introspection\n got %v\nwant %v", got, want)
	}
	if d := time.Since(time.Unix(int64(iat), 0)); d < -time.Minute || d > time.Minute {
		t.Errorf("iat %v is not about now", iat)
	}
	if d := time.Duration(exp-iat) * time.Second; d < ttl-2*time.Second || d > ttl+time.Second {
		t.Errorf("exp - iat = %v, want %v", d, ttl)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestMetadata(t *testing.T) {
	b := setup(t, "sqlite")
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/oauth/.well-known/oauth-authorization-server"} {
		resp, err := http.Get(b.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		u := b.srv.URL
		want := map[string]any{
			"issuer":                                        b.srv.URL,
			"authorization_endpoint":                        u + "/oauth/authorize",
			"token_endpoint":                                u + "/oauth/token",
			"revocation_endpoint":                           u + "/oauth/revoke",
			"introspection_endpoint":                        u + "/oauth/introspect",
			"scopes_supported":                              strings.Join(recon.Scopes, " "),
			"response_types_supported":                      "code",
			"response_modes_supported":                      "query",
			"grant_types_supported":                         "authorization_code refresh_token client_credentials",
			"code_challenge_methods_supported":              "S256",
			"token_endpoint_auth_methods_supported":         "client_secret_basic client_secret_post none",
			"revocation_endpoint_auth_methods_supported":    "client_secret_basic client_secret_post none",
			"introspection_endpoint_auth_methods_supported": "client_secret_basic",
		}
		for k, v := range got {
			if list, ok := v.([]any); ok {
				var s []string
				for _, e := range list {
					s = append(s, e.(string))
				}
				got[k] = strings.Join(s, " ")
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s\n got %v\nwant %v", path, got, want)
		}
	}
}

func TestRoutes(t *testing.T) {
	b := setup(t, "sqlite")
	mux := http.NewServeMux()
	b.server.Register(mux)
	for _, route := range Routes() {
		method, path, _ := strings.Cut(route, " ")
		_, pattern := mux.Handler(httptest.NewRequest(method, path, nil))
		if pattern != route {
			t.Errorf("%s is served by %q", route, pattern)
		}
	}
	if got := len(b.server.handlers()); got != len(Routes()) {
		t.Errorf("the server has %d handlers, Routes lists %d routes", got, len(Routes()))
	}
}

// TestConcurrentRefreshUsesTheTokenOnce: of several concurrent refreshes with
// one refresh token, exactly one gets new tokens; the others are refused (a
// 400, not a 500).
func TestConcurrentRefreshUsesTheTokenOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		_, refresh := b.tokens(t, "company")
		const n = 6
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { statuses[i] = b.refresh(t, refresh).status })
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusBadRequest, http.StatusUnauthorized:
			default:
				t.Errorf("a concurrent refresh answered %d", s)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of %d concurrent refreshes succeeded (%v), want exactly 1", ok, n, statuses)
		}
	})
}

// TestConcurrentCodeExchangeIssuesOnce: of several concurrent exchanges of
// one authorization code, exactly one gets tokens; the others get 400
// invalid_grant, not a 500.
func TestConcurrentCodeExchangeIssuesOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		code, verifier := b.authorize(t, b.conf, "company")
		const n = 6
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { statuses[i] = b.exchange(t, b.conf, b.confSecret, code, verifier).status })
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusBadRequest:
			default:
				t.Errorf("a concurrent exchange answered %d", s)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of %d concurrent exchanges got tokens (%v), want exactly 1", ok, n, statuses)
		}
	})
}

package oauth

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
)

func TestAuthorizationCodeFlow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		verifier, challenge := newPKCE()
		params := authorizeParams(b.conf.ID, challenge, "company transaction:read")

		// The login and consent page.
		p := b.authorizePage(t, params)
		if p.status != http.StatusOK {
			t.Fatalf("page: status %d: %s", p.status, p.body)
		}
		for _, want := range []string{"App conf", "See and change your company&#39;s settings", "See your company&#39;s bank transactions", `name="password"`, `value="allow"`, `value="deny"`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		for name, want := range map[string]string{
			"Cache-Control":   "no-store",
			"X-Frame-Options": "DENY",
			"Referrer-Policy": "no-referrer",
		} {
			if got := p.header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("Content-Security-Policy = %q", csp)
		}
		for k := range params {
			if p.hidden.Get(k) != params.Get(k) {
				t.Errorf("hidden %s = %q, want %q", k, p.hidden.Get(k), params.Get(k))
			}
		}

		// Allow: a redirect with the code, the state and the granted scopes.
		p = b.submit(t, p.hidden, "  ANA@example.com ", testPassword, "allow")
		if p.status != http.StatusSeeOther {
			t.Fatalf("consent: status %d: %s", p.status, p.body)
		}
		q := p.location.Query()
		if got := p.location.Scheme + "://" + p.location.Host + p.location.Path; got != redirectURI {
			t.Errorf("redirected to %s", got)
		}
		if q.Get("state") != params.Get("state") || q.Get("scope") != "company transaction:read" || q.Get("code") == "" {
			t.Fatalf("redirect query %v", q)
		}

		// The code for tokens.
		r := b.exchange(t, b.conf, b.confSecret, q.Get("code"), verifier)
		if r.status != http.StatusOK {
			t.Fatalf("exchange: %d %v", r.status, r.json)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("token response Cache-Control = %q", r.header.Get("Cache-Control"))
		}
		access, refresh := r.str("access_token"), r.str("refresh_token")
		if !strings.HasPrefix(access, prefixAccess) || !strings.HasPrefix(refresh, prefixRefresh) {
			t.Fatalf("tokens %q %q", access, refresh)
		}
		if r.str("token_type") != "bearer" || r.json["expires_in"] != float64(3600) || r.str("scope") != "company transaction:read" {
			t.Errorf("token response %v", r.json)
		}

		// The access token is the user's, in their company, with the scopes.
		c, err := b.server.Authenticate(ctx, access)
		if err != nil {
			t.Fatal(err)
		}
		if c.Tenant.ID() != b.company.ID || c.ClientID != b.conf.ID || !slices.Equal(c.Scopes, []string{"company", "transaction:read"}) {
			t.Errorf("caller %+v", c)
		}
		if c.User == nil || c.User.ID != b.user.ID || c.User.Role != recon.RoleAdmin || c.User.PasswordHash != "" {
			t.Errorf("caller user %+v", c.User)
		}

		// Refresh: new tokens; the old refresh and access tokens stop working.
		r = b.refresh(t, refresh)
		if r.status != http.StatusOK {
			t.Fatalf("refresh: %d %v", r.status, r.json)
		}
		access2, refresh2 := r.str("access_token"), r.str("refresh_token")
		if access2 == "" || refresh2 == "" || access2 == access || refresh2 == refresh || r.str("scope") != "company transaction:read" {
			t.Fatalf("refresh response %v", r.json)
		}
		c2, err := b.server.Authenticate(ctx, access2)
		if err != nil || c2.User == nil || c2.User.ID != b.user.ID || c2.Tenant.ID() != b.company.ID {
			t.Fatalf("Authenticate(refreshed) = %+v, %v", c2, err)
		}
		b.wantUnauthorized(t, access)

		// Reusing the old refresh token fails and revokes the whole grant.
		wantError(t, b.refresh(t, refresh), http.StatusBadRequest, "invalid_grant")
		b.wantUnauthorized(t, access2)
		wantError(t, b.refresh(t, refresh2), http.StatusBadRequest, "invalid_grant")
	})
}

func TestPublicClientFlow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		code, verifier := b.authorize(t, b.pub, "transaction:read")
		r := b.exchange(t, b.pub, "", code, verifier)
		if r.status != http.StatusOK || r.str("refresh_token") == "" {
			t.Fatalf("exchange: %d %v", r.status, r.json)
		}
		c, err := b.server.Authenticate(context.Background(), r.str("access_token"))
		if err != nil || c.ClientID != b.pub.ID || c.User == nil || c.User.ID != b.user.ID {
			t.Fatalf("Authenticate = %+v, %v", c, err)
		}
		// A public client refreshes with its id alone.
		rr := b.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.str("refresh_token")}, "client_id": {b.pub.ID}}, "", "")
		if rr.status != http.StatusOK {
			t.Fatalf("refresh: %d %v", rr.status, rr.json)
		}
	})
}

func TestPKCE(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		t.Run("wrong verifier", func(t *testing.T) {
			code, verifier := b.authorize(t, b.conf, "company")
			other, _ := newPKCE()
			wantError(t, b.exchange(t, b.conf, b.confSecret, code, other), http.StatusBadRequest, "invalid_grant")
			// The code is spent: the right verifier no longer helps.
			wantError(t, b.exchange(t, b.conf, b.confSecret, code, verifier), http.StatusBadRequest, "invalid_grant")
		})
		t.Run("no verifier", func(t *testing.T) {
			code, _ := b.authorize(t, b.conf, "company")
			wantError(t, b.exchange(t, b.conf, b.confSecret, code, ""), http.StatusBadRequest, "invalid_grant")
		})
		for name, edit := range map[string]func(url.Values){
			"no challenge, confidential": func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") },
			"no challenge, public":       func(v url.Values) { v.Set("client_id", "pub"); v.Del("code_challenge") },
			"plain":                      func(v url.Values) { v.Set("code_challenge_method", "plain") },
			"no method":                  func(v url.Values) { v.Del("code_challenge_method") },
		} {
			t.Run(name, func(t *testing.T) {
				_, challenge := newPKCE()
				params := authorizeParams(b.conf.ID, challenge, "transaction:read")
				edit(params)
				p := b.authorizePage(t, params)
				if p.status != http.StatusSeeOther || p.location.Query().Get("error") != "invalid_request" || p.location.Query().Get("state") != params.Get("state") {
					t.Fatalf("status %d, location %v", p.status, p.location)
				}
			})
		}
	})
}

func TestCodeReuse(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		code, verifier := b.authorize(t, b.conf, "company")
		r := b.exchange(t, b.conf, b.confSecret, code, verifier)
		if r.status != http.StatusOK {
			t.Fatalf("exchange: %d %v", r.status, r.json)
		}
		wantError(t, b.exchange(t, b.conf, b.confSecret, code, verifier), http.StatusBadRequest, "invalid_grant")
		// fosite revokes the tokens of a grant whose code was replayed.
		b.wantUnauthorized(t, r.str("access_token"))
		wantError(t, b.refresh(t, r.str("refresh_token")), http.StatusBadRequest, "invalid_grant")
	})
}

func TestCodeOfAnotherClient(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		code, verifier := b.authorize(t, b.pub, "transaction:read")
		wantError(t, b.exchange(t, b.conf, b.confSecret, code, verifier), http.StatusBadRequest, "invalid_grant")
	})
}

func TestLoginAndConsent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		consentPage := func(t *testing.T) (page, url.Values) {
			t.Helper()
			_, challenge := newPKCE()
			params := authorizeParams(b.conf.ID, challenge, "company")
			p := b.authorizePage(t, params)
			if p.status != http.StatusOK {
				t.Fatalf("page: %d %s", p.status, p.body)
			}
			return p, params
		}
		refused := func(t *testing.T, email, password string) {
			t.Helper()
			p, params := consentPage(t)
			p = b.submit(t, p.hidden, email, password, "allow")
			if p.status != http.StatusOK || p.location != nil {
				t.Fatalf("status %d, location %v; want the page again", p.status, p.location)
			}
			if !strings.Contains(p.body, "The e-mail address or password is wrong.") {
				t.Errorf("page shows no error: %s", p.body)
			}
			if strings.Contains(p.body, password) && password != "" {
				t.Errorf("page echoes the password")
			}
			if p.hidden.Get("code_challenge") != params.Get("code_challenge") || p.hidden.Get("state") != params.Get("state") {
				t.Errorf("hidden fields lost: %v", p.hidden)
			}
		}
		t.Run("wrong password", func(t *testing.T) { refused(t, testEmail, "Wr0ng-Pa55") })
		t.Run("unknown user", func(t *testing.T) { refused(t, "nobody@example.com", testPassword) })
		t.Run("user of another company", func(t *testing.T) { refused(t, otherEmail, testPassword) })
		t.Run("user without password", func(t *testing.T) { refused(t, b.noPassword.Email, "") })
		t.Run("user without password, any password", func(t *testing.T) { refused(t, b.noPassword.Email, "anything") })

		t.Run("deny", func(t *testing.T) {
			p, params := consentPage(t)
			p = b.submit(t, p.hidden, "", "", "deny")
			if p.status != http.StatusSeeOther {
				t.Fatalf("status %d: %s", p.status, p.body)
			}
			q := p.location.Query()
			if q.Get("error") != "access_denied" || q.Get("state") != params.Get("state") || q.Has("code") {
				t.Errorf("redirect %v", p.location)
			}
		})
		t.Run("no decision", func(t *testing.T) {
			p, _ := consentPage(t)
			p = b.submit(t, p.hidden, testEmail, testPassword, "")
			if p.status != http.StatusBadRequest || p.location != nil {
				t.Errorf("status %d, location %v", p.status, p.location)
			}
		})
		t.Run("cross-origin post", func(t *testing.T) {
			p, _ := consentPage(t)
			form := p.hidden
			form.Set("email", testEmail)
			form.Set("password", testPassword)
			form.Set("consent", "allow")
			req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Origin", "https://evil.example")
			if p := b.do(t, req); p.status != http.StatusForbidden || p.location != nil {
				t.Errorf("status %d, location %v", p.status, p.location)
			}
		})
	})
}

func TestAuthorizeRequestErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		_, challenge := newPKCE()
		// Errors the client can be told by redirect.
		for name, tc := range map[string]struct {
			edit func(url.Values)
			want string
		}{
			"no scope":          {func(v url.Values) { v.Del("scope") }, "invalid_scope"},
			"scope not allowed": {func(v url.Values) { v.Set("scope", "company webhook:write") }, "invalid_scope"},
			"unknown scope":     {func(v url.Values) { v.Set("scope", "everything") }, "invalid_scope"},
			"token response":    {func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
			"fragment mode":     {func(v url.Values) { v.Set("response_mode", "fragment") }, "unsupported_response_mode"},
		} {
			t.Run(name, func(t *testing.T) {
				params := authorizeParams(b.conf.ID, challenge, "company")
				tc.edit(params)
				p := b.authorizePage(t, params)
				if p.status != http.StatusSeeOther || p.location == nil {
					t.Fatalf("status %d: %s", p.status, p.body)
				}
				q := p.location.Query()
				if p.location.Fragment != "" {
					q, _ = url.ParseQuery(p.location.Fragment)
				}
				if got := q.Get("error"); got != tc.want {
					t.Errorf("error = %q, want %q (%v)", got, tc.want, p.location)
				}
				if q.Has("code") {
					t.Errorf("a code was issued: %v", p.location)
				}
			})
		}
		// Errors that must not redirect: the redirect URI cannot be trusted.
		for name, edit := range map[string]func(url.Values){
			"unknown client":        func(v url.Values) { v.Set("client_id", "nope") },
			"unregistered redirect": func(v url.Values) { v.Set("redirect_uri", "https://evil.example/cb") },
		} {
			t.Run(name, func(t *testing.T) {
				params := authorizeParams(b.conf.ID, challenge, "company")
				edit(params)
				p := b.authorizePage(t, params)
				if p.status < 400 || p.location != nil || !strings.Contains(p.body, "cannot be completed") {
					t.Fatalf("status %d, location %v: %s", p.status, p.location, p.body)
				}
				if !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
					t.Errorf("Content-Type %q", p.header.Get("Content-Type"))
				}
			})
		}
	})
}

func TestExpiry(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		t.Run("code", func(t *testing.T) {
			code, verifier := b.authorize(t, b.conf, "company")
			b.clock.Advance(DefaultCodeTTL + time.Second)
			wantError(t, b.exchange(t, b.conf, b.confSecret, code, verifier), http.StatusBadRequest, "invalid_grant")
		})
		t.Run("access and refresh", func(t *testing.T) {
			access, refresh := b.tokens(t, "company")
			b.clock.Advance(DefaultAccessTTL + time.Second)
			b.wantUnauthorized(t, access)
			if r := b.introspect(t, b.conf.ID, b.confSecret, access); r.status != http.StatusOK || r.json["active"] != false {
				t.Errorf("introspect expired: %d %v", r.status, r.json)
			}
			// The refresh token outlives it and yields a fresh access token.
			r := b.refresh(t, refresh)
			if r.status != http.StatusOK {
				t.Fatalf("refresh: %d %v", r.status, r.json)
			}
			if _, err := b.server.Authenticate(context.Background(), r.str("access_token")); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(DefaultRefreshTTL + time.Second)
			wantError(t, b.refresh(t, r.str("refresh_token")), http.StatusBadRequest, "invalid_grant")
		})
	})
}

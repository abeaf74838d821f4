package oauth

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
)

func TestIssueToken(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		t.Run("user token", func(t *testing.T) {
			issued, err := b.server.IssueToken(ctx, b.conf.ID, " Ana@Example.com", []string{"transaction:read"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			token, expiresIn := issued.Token, issued.ExpiresIn
			if expiresIn != DefaultAccessTTL || !strings.HasPrefix(token, prefixAccess) {
				t.Errorf("token %q, expires in %v", token, expiresIn)
			}
			c, err := b.server.Authenticate(ctx, token)
			if err != nil {
				t.Fatal(err)
			}
			if c.Tenant.ID() != b.company.ID || c.ClientID != b.conf.ID || c.User == nil || c.User.ID != b.user.ID || !slices.Equal(c.Scopes, []string{"transaction:read"}) {
				t.Errorf("caller %+v", c)
			}
			// Introspection sees it exactly like a token from the flow.
			flow, _ := b.tokens(t, "transaction:read")
			got := b.introspect(t, b.conf.ID, b.confSecret, token).json
			want := b.introspect(t, b.conf.ID, b.confSecret, flow).json
			for _, m := range []map[string]any{got, want} {
				delete(m, "iat")
				delete(m, "exp")
			}
			if !maps.Equal(got, want) {
				t.Errorf("introspection of the issued token\n got %v\nwant %v", got, want)
			}
			// And revocation works the same.
			if r := b.post(t, "/oauth/revoke", map[string][]string{"token": {token}}, b.conf.ID, b.confSecret); r.status != http.StatusOK {
				t.Fatal(r.status)
			}
			b.wantUnauthorized(t, token)
		})
		t.Run("client token", func(t *testing.T) {
			issued, err := b.server.IssueToken(ctx, b.conf.ID, "", nil, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			token := issued.Token
			c, err := b.server.Authenticate(ctx, token)
			if err != nil {
				t.Fatal(err)
			}
			if c.User != nil || c.Tenant.ID() != b.company.ID || !slices.Equal(c.Scopes, b.conf.Scopes) {
				t.Errorf("caller %+v", c)
			}
			r := b.introspect(t, b.conf.ID, b.confSecret, token)
			if r.str("sub") != "client:"+b.conf.ID {
				t.Errorf("introspection %v", r.json)
			}
			b.clock.Advance(time.Minute)
			b.wantUnauthorized(t, token)
		})
		for name, tc := range map[string]struct {
			client, email string
			scopes        []string
			ttl           time.Duration
			field         string
		}{
			"scope not allowed":       {"conf", testEmail, []string{"company", "webhook:write"}, 0, "scope"},
			"ttl too long":            {"conf", testEmail, nil, MaxIssuedTokenTTL + time.Second, "ttl"},
			"negative ttl":            {"conf", testEmail, nil, -time.Second, "ttl"},
			"unknown client":          {"nope", testEmail, nil, 0, "client_id"},
			"unknown user":            {"conf", "nobody@example.com", nil, 0, "email"},
			"user of another company": {"conf", otherEmail, nil, 0, "email"},
		} {
			t.Run(name, func(t *testing.T) {
				issued, err := b.server.IssueToken(ctx, tc.client, tc.email, tc.scopes, tc.ttl)
				var e *recon.Error
				if issued != nil || recon.ErrorCode(err) != recon.EINVALID {
					t.Fatalf("IssueToken = %v, %v; want EINVALID", issued, err)
				}
				if !errors.As(err, &e) || e.Fields[tc.field] == nil {
					t.Errorf("error %v does not name field %s", err, tc.field)
				}
			})
		}
		t.Run("longest ttl", func(t *testing.T) {
			if issued, err := b.server.IssueToken(ctx, b.conf.ID, testEmail, nil, MaxIssuedTokenTTL); err != nil || issued.ExpiresIn != MaxIssuedTokenTTL {
				t.Fatalf("%v, %v", issued, err)
			}
		})
	})
}

func TestAuthenticateRefuses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		access, refresh := b.tokens(t, "company")
		sig := access[strings.LastIndex(access, ".")+1:]
		for name, token := range map[string]string{
			"empty":          "",
			"garbage":        "garbage",
			"refresh token":  refresh,
			"bare signature": sig,
			"forged":         prefixAccess + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA." + sig,
			"without prefix": strings.TrimPrefix(access, prefixAccess) + "x",
		} {
			t.Run(name, func(t *testing.T) { b.wantUnauthorized(t, token) })
		}
		// The genuine token, for contrast.
		if _, err := b.server.Authenticate(context.Background(), access); err != nil {
			t.Fatal(err)
		}
	})
}

// TestNothingInClear checks that the database holds no token, code, PKCE
// verifier or client secret in clear, only signatures and hashes.
func TestNothingInClear(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		code, verifier := b.authorize(t, b.conf, "company offline_access")
		r := b.exchange(t, b.conf, b.confSecret, code, verifier)
		access, refresh := r.str("access_token"), r.str("refresh_token")
		r = b.refresh(t, refresh)
		access2, refresh2 := r.str("access_token"), r.str("refresh_token")
		cc := b.post(t, "/oauth/token", map[string][]string{"grant_type": {"client_credentials"}}, b.conf.ID, b.confSecret).str("access_token")
		it, err := b.server.IssueToken(ctx, b.conf.ID, testEmail, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		issued := it.Token
		// A pending code, with its PKCE session.
		pending, _ := b.authorize(t, b.conf, "company")

		var secrets []string
		for _, s := range []string{code, pending, access, refresh, access2, refresh2, cc, issued} {
			if s == "" {
				t.Fatal("a token is missing")
			}
			// The whole token and its random part (before the signature).
			secrets = append(secrets, s, s[:strings.LastIndex(s, ".")])
		}
		secrets = append(secrets, verifier, b.confSecret, b.otherConfSecret, testPassword)

		var dump strings.Builder
		for _, table := range []string{"oauth_tokens", "oauth_clients", "users"} {
			rows, err := b.db.SQL().QueryContext(ctx, "SELECT * FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			n := 0
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for _, v := range vals {
					switch v := v.(type) {
					case []byte:
						dump.Write(v)
					case string:
						dump.WriteString(v)
					}
					dump.WriteByte('\n')
				}
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if n == 0 {
				t.Fatalf("%s is empty", table)
			}
		}
		for _, s := range secrets {
			if strings.Contains(dump.String(), s) {
				t.Errorf("the database holds %.12s... in clear", s)
			}
		}
		if !strings.Contains(dump.String(), HashClientSecret(b.confSecret)) {
			t.Error("the client secret's hash is not where expected")
		}
	})
}

package oauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
)

func (b *bundle) setStatus(t *testing.T, companyID int64, status string) {
	t.Helper()
	if _, err := b.db.UpdateCompany(context.Background(), companyID, func(c *recon.Company) error {
		c.Status = status
		return c.Validate()
	}); err != nil {
		t.Fatal(err)
	}
}

// TestInactiveCompany: a company made inactive gets no token and its tokens
// authenticate nothing; made active again, its tokens and refresh tokens
// work as before (the refusals used none of them up).
func TestInactiveCompany(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		cc := url.Values{"grant_type": {"client_credentials"}, "scope": {"company"}}
		access, refresh := b.tokens(t, "company offline_access")
		code, verifier := b.authorize(t, b.conf, "company")
		ccToken := b.post(t, "/oauth/token", cc, b.conf.ID, b.confSecret).str("access_token")
		otherToken := b.post(t, "/oauth/token", cc, b.otherConf.ID, b.otherConfSecret).str("access_token")
		if ccToken == "" || otherToken == "" {
			t.Fatal("client credentials issued no token")
		}

		b.setStatus(t, b.company.ID, recon.CompanyInactive)
		wantMsg := "company " + itoa(b.company.ID) + " is inactive: its API access and notifications are suspended until an operator activates it"
		for name, token := range map[string]string{"user token": access, "client token": ccToken} {
			c, err := b.server.Authenticate(ctx, token)
			if c != nil || recon.ErrorCode(err) != recon.EFORBIDDEN || recon.ErrorMessage(err) != wantMsg {
				t.Fatalf("Authenticate(%s) = %+v, %v; want EFORBIDDEN %q", name, c, err, wantMsg)
			}
		}
		for name, r := range map[string]tokenResponse{
			"refresh":            b.refresh(t, refresh),
			"code exchange":      b.exchange(t, b.conf, b.confSecret, code, verifier),
			"client credentials": b.post(t, "/oauth/token", cc, b.conf.ID, b.confSecret),
		} {
			t.Run(name, func(t *testing.T) {
				wantError(t, r, http.StatusForbidden, "access_denied")
				if d := r.str("error_description"); !strings.Contains(d, "inactive") {
					t.Errorf("error_description %q does not say the company is inactive", d)
				}
			})
		}
		t.Run("login page", func(t *testing.T) {
			_, challenge := newPKCE()
			p := b.authorizePage(t, authorizeParams(b.conf.ID, challenge, "company"))
			if p.location == nil || p.location.Query().Get("error") != "access_denied" ||
				!strings.Contains(p.location.Query().Get("error_description"), "inactive") {
				t.Fatalf("authorize: status %d, location %v; want a redirect with access_denied", p.status, p.location)
			}
		})
		if r := b.introspect(t, b.conf.ID, b.confSecret, access); r.status != http.StatusOK || r.json["active"] != false {
			t.Fatalf("introspection of an inactive company's token: %d %v", r.status, r.json)
		}
		_, err := b.server.IssueToken(ctx, b.conf.ID, testEmail, []string{"company"}, 0)
		if recon.ErrorCode(err) != recon.EFORBIDDEN || recon.ErrorMessage(err) != wantMsg {
			t.Fatalf("IssueToken: %v; want EFORBIDDEN", err)
		}
		// Another company is not affected.
		if _, err := b.server.Authenticate(ctx, otherToken); err != nil {
			t.Fatalf("other company's token: %v", err)
		}

		b.setStatus(t, b.company.ID, recon.CompanyActive)
		for _, token := range []string{access, ccToken} {
			if _, err := b.server.Authenticate(ctx, token); err != nil {
				t.Fatalf("Authenticate after activation: %v", err)
			}
		}
		if r := b.refresh(t, refresh); r.status != http.StatusOK {
			t.Fatalf("refresh after activation: %d %v", r.status, r.json)
		}
		// (An authorization code refused while inactive is used up: fosite
		// drops its PKCE data when it reads the request. The user logs in again.)
		if _, err := b.server.Authenticate(ctx, b.tokensOrFail(t)); err != nil {
			t.Fatalf("a new login after activation: %v", err)
		}
	})
}

func (b *bundle) tokensOrFail(t *testing.T) string {
	t.Helper()
	access, _ := b.tokens(t, "company")
	return access
}

package oauth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"recon"
)

// createRoleUser adds a user of the test company with a role, permissions
// and testPassword.
func (b *bundle) createRoleUser(t *testing.T, email string, role recon.Role, perms ...string) *recon.User {
	t.Helper()
	h, err := hashPassword(testPassword, bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u := &recon.User{Company: b.company.ID, Email: email, Role: role, Permissions: perms, PasswordHash: h}
	if err := b.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// consent runs the login and consent page as email, asking for scope, and
// returns the redirect's query.
func (b *bundle) consent(t *testing.T, email, scope string) (code, errCode, verifier string) {
	t.Helper()
	verifier, challenge := newPKCE()
	p := b.authorizePage(t, authorizeParams(b.all.ID, challenge, scope))
	if p.status != http.StatusOK {
		t.Fatalf("authorize page: %d %s", p.status, p.body)
	}
	p = b.submit(t, p.hidden, email, testPassword, "allow")
	if p.status != http.StatusSeeOther || p.location == nil {
		t.Fatalf("consent: status %d, want a redirect: %s", p.status, p.body)
	}
	q := p.location.Query()
	return q.Get("code"), q.Get("error"), verifier
}

// TestConsentGrantsOnlyWhatTheRoleAllows is the first finding of issue 8:
// a Member consenting to a client that may write transactions got
// transaction:write and could forge payments. At consent, through `recon
// token issue`, at code exchange and at refresh, a token gets only the
// scopes its user's role and permissions allow (docs/design.md, D9).
func TestConsentGrantsOnlyWhatTheRoleAllows(t *testing.T) {
	all := strings.Join(recon.Scopes, " ")
	forEachEngine(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.all, b.allSecret = b.createClient(t, "all", b.company.ID, true, recon.Scopes)
		users := map[string]*recon.User{
			"member":            b.createRoleUser(t, "member@example.com", recon.RoleMember),
			"member viewer":     b.createRoleUser(t, "viewer@example.com", recon.RoleMember, recon.PermViewTransactions),
			"accountant":        b.createRoleUser(t, "acc@example.com", recon.RoleAccountant),
			"accountant writer": b.createRoleUser(t, "writer@example.com", recon.RoleAccountant, recon.PermCreateTransactions),
			"admin":             b.createRoleUser(t, "admin@example.com", recon.RoleAdmin),
			"superadmin":        b.createRoleUser(t, "super@example.com", recon.RoleSuperAdmin),
		}
		money := []string{recon.ScopeTransactionRead, recon.ScopeBankAccountRead, recon.ScopeDeliveryRead, recon.ScopeOrderRead, recon.ScopeRefundRead}
		for name, tc := range map[string]struct {
			user, scope string
			want        []string // nil: refused
		}{
			"member asks for everything":            {"member", all, []string{recon.ScopeProfile, recon.ScopeOfflineAccess}},
			"member asks for transaction:write":     {"member", recon.ScopeTransactionWrite, nil},
			"member asks for write and offline":     {"member", "transaction:write offline_access", nil},
			"member asks for profile":               {"member", "profile", []string{recon.ScopeProfile}},
			"member viewer asks for everything":     {"member viewer", all, append(slices.Clone(money), recon.ScopeProfile, recon.ScopeOfflineAccess)},
			"accountant asks for company":           {"accountant", "company", nil},
			"accountant writer asks for everything": {"accountant writer", all, []string{recon.ScopeTransactionWrite, recon.ScopeProfile, recon.ScopeOfflineAccess, recon.ScopeExceptionWrite}},
			"accountant asks for exception:write":   {"accountant", "exception:write", []string{recon.ScopeExceptionWrite}},
			"member asks for exception:write":       {"member", "exception:write", nil},
			"admin asks for everything":             {"admin", all, recon.Scopes},
			"superadmin asks for everything":        {"superadmin", all, recon.Scopes},
		} {
			t.Run(name, func(t *testing.T) {
				email := users[tc.user].Email
				code, errCode, verifier := b.consent(t, email, tc.scope)
				if tc.want == nil {
					if code != "" || errCode != "access_denied" {
						t.Fatalf("code %q, error %q; want access_denied", code, errCode)
					}
				} else {
					r := b.exchange(t, b.all, b.allSecret, code, verifier)
					if r.status != http.StatusOK {
						t.Fatalf("exchange: %d %v", r.status, r.json)
					}
					wantScopes(t, "consent", strings.Fields(r.str("scope")), tc.want)
					c, err := b.server.Authenticate(ctx, r.str("access_token"))
					if err != nil {
						t.Fatal(err)
					}
					wantScopes(t, "token", c.Scopes, tc.want)
				}
				// recon token issue decides the same.
				issued, err := b.server.IssueToken(ctx, b.all.ID, email, strings.Fields(tc.scope), 0)
				if tc.want == nil {
					if recon.ErrorCode(err) != recon.EFORBIDDEN {
						t.Fatalf("IssueToken = %v, %v; want EFORBIDDEN", issued, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				wantScopes(t, "issued", issued.Scopes, tc.want)
				for _, s := range strings.Fields(tc.scope) {
					if slices.Contains(issued.Scopes, s) == slices.Contains(issued.Refused, s) {
						t.Errorf("scope %s is neither granted nor refused, or both: %v / %v", s, issued.Scopes, issued.Refused)
					}
				}
			})
		}

		t.Run("role lowered after consent narrows the refresh", func(t *testing.T) {
			u := b.createRoleUser(t, "demoted@example.com", recon.RoleAdmin)
			setRole := func(role recon.Role, perms string) {
				t.Helper()
				if _, err := b.db.SQL().ExecContext(ctx, `UPDATE users SET role = $1, permissions = $2 WHERE id = $3`, string(role), perms, u.ID); err != nil {
					t.Fatal(err)
				}
			}
			code, _, verifier := b.consent(t, u.Email, "company transaction:read transaction:write offline_access")
			r := b.exchange(t, b.all, b.allSecret, code, verifier)
			if r.status != http.StatusOK {
				t.Fatalf("exchange: %d %v", r.status, r.json)
			}
			setRole(recon.RoleAccountant, recon.PermViewTransactions)
			r = b.post(t, "/oauth/token", map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {r.str("refresh_token")}}, b.all.ID, b.allSecret)
			if r.status != http.StatusOK {
				t.Fatalf("refresh: %d %v", r.status, r.json)
			}
			wantScopes(t, "refresh", strings.Fields(r.str("scope")), []string{recon.ScopeTransactionRead, recon.ScopeOfflineAccess})
			c, err := b.server.Authenticate(ctx, r.str("access_token"))
			if err != nil {
				t.Fatal(err)
			}
			wantScopes(t, "refreshed token", c.Scopes, []string{recon.ScopeTransactionRead, recon.ScopeOfflineAccess})

			setRole(recon.RoleMember, "")
			r = b.post(t, "/oauth/token", map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {r.str("refresh_token")}}, b.all.ID, b.allSecret)
			wantError(t, r, http.StatusBadRequest, "invalid_grant")
		})
	})
}

func wantScopes(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(g, w) {
		t.Errorf("%s scopes %v, want %v", what, g, w)
	}
}

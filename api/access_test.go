package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"recon"
	"recon/api"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// TestEveryRouteChecksTheRole walks every /api/v1 route × every role ×
// every permission set, and a token with no user, with tokens that hold
// every scope: the endpoint alone must refuse what the role does not allow
// (docs/api.md, Who may do what), whatever a token carries. It also walks route × scope:
// the same callers with a token holding every scope but the route's get 403
// insufficient_scope naming it, whatever their role (docs/api.md, Who may do what).
// The expected matrix is written here independently of recon.Caller.May and
// of Register, and a route missing from it fails the test, so a new route
// cannot go unclassified. (The hub's routes are walked the same way by
// package hub's TestEveryRouteChecksScopeAndRole; the gateway takes no
// bearer tokens: its merchant API authenticates with Basic merchant
// credentials, docs/api.md.)
func TestEveryRouteChecksTheRole(t *testing.T) {
	// Who may use each route: "admin" (Admin, SuperAdmin), "read" (also
	// view_transactions), "write" (also create_transactions, and tokens
	// with no user: the company's bank feeds), "resolve" (Admin,
	// SuperAdmin and Accountant, whatever their permissions; never a Member
	// nor a token with no user).
	matrix := map[string]string{
		"GET /api/v1/company":                                 "admin",
		"PATCH /api/v1/company":                               "admin",
		"PATCH /api/v1/company/configurations":                "admin",
		"POST /api/v1/company/try-memo":                       "admin",
		"GET /api/v1/transactions":                            "read",
		"POST /api/v1/transactions":                           "write",
		"GET /api/v1/transactions/{id}":                       "read",
		"GET /api/v1/bank-accounts":                           "read",
		"GET /api/v1/balance-discontinuities":                 "read",
		"POST /api/v1/bank-accounts/{id}/statements":          "write",
		"GET /api/v1/bank-accounts/{id}/statement-mapping":    "read",
		"GET /api/v1/bank-accounts/{id}/statements":           "read",
		"GET /api/v1/bank-accounts/{id}/statements/{import}":  "read",
		"PUT /api/v1/bank-accounts/{id}/statement-mapping":    "write",
		"DELETE /api/v1/bank-accounts/{id}/statement-mapping": "write",
		"GET /api/v1/reconciliation":                          "read",
		"GET /api/v1/deliveries":                              "read",
		"GET /api/v1/deliveries/{id}":                         "read",
		"POST /api/v1/deliveries/{id}/replay":                 "admin",
		"POST /api/v1/deliveries/replay":                      "admin",
		"GET /api/v1/deliveries/stats":                        "read",
		"POST /api/v1/deliveries/test":                        "admin",
		"POST /api/v1/sandbox/transfers":                      "write",
		"GET /api/v1/exceptions":                              "read",
		"GET /api/v1/exceptions/{id}":                         "read",
		"GET /api/v1/exceptions/totals":                       "read",
		"POST /api/v1/exceptions/{id}/resolve":                "resolve",
		"POST /api/v1/exceptions/resolve":                     "resolve",
	}
	// The scope each route needs.
	scopes := map[string]string{
		"GET /api/v1/company":                                 recon.ScopeCompany,
		"PATCH /api/v1/company":                               recon.ScopeCompany,
		"PATCH /api/v1/company/configurations":                recon.ScopeCompany,
		"POST /api/v1/company/try-memo":                       recon.ScopeCompany,
		"GET /api/v1/transactions":                            recon.ScopeTransactionRead,
		"POST /api/v1/transactions":                           recon.ScopeTransactionWrite,
		"GET /api/v1/transactions/{id}":                       recon.ScopeTransactionRead,
		"GET /api/v1/bank-accounts":                           recon.ScopeBankAccountRead,
		"GET /api/v1/balance-discontinuities":                 recon.ScopeBankAccountRead,
		"POST /api/v1/bank-accounts/{id}/statements":          recon.ScopeTransactionWrite,
		"GET /api/v1/bank-accounts/{id}/statement-mapping":    recon.ScopeBankAccountRead,
		"GET /api/v1/bank-accounts/{id}/statements":           recon.ScopeBankAccountRead,
		"GET /api/v1/bank-accounts/{id}/statements/{import}":  recon.ScopeBankAccountRead,
		"PUT /api/v1/bank-accounts/{id}/statement-mapping":    recon.ScopeTransactionWrite,
		"DELETE /api/v1/bank-accounts/{id}/statement-mapping": recon.ScopeTransactionWrite,
		"GET /api/v1/reconciliation":                          recon.ScopeTransactionRead,
		"GET /api/v1/deliveries":                              recon.ScopeDeliveryRead,
		"GET /api/v1/deliveries/{id}":                         recon.ScopeDeliveryRead,
		"POST /api/v1/deliveries/{id}/replay":                 recon.ScopeDeliveryWrite,
		"POST /api/v1/deliveries/replay":                      recon.ScopeDeliveryWrite,
		"GET /api/v1/deliveries/stats":                        recon.ScopeDeliveryRead,
		"POST /api/v1/deliveries/test":                        recon.ScopeDeliveryWrite,
		"POST /api/v1/sandbox/transfers":                      recon.ScopeTransactionWrite,
		"GET /api/v1/exceptions":                              recon.ScopeTransactionRead,
		"GET /api/v1/exceptions/{id}":                         recon.ScopeTransactionRead,
		"GET /api/v1/exceptions/totals":                       recon.ScopeTransactionRead,
		"POST /api/v1/exceptions/{id}/resolve":                recon.ScopeExceptionWrite,
		"POST /api/v1/exceptions/resolve":                     recon.ScopeExceptionWrite,
	}
	type caller struct {
		name string
		user *recon.User // nil: client credentials
	}
	var callers []caller
	permSets := [][]string{nil, {recon.PermViewTransactions}, {recon.PermCreateTransactions}, {recon.PermViewTransactions, recon.PermCreateTransactions}}
	for _, role := range recon.Roles {
		for _, perms := range permSets {
			callers = append(callers, caller{fmt.Sprintf("%s[%s]", role, strings.Join(perms, ",")), &recon.User{ID: 1, Role: role, Permissions: perms}})
		}
	}
	callers = append(callers, caller{"client credentials", nil})
	allowed := func(rule string, u *recon.User) bool {
		if u == nil {
			return rule == "write"
		}
		if u.Role == recon.RoleAdmin || u.Role == recon.RoleSuperAdmin {
			return true
		}
		if rule == "resolve" {
			return u.Role == recon.RoleAccountant
		}
		return (rule == "read" && slices.Contains(u.Permissions, recon.PermViewTransactions)) ||
			(rule == "write" && slices.Contains(u.Permissions, recon.PermCreateTransactions))
	}

	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		co := &recon.Company{FullName: "Sao Mai", ShortName: "SM", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		auth := tokens{}
		for _, c := range callers {
			if c.user != nil {
				c.user.Company = co.ID
			}
			auth[c.name] = &recon.Caller{Tenant: recon.LiveTenant(co.ID), ClientID: "c", Scopes: recon.Scopes, User: c.user}
		}
		mux := web.NewMux()
		(&api.Handler{Store: db, Auth: auth, Sandbox: true, Location: hcm, Logger: slog.New(slog.DiscardHandler)}).Register(mux)
		srv := httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
		defer srv.Close()
		b := &bundle{srv: srv}

		patterns := mux.Patterns()
		for pattern := range matrix {
			if !slices.Contains(patterns, pattern) {
				t.Errorf("the matrix names %q, which is not served", pattern)
			}
			if scopes[pattern] == "" {
				t.Errorf("the matrix names %q, which has no scope in the test's table", pattern)
			}
		}
		for _, pattern := range patterns {
			rule, ok := matrix[pattern]
			if !ok {
				t.Errorf("route %q is not in the authorization matrix", pattern)
				continue
			}
			scope := scopes[pattern]
			method, path, _ := strings.Cut(pattern, " ")
			path = strings.ReplaceAll(path, "{id}", "1")
			for _, c := range callers {
				// The body is malformed: an allowed caller gets past the
				// role check to validation (or a 404), and nothing is written.
				status, _, body := b.do(t, method, path, c.name, "{not json")
				if allowed(rule, c.user) {
					if status == http.StatusForbidden || status >= 500 {
						t.Errorf("%s as %s: %d %v, want it allowed", pattern, c.name, status, body)
					}
				} else if status != http.StatusForbidden || body["error"] != "forbidden" {
					t.Errorf("%s as %s: %d %v, want 403 forbidden", pattern, c.name, status, body)
				}
			}
			// Route × scope: every scope but the route's is refused,
			// whoever the token was issued to.
			allBut := slices.DeleteFunc(slices.Clone(recon.Scopes), func(s string) bool { return s == scope })
			for _, c := range callers {
				name := c.name + " without " + scope
				auth[name] = &recon.Caller{Tenant: recon.LiveTenant(co.ID), ClientID: "c", Scopes: allBut, User: c.user}
				status, h, body := b.do(t, method, path, name, "{not json")
				if status != http.StatusForbidden || body["error"] != "forbidden" ||
					!strings.Contains(fmt.Sprint(body["message"]), `scope "`+scope+`"`) ||
					!strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope", scope="`+scope+`"`) {
					t.Errorf("%s as %s: %d %v (WWW-Authenticate %q), want 403 insufficient_scope naming %s",
						pattern, name, status, body, h.Get("WWW-Authenticate"), scope)
				}
			}
		}
	})
}

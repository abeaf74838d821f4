package apiv2

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// TestEveryRouteChecksScopeAndRole walks every /v2 route Register adds ×
// every role × permission set, and a token with no user (client
// credentials), with tokens holding every scope: the route alone must refuse
// what the caller may not do (docs/api-v2.md, Authentication, scopes and
// roles). Who may do what is written here per action, independently of
// recon.Caller.May; a route naming an action the table lacks fails, and so
// does one whose scope is not the action's (recon.ScopeAction). It also
// walks route × scope: a token holding every scope but the route's gets 403
// insufficient_scope naming it. A new route is walked without editing this
// test.
func TestEveryRouteChecksScopeAndRole(t *testing.T) {
	// Who may attempt each action: "money" (Admin, SuperAdmin, or
	// view_transactions; never client credentials: the money-reading rule
	// of /api/v1), "read" (the same, and client credentials), "admin" (Admin, SuperAdmin;
	// client credentials), "refund" (Admin, SuperAdmin or create_refunds;
	// client credentials), "invoice" (Admin, SuperAdmin or issue_invoices;
	// client credentials), "approve" (Admin, SuperAdmin; never client
	// credentials).
	rules := map[recon.Action]string{
		recon.ActionReadMoney:      "money",
		recon.ActionReadOrders:     "read",
		recon.ActionReadRefunds:    "read",
		recon.ActionWriteOrders:    "admin",
		recon.ActionRequestRefunds: "refund",
		recon.ActionApproveRefunds: "approve",
		recon.ActionReadInvoices:   "read",
		recon.ActionIssueInvoices:  "invoice",
	}
	type caller struct {
		name string
		user *recon.User // nil: client credentials
	}
	var callers []caller
	permSets := [][]string{nil, {recon.PermViewTransactions}, {recon.PermCreateTransactions}, {recon.PermCreateRefunds}, {recon.PermViewTransactions, recon.PermCreateRefunds}, {recon.PermIssueInvoices}}
	for _, role := range recon.Roles {
		for _, perms := range permSets {
			callers = append(callers, caller{fmt.Sprintf("%s[%s]", role, strings.Join(perms, ",")), &recon.User{ID: 1, Role: role, Permissions: perms}})
		}
	}
	callers = append(callers, caller{"client credentials", nil})
	allowed := func(rule string, u *recon.User) bool {
		if u == nil {
			return rule != "approve" && rule != "money"
		}
		if u.Role == recon.RoleAdmin || u.Role == recon.RoleSuperAdmin {
			return true
		}
		return ((rule == "read" || rule == "money") && slices.Contains(u.Permissions, recon.PermViewTransactions)) ||
			(rule == "refund" && slices.Contains(u.Permissions, recon.PermCreateRefunds)) ||
			(rule == "invoice" && slices.Contains(u.Permissions, recon.PermIssueInvoices))
	}
	pathParam := regexp.MustCompile(`\{[^}]+\}`)

	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		co, _ := company(t, db, "SM")
		auth := tokens{}
		for _, c := range callers {
			if c.user != nil {
				c.user.Company = co.ID
			}
			auth[c.name] = &recon.Caller{Tenant: co.Tenant(), ClientID: "c", Scopes: recon.Scopes, User: c.user}
		}
		h := New(Config{Store: db, Auth: auth})
		mux := web.NewMux()
		h.Register(mux)
		_, srv := server(t, Config{Store: db, Auth: auth})
		for _, p := range mux.Patterns() {
			if strings.Contains(p, " /v2/") && p != "GET /v2/openapi.json" && !slices.ContainsFunc(h.Routes(), func(r Route) bool { return r.Pattern == p }) {
				t.Errorf("%s is served outside routes.add: it checks no scope nor role", p)
			}
		}
		for _, rt := range h.Routes() {
			rule, ok := rules[rt.Action]
			if !ok {
				t.Errorf("%s: action %q is not in the test's table", rt.Pattern, rt.Action)
				continue
			}
			if rt.Action != recon.ScopeAction(rt.Scope) && !(rt.Action == recon.ActionApproveRefunds && rt.Scope == recon.ScopeRefundWrite) {
				t.Errorf("%s: scope %s lets its holder %q, not %q", rt.Pattern, rt.Scope, recon.ScopeAction(rt.Scope), rt.Action)
			}
			method, path, _ := strings.Cut(rt.Pattern, " ")
			path = pathParam.ReplaceAllString(path, "1")
			for _, c := range callers {
				// The body is malformed: an allowed caller gets past the
				// role check to validation (or a 404, or 422 without an
				// idempotency key), and nothing is written.
				status, _, body := send(t, method, srv.URL+path, c.name, "{not json")
				if allowed(rule, c.user) {
					if status == http.StatusForbidden || status >= 500 {
						t.Errorf("%s as %s: %d %s, want it allowed", rt.Pattern, c.name, status, body)
					}
				} else if status != http.StatusForbidden || !strings.Contains(body, `"error_code":"forbidden"`) {
					t.Errorf("%s as %s: %d %s, want 403 forbidden", rt.Pattern, c.name, status, body)
				}
			}
			allBut := slices.DeleteFunc(slices.Clone(recon.Scopes), func(s string) bool { return s == rt.Scope })
			for _, c := range callers {
				name := c.name + " without " + rt.Scope
				auth[name] = &recon.Caller{Tenant: co.Tenant(), ClientID: "c", Scopes: allBut, User: c.user}
				status, h, body := send(t, method, srv.URL+path, name, "{not json")
				if status != http.StatusForbidden || !strings.Contains(body, `"error_code":"forbidden"`) ||
					!strings.Contains(body, `scope \"`+rt.Scope+`\"`) ||
					!strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope", scope="`+rt.Scope+`"`) {
					t.Errorf("%s as %s: %d %s (WWW-Authenticate %q), want 403 insufficient_scope naming %s",
						rt.Pattern, name, status, body, h.Get("WWW-Authenticate"), rt.Scope)
				}
			}
		}
	})
}

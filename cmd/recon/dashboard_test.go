package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// The environment of the dashboard's tests that need a whole `recon serve`:
// the settings' OAuth clients and hub webhook, whose results the hub's API
// uses (dashboard_settings2_test.go). Everything else of the dashboard
// (pages, sign-in, CSRF, roles, tenants and modes, confirmations, settings,
// uploads, the browser tests) is tested in package dashboard.

const dashPassword = "correct horse battery"

// dashEnv is a server with one company (live and test data) and a second
// company, and users of every role with a password.
type dashEnv struct {
	base, dbURL string
	live, test  *merchantSetup
	other       *merchantSetup
	userIDs     map[string]string
	rc          *testkit.Receiver // the IPN endpoint of both companies
}

// htmlMemo is what a payer may write in a memo; the dashboard must show it as text.
const htmlMemo = `<script>alert("memo")</script><img src=x onerror=alert(1)>`

func newDashEnv(t *testing.T, engine string) *dashEnv {
	t.Helper()
	e := &dashEnv{dbURL: dbtest.NewMigratedURL(t, engine), userIDs: map[string]string{}}
	rc := testkit.NewReceiver(t)
	e.rc = rc
	e.base, _, _ = startServer(t, e.dbURL, "--sandbox", "--allow-private-targets")
	e.live = setupMerchant(t, e.base, e.dbURL, rc.URL+"/ipn")
	for _, u := range []struct {
		email string
		role  recon.Role
		perms []string
	}{
		{"boss@saomai.vn", recon.RoleAdmin, nil}, {"ketoan@saomai.vn", recon.RoleAccountant, []string{recon.PermViewTransactions}}, {"nhanvien@saomai.vn", recon.RoleMember, nil},
	} {
		e.userIDs[u.email] = fmt.Sprint(dashUser(t, e.dbURL, e.live.company, u.email, u.role, u.perms...))
	}
	// Live: a paid order, an open order whose description holds HTML, a
	// transfer whose memo holds HTML.
	code := e.live.checkout(t, "INV-PAID", 150000)
	e.live.pay(t, code, 150000)
	e.checkoutWith(t, e.live, "INV-OPEN", 90000, `<b onmouseover="x()">Đơn "mở" & </b>`)
	e.transfer(t, e.live, 12345, htmlMemo)
	// Test mode: its own transfer.
	e.test = testModeOf(t, e.live)
	e.transfer(t, e.test, 777, "TEST-ONLY MEMO")
	// Another company with a transfer and an order.
	e.other = setupMerchant(t, e.base, e.dbURL, rc.URL+"/ipn2")
	e.other.checkout(t, "INV-OTHER", 5000)
	e.transfer(t, e.other, 5000, "OTHER COMPANY")
	return e
}

// dashUser stores a user with dashPassword hashed at bcrypt's lowest cost
// (what recon user create --password stores costs cost 12, seconds under
// the race detector, per sign-in), and returns its id.
func dashUser(t *testing.T, dbURL, company, email string, role recon.Role, perms ...string) int64 {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(dashPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := parseID(company)
	u := &recon.User{Company: id, Email: email, Role: role, Permissions: perms, PasswordHash: string(h)}
	if err := dbtest.OpenURL(t, dbURL).CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// checkoutWith creates an order with the description through the gateway.
func (e *dashEnv) checkoutWith(t *testing.T, m *merchantSetup, invoice string, amount int, description string) {
	t.Helper()
	body := checkoutForm(m.secret, [][2]string{
		{"merchant", m.merchantID}, {"operation", "PURCHASE"}, {"payment_method", "BANK_TRANSFER"},
		{"order_invoice_number", invoice}, {"order_amount", fmt.Sprint(amount)}, {"currency", "VND"},
		{"order_description", description}, {"customer_id", "KH002"},
		{"success_url", "https://shop.example.vn/ok"}, {"error_url", "https://shop.example.vn/err"}, {"cancel_url", "https://shop.example.vn/cancel"},
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Post(m.base+"/v1/checkout/init", "application/x-www-form-urlencoded", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("checkout %s: %d", invoice, resp.StatusCode)
	}
}

// transfer makes a sandbox transfer.
func (e *dashEnv) transfer(t *testing.T, m *merchantSetup, amount int, memo string) {
	t.Helper()
	status, body := testkit.Call(t, "POST", m.base+"/api/v1/sandbox/transfers", m.feedToken,
		fmt.Sprintf(`{"bank_account_id":%s,"amount":%d,"transaction_content":%q}`, m.account, amount, memo))
	if status != 200 {
		t.Fatalf("transfer: %d %v", status, body)
	}
}

// browser is a browser of the server, with no session.
func (e *dashEnv) browser(t *testing.T) *testkit.Browser { return testkit.NewBrowser(t, e.base) }

// signedIn is a browser signed in to the live company as email.
func (e *dashEnv) signedIn(t *testing.T, email string) *testkit.Browser {
	t.Helper()
	return e.browser(t).SignedIn(e.live.company, email, dashPassword)
}

func parseID(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

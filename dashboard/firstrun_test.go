package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// The test mode that works from the dashboard (docs/testmode.md, The
// dashboard's sandbox), both engines, on a real server started as
// `recon serve --sandbox`: the sandbox page writes nothing live in live
// mode, test orders (checkout and API v2 with a virtual account) are made
// and paid in test mode only, and hub companies are made from the
// dashboard in the mode shown.
func TestDashboardTestMode(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		e := newDashEnv(t, engine)
		for _, c := range []struct {
			name string
			fn   func(*testing.T, *dashEnv)
		}{{"LiveWritesNothing", dashSandboxLive}, {"TestOrders", dashTestOrders}, {"HubCompanies", dashHubCompanies}} {
			if !t.Run(c.name, func(t *testing.T) { c.fn(t, e) }) {
				return
			}
		}
	})
}

// liveCounts is what the live tenant holds: transactions, orders, hub
// companies.
func liveCounts(t *testing.T, e *dashEnv, tn recon.TenantID) [3]int64 {
	t.Helper()
	ctx := context.Background()
	_, txs, err := e.db.Transactions(ctx, tn, recon.TransactionFilter{Page: 1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, orders, err := e.db.Orders(ctx, tn, recon.OrderFilter{Page: 1, PerPage: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, hcs, err := e.db.HubCustomers(ctx, tn, recon.HubCustomerFilter{Page: 1, PerPage: 1})
	if err != nil {
		t.Fatal(err)
	}
	return [3]int64{txs, orders, hcs}
}

// dashSandboxLive: in live mode (on a --sandbox server, where the page once
// wrote live data) the page offers the switch and every form of it is
// refused, writing nothing live.
func dashSandboxLive(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	before := liveCounts(t, e, e.live.id)
	status, body := b.Get("/dashboard/sandbox")
	if status != 200 || !strings.Contains(body, `id="sandbox-live"`) || !strings.Contains(body, "never changes") ||
		strings.Contains(body, `id="to-create"`) || strings.Contains(body, `id="sb-send"`) || strings.Contains(body, "Test data only") {
		t.Fatalf("the sandbox page in live mode: %d %s", status, body)
	}
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.live.account)}, "amount": {"1000"}, "memo": {"DH12345678"}}},
		{"/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.live.account)}, "invoice": {"INV-OPEN"}}},
		{"/dashboard/sandbox/order", url.Values{"kind": {"checkout"}, "amount": {"150000"}, "invoice": {"LIVE-1"}}},
		{"/dashboard/sandbox/order", url.Values{"kind": {"v2"}, "amount": {"150000"}, "va_mode": {"exact"}}},
		{"/dashboard/sandbox/hub-event", url.Values{"event": {"BANK_ACCOUNT_LINKED"}}},
	} {
		if status, _, body := b.PostFrom("/dashboard/sandbox", c.path, c.form); status != http.StatusNotFound || !strings.Contains(body, "test data only") {
			t.Errorf("POST %s %v in live mode: %d %s", c.path, c.form, status, body)
		}
	}
	if after := liveCounts(t, e, e.live.id); after != before {
		t.Fatalf("live data written by the sandbox page: before %v, after %v (transactions, orders, hub companies)", before, after)
	}
	if o, err := e.db.Order(context.Background(), e.live.id, "INV-OPEN"); err != nil || o.PaidAmount != 0 {
		t.Fatalf("the live order INV-OPEN after the refused payment: %+v %v", o, err)
	}
	// The page's own switch leads back to it, in test mode.
	status, loc, _ := b.PostFrom("/dashboard/sandbox", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/sandbox"}})
	if status != http.StatusSeeOther || loc != "/dashboard/sandbox" {
		t.Fatalf("switch from the sandbox page: %d %s", status, loc)
	}
	if _, body = b.Get("/dashboard/sandbox"); !strings.Contains(body, `id="to-create"`) || !strings.Contains(body, "Test data only") {
		t.Fatalf("the sandbox page in test mode: %s", body)
	}
}

var createdOrder = regexp.MustCompile(`^/dashboard/sandbox\?order=([A-Za-z0-9_-]+)$`)

// dashTestOrders: a checkout order and an API v2 order with its virtual
// account, made and paid from the sandbox, in the test tenant only; bad
// input refused with what is wrong, nothing written.
func dashTestOrders(t *testing.T, e *dashEnv) {
	ctx := context.Background()
	b := e.signedIn(t, "boss@saomai.vn")
	b.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/"}})
	before := liveCounts(t, e, e.live.id)

	// A checkout order, its invoice number made up: TEST- and 8 digits.
	status, loc, body := b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/order", url.Values{"kind": {"checkout"}, "amount": {"250.000"}, "description": {"Áo dài <lụa>"}})
	m := createdOrder.FindStringSubmatch(loc)
	if status != http.StatusSeeOther || m == nil || !regexp.MustCompile(`^TEST-\d{8}$`).MatchString(m[1]) {
		t.Fatalf("create a checkout test order: %d %q %s", status, loc, body)
	}
	inv := m[1]
	o, err := e.db.Order(ctx, e.test.id, inv)
	if err != nil || o.Amount != 250000 || !strings.HasPrefix(o.PaymentCode, "DH") || o.Description != "Áo dài <lụa>" {
		t.Fatalf("the checkout test order: %+v %v", o, err)
	}
	status, body = b.Get(loc)
	if status != 200 || !strings.Contains(body, `<code id="test-order-code">`+o.PaymentCode+`</code>`) || !strings.Contains(body, "250,000") ||
		!strings.Contains(body, `id="pay-invoice" name="invoice" value="`+inv+`"`) {
		t.Fatalf("the sandbox page with the new order: %d %s", status, body)
	}
	if status, _, body = b.PostFrom(loc, "/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.test.account)}, "invoice": {inv}}); status != 200 {
		t.Fatalf("pay the checkout test order: %d %s", status, body)
	}
	if o, err = e.db.Order(ctx, e.test.id, inv); err != nil || o.PaidAmount != 250000 {
		t.Fatalf("the checkout test order after its payment: %+v %v", o, err)
	}

	// An API v2 order with a virtual account (the sandbox bank's in test mode).
	status, loc, body = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/order", url.Values{"kind": {"v2"}, "amount": {"1.250.000"},
		"invoice": {"SHOP-V2-1"}, "customer": {"KH-42"}, "va_mode": {"exact"}})
	if status != http.StatusSeeOther || loc != "/dashboard/sandbox?order=SHOP-V2-1" {
		t.Fatalf("create a v2 test order: %d %q %s", status, loc, body)
	}
	v2, err := e.db.Order(ctx, e.test.id, "SHOP-V2-1")
	if err != nil || v2.PublicID == "" || v2.Amount != 1250000 || v2.CustomerID != "KH-42" {
		t.Fatalf("the v2 test order: %+v %v", v2, err)
	}
	vas, err := e.db.OrderVAs(ctx, e.test.id, []int64{v2.ID})
	if err != nil || len(vas[v2.ID]) != 1 {
		t.Fatalf("the v2 test order's accounts: %v %v", vas, err)
	}
	va := vas[v2.ID][0]
	if _, body = b.Get(loc); !strings.Contains(body, `<code id="test-order-va">`+va.Number+`</code>`) {
		t.Fatalf("the sandbox page with the v2 order: %s", body)
	}
	if status, _, body = b.PostFrom(loc, "/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.test.account)}, "invoice": {"SHOP-V2-1"}}); status != 200 {
		t.Fatalf("pay the v2 test order: %d %s", status, body)
	}
	if v2, err = e.db.Order(ctx, e.test.id, "SHOP-V2-1"); err != nil || v2.PaidAmount != 1250000 || v2.V2Status() != recon.OrderPaid {
		t.Fatalf("the v2 test order after its payment: %+v %v", v2, err)
	}

	// Refusals: 400 naming what is wrong, nothing created.
	_, n, _ := e.db.Orders(ctx, e.test.id, recon.OrderFilter{Page: 1, PerPage: 1})
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"kind": {"checkout"}, "amount": {"abc"}}, "The amount must be a whole number of VND"},
		{url.Values{"kind": {"checkout"}, "amount": {"0"}}, "The amount must be a whole number of VND"},
		{url.Values{"kind": {"checkout"}, "amount": {"99999999999999999999"}}, "The amount must be a whole number of VND"},
		{url.Values{"kind": {"checkout"}, "amount": {"1000"}, "invoice": {"bad invoice!"}}, "invoice number must be 1 to 100"},
		{url.Values{"kind": {"checkout"}, "amount": {"1000"}, "invoice": {inv}}, "already exists"},
		{url.Values{"kind": {"v2"}, "amount": {"1000"}, "invoice": {"SHOP-V2-1"}, "va_mode": {"exact"}}, "already exists"},
		{url.Values{"kind": {"v2"}, "amount": {"1000"}, "va_mode": {"weird"}}, "exact, partial or open"},
		{url.Values{"kind": {"cash"}, "amount": {"1000"}}, "Choose the kind of order"},
		{url.Values{"kind": {"checkout"}, "amount": {"1000"}, "description": {strings.Repeat("x", 1001)}}, "too long"},
	} {
		status, _, body := b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/order", c.form)
		if status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("test order %v: %d, want 400 with %q: %s", c.form, status, c.want, body)
		}
	}
	if _, after, _ := e.db.Orders(ctx, e.test.id, recon.OrderFilter{Page: 1, PerPage: 1}); after != n {
		t.Errorf("refused test orders were stored: %d orders, then %d", n, after)
	}
	// Another tenant's order is not shown or paid from here.
	if status, _ := b.Get("/dashboard/sandbox?order=INV-OTHER"); status != http.StatusNotFound {
		t.Errorf("another company's order on the sandbox page: %d", status)
	}
	if status, _ := b.Get("/dashboard/sandbox?order=INV-OPEN"); status != http.StatusNotFound {
		t.Errorf("the live order on the test sandbox page: %d", status)
	}
	if after := liveCounts(t, e, e.live.id); after != before {
		t.Fatalf("live data written by test orders: before %v, after %v", before, after)
	}

	// In Vietnamese, the form and a refusal read in Vietnamese.
	b.Lang = "vi"
	defer func() { b.Lang = "en" }()
	_, body = b.Get("/dashboard/sandbox")
	for _, en := range []string{"Create a test order", "Kind of order", "Checkout order", "empty: TEST-"} {
		if strings.Contains(body, en) {
			t.Errorf("the Vietnamese sandbox page shows %q", en)
		}
	}
	if !strings.Contains(body, "Tạo đơn hàng thử nghiệm") {
		t.Errorf("the Vietnamese sandbox page: %s", body)
	}
	if _, _, body = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/order", url.Values{"kind": {"checkout"}, "amount": {"abc"}}); !strings.Contains(body, "Số tiền phải là số nguyên VND") {
		t.Errorf("a Vietnamese refusal: %s", body)
	}
}

var createdCompany = regexp.MustCompile(`^/dashboard/hub-companies\?created=([0-9a-f-]{36})$`)

// dashHubCompanies: hub companies made from the dashboard, in the mode
// shown, through the hub's rules; other tenants' are not listed; a Member
// is refused.
func dashHubCompanies(t *testing.T, e *dashEnv) {
	ctx := context.Background()
	b := e.signedIn(t, "boss@saomai.vn") // live mode
	status, body := b.Get("/dashboard/hub-companies")
	if status != 200 || !strings.Contains(body, `id="hc-create"`) {
		t.Fatalf("hub companies page: %d %s", status, body)
	}
	status, loc, body := b.PostFrom("/dashboard/hub-companies", "/dashboard/hub-companies", url.Values{"full_name": {"  Công ty TNHH Hoa Sen  "}, "short_name": {"HOASEN"}, "status": {"Active"}})
	m := createdCompany.FindStringSubmatch(loc)
	if status != http.StatusSeeOther || m == nil {
		t.Fatalf("create a hub company: %d %q %s", status, loc, body)
	}
	hc, err := e.db.HubCustomer(ctx, e.live.id, m[1])
	if err != nil || hc.FullName != "Công ty TNHH Hoa Sen" || hc.ShortName != "HOASEN" || hc.Status != recon.HubCustomerActive {
		t.Fatalf("the hub company: %+v %v", hc, err)
	}
	if _, body = b.Get(loc); !strings.Contains(body, `id="hc-`+hc.XID+`"`) || !strings.Contains(body, `id="hc-done"`) {
		t.Fatalf("the list after creating: %s", body)
	}
	// The bank accounts page links a bank for it, and links to this page.
	if _, body = b.Get("/dashboard/bank-accounts"); !strings.Contains(body, `<option value="`+hc.XID+`">`) || !strings.Contains(body, `id="hc-manage"`) {
		t.Fatalf("bank accounts after creating a hub company: %s", body)
	}
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"full_name": {"Công ty TNHH Hoa Sen"}, "status": {"Active"}}, "already exists"},
		{url.Values{"full_name": {"   "}, "status": {"Active"}}, "full name is required"},
		{url.Values{"full_name": {strings.Repeat("a", 201)}, "status": {"Active"}}, "full name is required"},
		{url.Values{"full_name": {"X"}, "short_name": {strings.Repeat("s", 65)}, "status": {"Active"}}, "at most 64"},
		{url.Values{"full_name": {"Y"}, "status": {"Closed"}}, "Choose a status"},
	} {
		status, _, body := b.PostFrom("/dashboard/hub-companies", "/dashboard/hub-companies", c.form)
		if status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("hub company %v: %d, want 400 with %q: %s", c.form, status, c.want, body)
		}
	}
	if _, n, _ := e.db.HubCustomers(ctx, e.live.id, recon.HubCustomerFilter{Page: 1, PerPage: 10}); n != 1 {
		t.Errorf("live hub companies after the refusals: %d, want 1", n)
	}
	// In test mode: its own companies; the live one is not listed.
	b.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/"}})
	if _, body = b.Get("/dashboard/hub-companies"); strings.Contains(body, hc.XID) {
		t.Errorf("the live company is listed in test mode: %s", body)
	}
	status, loc, _ = b.PostFrom("/dashboard/hub-companies", "/dashboard/hub-companies", url.Values{"full_name": {"Công ty TNHH Hoa Sen"}, "status": {"Pending"}})
	if m = createdCompany.FindStringSubmatch(loc); status != http.StatusSeeOther || m == nil {
		t.Fatalf("the same name in test mode: %d %q", status, loc)
	}
	if _, err := e.db.HubCustomer(ctx, e.test.id, m[1]); err != nil {
		t.Fatalf("the test hub company: %v", err)
	}
	if _, err := e.db.HubCustomer(ctx, e.live.id, m[1]); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("the test hub company in live data: %v", err)
	}
	// Vietnamese: statuses and labels translated.
	b.Lang = "vi"
	_, body = b.Get("/dashboard/hub-companies")
	b.Lang = "en"
	if !strings.Contains(body, "Chờ xử lý") || strings.Contains(body, ">Pending<") || strings.Contains(body, "Full name") {
		t.Errorf("the Vietnamese hub companies page: %s", body)
	}
	// A Member may not.
	member := e.signedIn(t, "nhanvien@saomai.vn")
	if status, _ := member.Get("/dashboard/hub-companies"); status != http.StatusForbidden {
		t.Errorf("Member GET hub companies: %d", status)
	}
	if status, _, _ := member.PostFrom("/dashboard/", "/dashboard/hub-companies", url.Values{"full_name": {"Z"}, "status": {"Active"}}); status != http.StatusForbidden {
		t.Errorf("Member POST hub companies: %d", status)
	}
}

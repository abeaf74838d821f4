package dashboard_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// linksEnv is a dashEnv with the orders of one customer: INV-L1 underpaid
// by a transfer (an open exception), INV-L2 paid in full (an IPN), and a
// customer of the test mode and of the other company.
type linksEnv struct {
	*dashEnv
	code1, code2    string // payment codes of INV-L1 and INV-L2
	underTx, fullTx string // the transfers paying INV-L1 (short) and INV-L2
	noCodeTx        string // the transfer naming no order (an open exception)
	testTx, otherTx string
	otherCode       string
	l2Delivery      string // the ORDER_PAID delivery of INV-L2
	refund          string // a refund of INV-PAID
}

// TestDashboardLinks: the pages link to each other in both directions, on
// a real server, both engines: a test follows each link (GET the page, find
// the href, GET it, check it shows the related row); the transactions list
// and its CSV show the matched order and states; the home's tiles open
// lists whose counts are theirs; orders are found by payment code; the
// customer's page; another company's and the other mode's ids are 404.
func TestDashboardLinks(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newLinksEnv(t, engine)
		b := e.signedIn(t, "boss@saomai.vn")
		t.Run("Transaction", func(t *testing.T) { linksTransaction(t, e, b) })
		t.Run("Order", func(t *testing.T) { linksOrder(t, e, b) })
		t.Run("Notifications", func(t *testing.T) { linksNotifications(t, e, b) })
		t.Run("List", func(t *testing.T) { linksList(t, e, b) })
		t.Run("CSV", func(t *testing.T) { linksCSV(t, e, b) })
		t.Run("Tiles", func(t *testing.T) { linksTiles(t, e, b) })
		t.Run("OrderSearch", func(t *testing.T) { linksOrderSearch(t, e, b) })
		t.Run("Customer", func(t *testing.T) { linksCustomer(t, e, b) })
		t.Run("TenantsAndModes", func(t *testing.T) { linksTenants(t, e, b) })
		t.Run("ResolvedByHand", func(t *testing.T) { linksResolved(t, e, b) })
	})
}

func newLinksEnv(t *testing.T, engine string) *linksEnv {
	t.Helper()
	e := &linksEnv{dashEnv: newDashEnv(t, engine)}
	e.noCodeTx = e.transfer(t, e.live, 12345, "khong co ma")
	e.code1 = e.customerOrder(t, e.live, "INV-L1", "KH-LINKS", 100000)
	e.code2 = e.customerOrder(t, e.live, "INV-L2", "KH-LINKS", 50000)
	e.underTx = e.pay(t, e.live, e.code1, 60000)
	testCode := e.customerOrder(t, e.test, "INV-T1", "KH-TEST", 7000)
	e.testTx = e.pay(t, e.test, testCode, 7000)
	e.otherCode = e.customerOrder(t, e.other, "INV-O1", "KH-OTHER", 9000)
	e.otherTx = e.pay(t, e.other, e.otherCode, 9000)
	e.refund = e.pendingRefund(t, 10000)
	e.failDeliveries(t)
	return e
}

// customerOrder stores an order of the customer, as checkout does, and
// returns its payment code.
func (e *linksEnv) customerOrder(t *testing.T, m *tenant, invoice, customer string, amount int64) string {
	t.Helper()
	o := &recon.Order{CompanyID: m.id.ID(), InvoiceNumber: invoice, CustomerID: customer, Amount: amount, Currency: "VND",
		Description: "Đơn " + invoice, PaymentCode: fmt.Sprintf("DH%08d", e.codes.IntN(100_000_000)), BankAccountID: m.account}
	if err := e.db.CreateOrder(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.PaymentCode
}

// failDeliveries pays INV-L2 (the transfer fullTx) and INV-L4 while the
// receiver answers 500, once every other live notification is delivered,
// then records a last attempt that failed for good on INV-L2's IPN (dead)
// and one to retry in a day on INV-L4's (failing, which the dispatcher
// leaves alone meanwhile): the tiles count one of each.
func (e *linksEnv) failDeliveries(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	testkit.WaitFor(t, "the live notifications delivered", 10*time.Second, func() bool {
		ds, err := e.db.Deliveries(ctx, e.live.id, recon.DeliveryFilter{Status: recon.DeliveryPending})
		if err != nil {
			t.Fatal(err)
		}
		return len(ds) == 0
	})
	e.rc.Answer(func(int) int { return http.StatusInternalServerError })
	defer e.rc.Answer(nil)
	e.fullTx = e.pay(t, e.live, e.code2, 50000)
	e.pay(t, e.live, e.customerOrder(t, e.live, "INV-L4", "KH002", 20000), 20000)
	var outcomes []recon.AttemptOutcome
	for _, c := range []struct {
		invoice, status string
	}{{"INV-L2", recon.DeliveryDead}, {"INV-L4", recon.DeliveryPending}} {
		o, err := e.db.Order(ctx, e.live.id, c.invoice)
		if err != nil {
			t.Fatal(err)
		}
		var ds []*recon.Delivery
		testkit.WaitFor(t, c.invoice+"'s IPN failed once", 10*time.Second, func() bool {
			if ds, err = e.db.OrderDeliveries(ctx, e.live.id, o, 10); err != nil {
				t.Fatal(err)
			}
			return len(ds) > 0 && ds[0].Status == recon.DeliveryPending && ds[0].Attempts > 0
		})
		out := recon.AttemptOutcome{Attempt: &recon.DeliveryAttempt{DeliveryID: ds[0].ID, URL: e.rc.URL + "/ipn", StatusCode: 500, Error: "HTTP 500"},
			Status: c.status}
		if c.status == recon.DeliveryPending {
			out.Next = time.Now().Add(24 * time.Hour)
		} else {
			e.l2Delivery = formatInt(ds[0].ID)
		}
		outcomes = append(outcomes, out)
	}
	if err := e.db.RecordAttempts(ctx, outcomes); err != nil {
		t.Fatal(err)
	}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// hrefOf is the href of the first link of the page whose attributes hold
// attr (id="x" or class="x"; or href="x" itself), unescaped; "" when there
// is none.
func hrefOf(body, attr string) string {
	if v, ok := strings.CutPrefix(attr, `href="`); ok {
		if !strings.Contains(body, "<a "+attr) {
			return ""
		}
		return html.UnescapeString(strings.TrimSuffix(v, `"`))
	}
	m := regexp.MustCompile(`<a href="([^"]*)"[^>]*` + regexp.QuoteMeta(attr)).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// follow GETs the link of the page marked attr and returns the page it opens.
func follow(t *testing.T, b *testkit.Browser, page, attr string) (string, string) {
	t.Helper()
	status, body := b.Get(page)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", page, status, body)
	}
	href := hrefOf(body, attr)
	if href == "" {
		t.Fatalf("%s: no link %s in %s", page, attr, body)
	}
	status, next := b.Get(href)
	if status != http.StatusOK {
		t.Fatalf("%s → %s: %d %s", page, href, status, next)
	}
	return href, next
}

func mustContain(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: no %q in %s", what, w, body)
		}
	}
}

func linksTransaction(t *testing.T, e *linksEnv, b *testkit.Browser) {
	page := "/dashboard/transactions/" + e.underTx
	// Transaction → order, and back.
	_, order := follow(t, b, page, `id="tx-order"`)
	mustContain(t, "the transaction's order", order, `id="invoice">INV-L1<`, `href="/dashboard/transactions/`+e.underTx+`"`)
	// Transaction → exception → order and transaction.
	_, exc := follow(t, b, page, `id="tx-exception"`)
	mustContain(t, "the transaction's exception", exc, `id="txid">`+e.underTx+`<`, `href="/dashboard/transactions/`+e.underTx+`"`)
	_, order = follow(t, b, "/dashboard/exceptions/"+e.underTx, `href="/dashboard/order?invoice=INV-L1"`)
	mustContain(t, "the exception's order", order, `id="invoice">INV-L1<`)
	// The states.
	_, body := b.Get(page)
	mustContain(t, "the transaction's states", body, `id="tx-state">Matched<`, `Underpaid · Open</a>`)
	// A transfer naming no order: its exception, no order.
	_, body = b.Get("/dashboard/transactions/" + e.noCodeTx)
	mustContain(t, "unmatched transaction", body, `id="tx-state">Unmatched<`, `href="/dashboard/exceptions/`+e.noCodeTx+`" id="tx-exception"`)
	if strings.Contains(body, `id="tx-order"`) {
		t.Errorf("an unmatched transfer names an order: %s", body)
	}
	// Transaction → refund → order and transaction.
	_, refund := follow(t, b, "/dashboard/transactions/"+e.dashEnv.paidTx, `href="/dashboard/refunds/`+e.refund+`"`)
	mustContain(t, "the refund", refund, `id="order-link">INV-PAID<`)
	_, body = follow(t, b, "/dashboard/refunds/"+e.refund, `id="order-link"`)
	mustContain(t, "the refund's order", body, `id="invoice">INV-PAID<`, `/dashboard/refunds/`+e.refund)
}

func linksOrder(t *testing.T, e *linksEnv, b *testkit.Browser) {
	page := "/dashboard/order?invoice=INV-L1"
	_, body := b.Get(page)
	mustContain(t, "the order's transfers and exceptions", body, `id="order-transfers"`, `href="/dashboard/transactions/`+e.underTx+`"`,
		`id="order-exceptions"`, `href="/dashboard/exceptions/`+e.underTx+`"`, `id="customer-link"`)
	_, tx := follow(t, b, page, `href="/dashboard/transactions/`+e.underTx+`"`)
	mustContain(t, "the order's transfer", tx, `id="tx-order">INV-L1<`)
	_, exc := follow(t, b, page, `href="/dashboard/exceptions/`+e.underTx+`"`)
	mustContain(t, "the order's exception", exc, `href="/dashboard/order?invoice=INV-L1"`)
	// Order → notification → order.
	_, d := follow(t, b, "/dashboard/order?invoice=INV-L2", `class="order-notification"`)
	mustContain(t, "the order's notification", d, `id="delivery-order">INV-L2<`, `id="delivery-target">`+e.rc.URL+`/ipn<`)
	_, l2 := b.Get("/dashboard/order?invoice=INV-L2")
	_, body = follow(t, b, hrefOf(l2, `class="order-notification"`), `id="delivery-order"`)
	mustContain(t, "the notification's order", body, `id="invoice">INV-L2<`)
	// Order → refund → order (the v2 refunds of INV-PAID).
	_, refund := follow(t, b, "/dashboard/order?invoice=INV-PAID", `href="/dashboard/refunds/`+e.refund+`"`)
	mustContain(t, "the order's refund", refund, `id="order-link">INV-PAID<`)
}

func linksNotifications(t *testing.T, e *linksEnv, b *testkit.Browser) {
	_, body := b.Get("/dashboard/notifications")
	mustContain(t, "the notifications list", body, `class="delivery-order">INV-L2<`, e.rc.URL+`/ipn</td>`)
	_, order := follow(t, b, "/dashboard/notifications?status=dead", `class="delivery-order"`)
	mustContain(t, "a dead notification's order", order, `id="invoice">INV-L2<`)
	_, body = b.Get("/dashboard/notifications?status=dead")
	mustContain(t, "the dead list", body, `id="total">1 notification<`, `href="/dashboard/notifications/`+e.l2Delivery+`"`)
	// Vietnamese.
	resp, body := b.Do("GET", "/dashboard/notifications/"+e.l2Delivery, nil, map[string]string{"Accept-Language": "vi"})
	if resp.StatusCode != 200 || !strings.Contains(body, "Gửi tới") || !strings.Contains(body, `id="delivery-order">INV-L2<`) {
		t.Errorf("vi: %d %s", resp.StatusCode, body)
	}
}

// tableRow is the row of the list's table that links to the transaction.
func tableRow(t *testing.T, body, id string) string {
	t.Helper()
	for _, row := range strings.Split(body, "<tr>") {
		if strings.Contains(row, `href="/dashboard/transactions/`+id+`"`) {
			return row
		}
	}
	t.Fatalf("no row of %s in %s", id, body)
	return ""
}

func linksList(t *testing.T, e *linksEnv, b *testkit.Browser) {
	_, body := b.Get("/dashboard/transactions")
	for _, c := range []struct {
		id   string
		want []string
		not  string
	}{
		{e.underTx, []string{`class="tx-order">INV-L1<`, `>Matched<`, `Underpaid · Open`, `href="/dashboard/exceptions/` + e.underTx + `"`}, ""},
		{e.fullTx, []string{`class="tx-order">INV-L2<`, `>Matched<`}, "tx-exception"},
		{e.noCodeTx, []string{`>Unmatched<`, `href="/dashboard/exceptions/` + e.noCodeTx + `"`}, "tx-order"},
	} {
		row := tableRow(t, body, c.id)
		mustContain(t, "row "+c.id, row, c.want...)
		if c.not != "" && strings.Contains(row, c.not) {
			t.Errorf("row %s has %s: %s", c.id, c.not, row)
		}
	}
	// The row's order link opens the order.
	href := hrefOf(tableRow(t, body, e.underTx), `class="tx-order"`)
	if _, order := b.Get(href); !strings.Contains(order, `id="invoice">INV-L1<`) {
		t.Errorf("%s: %s", href, order)
	}
	// The search's pages show them too.
	_, body = b.Get("/dashboard/transactions?matched=exception")
	mustContain(t, "search row", tableRow(t, body, e.underTx), `class="tx-order">INV-L1<`)
	// Vietnamese.
	resp, body := b.Do("GET", "/dashboard/transactions", nil, map[string]string{"Accept-Language": "vi"})
	if resp.StatusCode != 200 || !strings.Contains(tableRow(t, body, e.underTx), "Đã khớp") || !strings.Contains(tableRow(t, body, e.underTx), "Trả thiếu · Đang mở") {
		t.Errorf("vi: %s", body)
	}
}

func linksCSV(t *testing.T, e *linksEnv, b *testkit.Browser) {
	for _, query := range []string{"", "?matched=exception"} {
		_, page := b.Get("/dashboard/transactions" + query)
		link := hrefOf(page, `id="export"`)
		resp, raw := b.Do("GET", link, nil, nil)
		recs, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
		if resp.StatusCode != 200 || err != nil || len(recs) < 2 {
			t.Fatalf("%s: %d %v %s", link, resp.StatusCode, err, raw)
		}
		head := strings.Join(recs[0], ",")
		if !strings.HasSuffix(head, ",sub_account,order_invoice_number,match_state,match_outcome,exception") {
			t.Fatalf("columns: %s", head)
		}
		got := map[string]string{}
		for _, r := range recs[1:] {
			got[r[0]] = strings.Join(r[len(r)-4:], ",")
		}
		want := map[string]string{e.underTx: "INV-L1,matched,underpaid,open", e.noCodeTx: ",unmatched,unmatched,open"}
		if query == "" {
			want[e.fullTx] = "INV-L2,matched,matched,"
			want[e.dashEnv.paidTx] = "INV-PAID,matched,matched,"
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("csv%s row %s: %q, want %q", query, id, got[id], w)
			}
		}
		if _, ok := got[e.fullTx]; query != "" && ok {
			t.Errorf("csv%s holds %s", query, e.fullTx)
		}
	}
}

var countText = regexp.MustCompile(`^\d[\d.,]*`)

// listTotal is the count line of a list page (id="total").
func listTotal(t *testing.T, b *testkit.Browser, href string) string {
	t.Helper()
	status, body := b.Get(href)
	m := regexp.MustCompile(`id="total">([^<]*)<`).FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("%s: %d, no total: %s", href, status, body)
	}
	return countText.FindString(m[1])
}

func linksTiles(t *testing.T, e *linksEnv, b *testkit.Browser) {
	_, home := b.Get("/dashboard/")
	// Today's and this month's transfers: each count opens the list it counts.
	for _, tile := range []string{"today", "month"} {
		i := strings.Index(home, `id="`+tile+`"`)
		card := home[i : i+strings.Index(home[i:], "</article>")]
		for _, k := range []string{"in", "out", "matched", "unmatched"} {
			m := regexp.MustCompile(`<a href="([^"]+)" class="n-` + k + `">([^<]*)<`).FindStringSubmatch(card)
			if m == nil {
				t.Fatalf("%s: no %s count in %s", tile, k, card)
			}
			if got, want := listTotal(t, b, html.UnescapeString(m[1])), countText.FindString(m[2]); got != want {
				t.Errorf("%s %s: the tile says %s, its list %s (%s)", tile, k, want, got, m[1])
			}
		}
	}
	// What needs attention: underpaid orders, failing and dead notifications.
	for _, c := range []struct{ link, count, want string }{
		{`id="attention-underpaid"`, `id="underpaid">`, "1"},
		{`id="attention-failing"`, `id="failing">`, "1"},
		{`id="attention-dead"`, `id="dead">`, "1"},
	} {
		i := strings.Index(home, c.count)
		if i < 0 {
			t.Fatalf("no %s in %s", c.count, home)
		}
		tile := countText.FindString(home[i+len(c.count):])
		if got := listTotal(t, b, hrefOf(home, c.link)); tile != c.want || got != tile {
			t.Errorf("%s: tile %s, list %s, want %s", c.link, tile, got, c.want)
		}
	}
	// The open exceptions: the rows of every page of the list.
	i := strings.Index(home, `id="open-exceptions">`)
	tile := countText.FindString(home[i+len(`id="open-exceptions">`):])
	seen := map[string]bool{}
	page := hrefOf(home, `id="attention-exceptions"`)
	for n := 0; page != "" && n < 20; n++ {
		_, body := b.Get(page)
		for _, m := range regexp.MustCompile(`href="/dashboard/exceptions/(\d+)"`).FindAllStringSubmatch(body, -1) {
			seen[m[1]] = true
		}
		page = html.UnescapeString(regexp.MustCompile(`href="([^"]*)" rel="next"`).FindStringSubmatch(body + `href="" rel="next"`)[1])
	}
	if tile != formatInt(int64(len(seen))) || !seen[e.underTx] || !seen[e.noCodeTx] {
		t.Errorf("open exceptions: tile %s, list %v", tile, seen)
	}
}

func linksOrderSearch(t *testing.T, e *linksEnv, b *testkit.Browser) {
	for _, c := range []struct {
		q, want string
		not     []string
	}{
		{e.code1, "INV-L1", []string{"INV-L2", "INV-PAID"}},
		{strings.ToLower(e.code2), "INV-L2", []string{"INV-L1"}},
		{"inv-l1", "INV-L1", []string{"INV-L2"}},
		{"KH-LINKS", "INV-L2", nil},
		{e.otherCode, "", []string{"INV-O1"}},
	} {
		status, body := b.Get("/dashboard/orders?q=" + url.QueryEscape(c.q))
		if status != 200 {
			t.Fatalf("q=%s: %d", c.q, status)
		}
		if c.want != "" && !strings.Contains(body, `href="/dashboard/order?invoice=`+c.want+`"`) {
			t.Errorf("q=%s: no %s in %s", c.q, c.want, body)
		}
		if c.want == "" && !strings.Contains(body, `id="total">0 orders<`) {
			t.Errorf("q=%s: found some: %s", c.q, body)
		}
		for _, n := range c.not {
			if strings.Contains(body, `href="/dashboard/order?invoice=`+n+`"`) {
				t.Errorf("q=%s: %s listed", c.q, n)
			}
		}
	}
	// A memo pasted whole: the orders of the code the company's formats
	// find in it, said so; and the transfers that carry the code.
	_, body := b.Get("/dashboard/orders?q=" + url.QueryEscape("NGUYEN VAN A chuyen tien "+e.code1+" cam on"))
	mustContain(t, "pasted memo", body, `id="code-found"`, `href="/dashboard/order?invoice=INV-L1"`, `id="total">1 order<`)
	_, txs := follow(t, b, "/dashboard/orders?q="+strings.ToLower(e.code1), `id="code-transfers"`)
	if ids := rowsOf(txs); len(ids) != 1 || ids[0] != e.underTx || !strings.Contains(txs, `class="tx-order">INV-L1<`) {
		t.Errorf("the code's transfers: %v %s", ids, txs)
	}
	if _, body := b.Get("/dashboard/orders?q=" + url.QueryEscape("Đơn INV")); strings.Contains(body, `id="code-transfers"`) || strings.Contains(body, `id="code-found"`) {
		t.Errorf("words that are no code: %s", body)
	}
	// The code shows in the list; a bad payment status is refused.
	_, body = b.Get("/dashboard/orders?q=" + e.code1)
	mustContain(t, "code column", body, `<td class="code">`+e.code1+`</td>`)
	if status, body := b.Get("/dashboard/orders?payment=maybe"); status != http.StatusBadRequest || !strings.Contains(body, "payment must be one of") {
		t.Errorf("payment=maybe: %d %s", status, body)
	}
}

func linksCustomer(t *testing.T, e *linksEnv, b *testkit.Browser) {
	// Order → customer → orders, transfers, exceptions → back.
	href, body := follow(t, b, "/dashboard/order?invoice=INV-L1", `id="customer-link"`)
	if href != "/dashboard/customers/KH-LINKS" {
		t.Errorf("customer link %s", href)
	}
	mustContain(t, "the customer's page", body, `id="customer-id">KH-LINKS<`, `href="/dashboard/order?invoice=INV-L1"`, `href="/dashboard/order?invoice=INV-L2"`,
		`id="customer-transfers"`, `href="/dashboard/transactions/`+e.underTx+`"`, `href="/dashboard/transactions/`+e.fullTx+`"`,
		`id="customer-exceptions"`, `href="/dashboard/exceptions/`+e.underTx+`"`)
	for _, not := range []string{"INV-PAID", "INV-O1", "INV-T1", `/dashboard/transactions/` + e.dashEnv.paidTx + `"`} {
		if strings.Contains(body, not) {
			t.Errorf("the customer's page shows %s", not)
		}
	}
	_, list := follow(t, b, href, `id="customer-orders-all"`)
	mustContain(t, "the customer's orders", list, `id="total">2 orders<`, `href="/dashboard/customers/KH-LINKS"`)
	// A search naming the customer (in another case) links to their page.
	_, body = follow(t, b, "/dashboard/orders?q=kh-links", `id="customer-page"`)
	mustContain(t, "from the search", body, `id="customer-id">KH-LINKS<`)
	// From the orders list, by a customer link.
	_, body = follow(t, b, "/dashboard/orders?q=KH-LINKS", `class="customer-link"`)
	mustContain(t, "from the list", body, `id="customer-id">KH-LINKS<`)
	// KH001 has orders in the other company too: only live's show.
	_, body = b.Get("/dashboard/customers/KH001")
	mustContain(t, "KH001", body, `href="/dashboard/order?invoice=INV-PAID"`)
	if strings.Contains(body, "INV-OTHER") {
		t.Errorf("KH001 shows the other company's order")
	}
	// A customer id with a slash and spaces.
	e.customerOrder(t, e.live, "INV-L3", "KH/01 A", 1000)
	_, body = follow(t, b, "/dashboard/order?invoice=INV-L3", `id="customer-link"`)
	mustContain(t, "escaped id", body, `id="customer-id">KH/01 A<`)
	// Vietnamese.
	resp, body := b.Do("GET", "/dashboard/customers/KH-LINKS", nil, map[string]string{"Accept-Language": "vi"})
	if resp.StatusCode != 200 || !strings.Contains(body, "Tất cả đơn hàng của khách") || !strings.Contains(body, "Giao dịch chuyển khoản") {
		t.Errorf("vi: %d %s", resp.StatusCode, body)
	}
}

func linksTenants(t *testing.T, e *linksEnv, b *testkit.Browser) {
	for _, path := range []string{
		"/dashboard/customers/KH-OTHER", "/dashboard/customers/KH-TEST", "/dashboard/customers/NOBODY",
		"/dashboard/transactions/" + e.otherTx, "/dashboard/transactions/" + e.testTx,
		"/dashboard/exceptions/" + e.otherTx,
	} {
		if status, body := b.Get(path); status != http.StatusNotFound {
			t.Errorf("live %s: %d %s", path, status, body)
		}
	}
	// The other company's delivery.
	ctx := context.Background()
	o, err := e.db.Order(ctx, e.other.id, "INV-O1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.db.OrderDeliveries(ctx, e.other.id, o, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("other delivery: %v %v", ds, err)
	}
	if status, _ := b.Get("/dashboard/notifications/" + formatInt(ds[0].ID)); status != http.StatusNotFound {
		t.Errorf("the other company's notification: %d", status)
	}
	// In test mode: the test customer, none of live's.
	b2 := e.signedIn(t, "boss@saomai.vn")
	if status, _, _ := b2.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/"}}); status != http.StatusSeeOther {
		t.Fatalf("switch: %d", status)
	}
	status, body := b2.Get("/dashboard/customers/KH-TEST")
	mustContain(t, "test customer", body, `href="/dashboard/order?invoice=INV-T1"`, `href="/dashboard/transactions/`+e.testTx+`"`)
	if status != 200 {
		t.Errorf("test customer: %d", status)
	}
	for _, path := range []string{"/dashboard/customers/KH-LINKS", "/dashboard/transactions/" + e.underTx, "/dashboard/exceptions/" + e.underTx} {
		if status, _ := b2.Get(path); status != http.StatusNotFound {
			t.Errorf("test mode %s: %d", path, status)
		}
	}
	if _, body := b2.Get("/dashboard/orders?q=" + e.code1); !strings.Contains(body, `id="total">0 orders<`) {
		t.Errorf("test mode finds live's code: %s", body)
	}
}

// linksResolved: a transfer naming no order, matched by hand to INV-OPEN:
// its exception's page names the order it paid, and the order lists the
// transfer and its (resolved) exception.
func linksResolved(t *testing.T, e *linksEnv, b *testkit.Browser) {
	id := e.transfer(t, e.live, 90000, "tien hang thang 11")
	x := "/dashboard/exceptions/" + id
	if status, _, body := b.Confirm(x + "/resolve?" + url.Values{"resolve": {"match"}, "invoice": {"INV-OPEN"}, "note": {"khách gọi điện xác nhận"}}.Encode()); status != http.StatusSeeOther {
		t.Fatalf("resolve: %d %s", status, body)
	}
	_, order := follow(t, b, x, `class="x-order"`)
	mustContain(t, "the order the match paid", order, `id="invoice">INV-OPEN<`, `href="/dashboard/transactions/`+id+`"`, `href="/dashboard/exceptions/`+id+`"`)
	_, body := b.Get("/dashboard/transactions/" + id)
	mustContain(t, "the transfer matched by hand", body, `id="tx-order">INV-OPEN<`, `id="tx-state">Matched<`, `· Resolved</a>`)
}

package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// history stores 30 days of transfers as the bank feed pushes them (POST
// /api/v1/transactions), a third of them paying orders made by checkout, so
// the home chart has a month.
func (e *dashEnv) history(t *testing.T) {
	t.Helper()
	now := time.Now().In(e.loc)
	at := func(day time.Time, hour, minute int) time.Time {
		return time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, e.loc)
	}
	var items []recon.TransactionInput
	for d := 1; d < 30; d++ {
		day := now.AddDate(0, 0, -d)
		for k := 0; k < 1+(d*7)%4; k++ {
			amount := int64(100000 + ((d*37+k*91)%40)*25000)
			memo := fmt.Sprintf("KH%03d chuyen khoan", d*10+k)
			if (d+k)%3 == 0 {
				invoice := fmt.Sprintf("INV-H%02d%d", d, k)
				memo = "THANH TOAN " + e.checkout(t, e.live, invoice, amount, "Thanh toán đơn hàng "+invoice)
			}
			items = append(items, recon.TransactionInput{BankAccountID: e.live.account, TransactionDate: at(day, 8+k, 15), AmountIn: amount,
				Content: memo, ReferenceNumber: fmt.Sprintf("HIST%02d%d", d, k)})
			if k == 0 && d%2 == 0 {
				items = append(items, recon.TransactionInput{BankAccountID: e.live.account, TransactionDate: at(day, 17, 30), AmountOut: int64(60000 + d*15000),
					Content: "Chi phi van chuyen", ReferenceNumber: fmt.Sprintf("OUT%02d", d)})
			}
		}
	}
	if _, err := recon.Ingest(context.Background(), e.db, e.live.id, time.Now(), items); err != nil {
		t.Fatalf("history: %v", err)
	}
}

// TestDashboardBrowser walks the dashboard in headless Chromium: sign in per
// role, each screen with its data, a void from the order page, the live/test
// switch, and a phone-sized window; screenshots under make screenshots.
func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		e.history(t)
		shot := func(ctx context.Context, name string) {
			if engine == "sqlite" {
				browsertest.Screenshot(t, ctx, name)
			}
		}
		text := func(ctx context.Context, sel string) string {
			t.Helper()
			s, err := chromedp.Run(ctx, chromedp.Text(sel))
			if err != nil {
				t.Fatalf("text of %s: %v", sel, err)
			}
			return s
		}
		do := func(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			if err := chromedp.Do(ctx, actions...); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		click := func(ctx context.Context, sel string) {
			t.Helper()
			if _, err := chromedp.RunResponse(ctx, chromedp.Click(sel)); err != nil {
				t.Fatalf("click %s: %v", sel, err)
			}
		}
		signin := func(ctx context.Context, email, password string) {
			t.Helper()
			do(ctx, "sign-in page", chromedp.Navigate(e.base+"/dashboard/"),
				chromedp.WaitVisible("#email"),
				chromedp.SendKeys("#email", email),
				chromedp.SendKeys("#password", password))
			click(ctx, "#signin")
		}

		// Admin: every screen.
		ctx := browsertest.New(t, browsertest.Options{})
		signin(ctx, "boss@saomai.vn", "not the password")
		if got := text(ctx, "#signin-error"); !strings.Contains(got, "wrong") {
			t.Fatalf("wrong password: %q", got)
		}
		shot(ctx, "dashboard-signin.png")
		do(ctx, "clear", chromedp.Navigate(e.base+"/dashboard/signin"))
		signin(ctx, "boss@saomai.vn", dashPassword)
		if got := text(ctx, "#who"); got != "boss@saomai.vn" {
			t.Fatalf("signed in as %q", got)
		}
		if got := text(ctx, "#today"); !strings.Contains(got, "162,345 VND") {
			t.Errorf("today: %q", got)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.chart rect.bar-in").length`))
		if err != nil || n != 30 {
			t.Errorf("chart bars: %d %v", n, err)
		}
		shot(ctx, "dashboard-home.png")

		click(ctx, `nav a[href="/dashboard/transactions"]`)
		if got := text(ctx, "#transactions tbody"); !strings.Contains(got, `<script>alert("memo")</script>`) {
			t.Errorf("the HTML memo is not shown as text: %q", got)
		}
		shot(ctx, "dashboard-transactions.png")
		do(ctx, "filter", chromedp.SendKeys("#f-in", "150000"))
		click(ctx, "#apply")
		// Every row of the filtered list has that amount in, and there are some.
		amounts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#transactions tbody td.in")].map(td => td.textContent)`))
		if err != nil || len(amounts) == 0 {
			t.Fatalf("filtered rows: %v %v", amounts, err)
		}
		for _, a := range amounts {
			if a != "150,000 VND" {
				t.Errorf("filtered by amount_in=150000, a row has %q", a)
			}
		}
		click(ctx, "#transactions tbody tr:first-child a")
		if got := text(ctx, "#decisions"); !strings.Contains(got, "VND paid") {
			t.Errorf("decisions: %q", got)
		}
		shot(ctx, "dashboard-transaction.png")

		click(ctx, `nav a[href="/dashboard/orders"]`)
		shot(ctx, "dashboard-orders.png")
		do(ctx, "open order", chromedp.Navigate(e.base+"/dashboard/order?invoice=INV-PAID"))
		if got := text(ctx, "#status"); got != "Captured" {
			t.Fatalf("status %q", got)
		}
		shot(ctx, "dashboard-order.png")
		click(ctx, "#void")
		if got := text(ctx, "#c-notification"); !strings.Contains(got, "TRANSACTION_VOID") {
			t.Fatalf("void's confirmation: %q", got)
		}
		shot(ctx, "dashboard-confirm-void.png")
		click(ctx, "#confirm-button")
		if got := text(ctx, "#status"); got != "Cancelled" {
			t.Fatalf("after void: %q", got)
		}
		if got := text(ctx, "#timeline"); !strings.Contains(got, "Voided") {
			t.Errorf("timeline: %q", got)
		}
		if got := text(ctx, "#notifications"); !strings.Contains(got, "TRANSACTION_VOID") {
			t.Errorf("notifications: %q", got)
		}

		// The live/test switch.
		do(ctx, "home", chromedp.Navigate(e.base+"/dashboard/transactions"))
		click(ctx, "#switch-mode")
		if got := text(ctx, "#test-banner"); !strings.Contains(got, "TEST MODE") {
			t.Fatalf("banner %q", got)
		}
		if got := text(ctx, "#transactions tbody"); !strings.Contains(got, "TEST-ONLY MEMO") || strings.Contains(got, "memo") {
			t.Errorf("test list: %q", got)
		}
		shot(ctx, "dashboard-test-mode.png")
		click(ctx, "#switch-mode")
		if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#test-banner").length`)); n != 0 {
			t.Error("the banner stays in live mode")
		}
		click(ctx, "#signout")
		if _, err := chromedp.Run(ctx, chromedp.Text("#signin")); err != nil {
			t.Fatalf("after sign-out: %v", err)
		}

		// Member, on a phone, in Vietnamese: no money anywhere.
		phone := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
		signin(phone, "nhanvien@saomai.vn", dashPassword)
		if got := text(phone, "#no-money"); !strings.Contains(got, "Xem giao dịch") {
			t.Errorf("member home: %q", got)
		}
		if n, _ := chromedp.Run(phone, chromedp.Evaluate[int](`document.querySelectorAll('a[href="/dashboard/transactions"]').length`)); n != 0 {
			t.Error("the member is shown the transactions link")
		}
		shot(phone, "dashboard-member-phone.png")

		// Accountant on a phone: the home's money fits the screen.
		acct := browsertest.New(t, browsertest.Options{Mobile: true})
		signin(acct, "ketoan@saomai.vn", dashPassword)
		w, err := chromedp.Run(acct, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil || w > 390 {
			t.Errorf("the home is %d px wide on a 390 px phone (%v)", w, err)
		}
		shot(acct, "dashboard-home-phone.png")
	})
}

package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// pendingRefund stores a refund of the paid order INV-PAID by boss, to
// send by hand (no payout connector), and returns its id.
func (e *dashEnv) pendingRefund(t *testing.T, amount int64) string {
	t.Helper()
	ctx := context.Background()
	o, err := e.db.Order(ctx, e.live.id, "INV-PAID")
	if err != nil {
		t.Fatal(err)
	}
	boss, err := parseID(e.userIDs["boss@saomai.vn"])
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.db.CreateRefund(ctx, e.live.id, &recon.RefundRequest{OrderID: o.ID, Amount: amount, Reason: "Khách trả lại hàng lỗi",
		Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0011223344", AccountName: "NGUYEN VAN A"},
		By:       recon.RefundActor{UserID: boss, Email: "boss@saomai.vn"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// TestDashboardRefundBrowser opens a pending refund's page in headless
// Chromium, in Vietnamese: the state, the transfer the merchant makes
// (receiver, amount, the memo with the reference) and the receiver's
// VietQR drawn; both engines, screenshots under make screenshots.
func TestDashboardRefundBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		id := e.pendingRefund(t, 50000)
		r, err := e.db.Refund(context.Background(), e.live.id, id)
		if err != nil {
			t.Fatal(err)
		}
		ctx := browsertest.New(t, browsertest.Options{})
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"),
			chromedp.SendKeys("#password", dashPassword))
		click("#signin")
		click(`nav a[href="/dashboard/refunds"]`)
		if got := text("#refunds tbody"); !strings.Contains(got, r.Reference) || !strings.Contains(got, "50.000 ₫") || !strings.Contains(got, "Chờ chuyển tiền") {
			t.Fatalf("the list: %q", got)
		}
		click(`#refunds a[href="/dashboard/refunds/` + id + `"]`)
		do("the QR drawn", chromedp.WaitVisible("#qr"), chromedp.Poll[chromedp.Void](`document.querySelector("#qr").complete && document.querySelector("#qr").naturalWidth > 0`, chromedp.WithPollingTimeout(10*time.Second)))
		if got := text("#status"); got != "Chờ chuyển tiền" {
			t.Errorf("status %q", got)
		}
		if got := text("#instructions"); !strings.Contains(got, "Chuyển khoản hoàn tiền này từ ngân hàng của bạn") || !strings.Contains(got, "NGUYEN VAN A · 0011223344") ||
			!strings.Contains(got, "50.000 ₫") || !strings.Contains(got, r.Reference) {
			t.Errorf("instructions: %q", got)
		}
		body := text("main")
		for _, en := range []string{"Refund", "Receiver", "Amount", "Reason", "Requested by", "To send", "Send this refund"} {
			if strings.Contains(body, en) {
				t.Errorf("the Vietnamese page shows %q: %s", en, body)
			}
		}
		shot("dashboard-refund.png")
	})
}

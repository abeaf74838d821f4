package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/orders"
	"recon/sqlstore/dbtest"
)

// TestV2OrdersInTheGateway: one order store (docs/api-v2.md, Orders). An
// order made through API v2's service is listed by GET /v1/order with the
// v1 status its v2 status maps to, as it is paid in part and expires; its
// hosted checkout page shows its virtual account (a bank number, or a memo
// code as the memo) and the account's VietQR, in Vietnamese and English.
func TestV2OrdersInTheGateway(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ctx := context.Background()
		svc := &orders.Service{Store: b.db, Clock: b.clock}
		memo, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-MEMO", Amount: 300000, BankAccountID: b.a.account,
			ExpiresIn: ptr(3600), VA: recon.VAInput{AmountMode: recon.VAPartial}})
		if err != nil {
			t.Fatal(err)
		}
		svc.Connector = func(recon.TenantID, *recon.BankAccount) recon.VAConnector { return recon.SandboxVAs{} }
		bank, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-BANK", Amount: 200000, BankAccountID: b.a.account})
		if err != nil {
			t.Fatal(err)
		}
		status := func(invoice string) string {
			t.Helper()
			r := b.api(t, b.a, "GET", "/v1/order?q="+invoice, "")
			list, _ := r.json(t)["data"].([]any)
			if r.status != 200 || len(list) != 1 {
				t.Fatalf("GET /v1/order?q=%s: %d %s", invoice, r.status, r.body)
			}
			return list[0].(map[string]any)["order_status"].(string)
		}
		if got := status("V2-MEMO"); got != recon.OrderAwaitingPayment {
			t.Errorf("pending: v1 status %s", got)
		}
		code := memo.VAs[0].Number
		// The memo account's order: the code as the memo, the company's account.
		page := b.newOrderPage(t, "V2-MEMO")
		body := string(b.request(t, "GET", page, "", "Accept", "text/html").body)
		for _, want := range []string{`<span class="value code" id="code">` + code + `</span>`, "0071000123456", "Nội dung chuyển khoản", "hoặc một phần",
			`id="countdown" data-remaining="3600"`, "Hết hạn sau <strong id=\"left\">01:00:00</strong>", "Hạn thanh toán 10:00 01/03/2026"} {
			if !strings.Contains(body, want) {
				t.Errorf("memo VA page lacks %q", want)
			}
		}
		b.pay(t, b.a, code, 100000, "FT-1")
		if got := status("V2-MEMO"); got != recon.OrderAwaitingPayment {
			t.Errorf("partially paid: v1 status %s", got)
		}
		if n, err := b.db.ExpireOrders(ctx, b.clock.Now().Add(2*time.Hour), nil); err != nil || n != 0 {
			t.Fatalf("expire: %d %v; want none (V2-MEMO is partially paid, V2-BANK pending for a day)", n, err)
		}
		if got := status("V2-MEMO"); got != recon.OrderAwaitingPayment {
			t.Errorf("partially paid past its expiry keeps its status: v1 %s", got)
		}
		_, err = svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-SHORT", Amount: 1000, BankAccountID: b.a.account, ExpiresIn: ptr(60)})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := b.db.ExpireOrders(ctx, b.clock.Now().Add(2*time.Hour), nil); err != nil || n != 1 {
			t.Fatalf("expire: %d %v", n, err)
		}
		if got := status("V2-SHORT"); got != recon.OrderCancelled {
			t.Errorf("expired: v1 status %s, want CANCELLED", got)
		}

		// The hosted page of the bank account's order: its number, no memo.
		page = b.newOrderPage(t, "V2-BANK")
		r := b.request(t, "GET", page, "", "Accept", "text/html")
		body = string(r.body)
		qrPath := strings.Replace(page, "?t=", "/qr.png?t=", 1)
		for _, want := range []string{
			bank.VAs[0].Number, "Số tài khoản ảo", "Không cần", `src="` + qrPath + `"`, "200.000 ₫", `data-copy="` + bank.VAs[0].Number + `"`,
			"Hết hạn sau <strong id=\"left\">1 ngày 00:00:00</strong>",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("bank VA page lacks %q", want)
			}
		}
		if strings.Contains(body, bank.Order.PaymentCode) {
			t.Errorf("the page asks for the order's internal code %s", bank.Order.PaymentCode)
		}
		if q := b.request(t, "GET", qrPath, ""); q.status != 200 || q.header.Get("Content-Type") != "image/png" {
			t.Errorf("qr: %d %s", q.status, q.header)
		}
	})
}

func ptr(n int64) *int64 { return &n }

package gateway_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/sqlstore/dbtest"
)

// orderSet creates merchant A's orders of the list tests, at distinct times
// in the business time zone (ABC-003 is on 3 March there, 2 March in UTC),
// and one of merchant B with an invoice number A also uses.
func orderSet(t *testing.T, b *bundle) {
	t.Helper()
	at := func(day, hour, minute int) { b.clock.Set(time.Date(2026, 3, day, hour, minute, 0, 0, hcm)) }
	at(1, 9, 0)
	b.newOrder(t, b.a, "INV-001", "150000")
	at(2, 23, 30)
	b.checkoutOK(t, b.a, with(checkoutForm(b.a, "INV-002", "250000"), "customer_id", "CUST-9"))
	at(3, 0, 30)
	b.newOrder(t, b.a, "ABC-003", "350000")
	at(5, 12, 0)
	b.newOrder(t, b.a, "INV-004", "450000")
	at(5, 12, 10)
	b.pay(t, b.a, b.order(t, b.a, "INV-004").PaymentCode, 450000, "FT-4")
	at(6, 8, 0)
	b.newOrder(t, b.a, "INV-005", "550000", pair{"order_id", "SHOP-Order-55"})
	at(6, 8, 5)
	if r := b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-005"}`); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	at(6, 9, 0)
	b.newOrder(t, b.b, "INV-001", "990000")
}

// with returns form with the field's value replaced.
func with(form []pair, name, value string) []pair {
	out := append([]pair(nil), form...)
	for i := range out {
		if out[i].k == name {
			out[i].v = value
		}
	}
	return out
}

func (b *bundle) checkoutOK(t *testing.T, m merchant, form []pair) {
	t.Helper()
	if r := b.checkout(t, signed(m.secret, form)); r.status != 303 {
		t.Fatalf("checkout: %d %s", r.status, r.body)
	}
}

// orderJSON is the §2.7 body of a stored order.
func orderJSON(o *recon.Order) map[string]any {
	return map[string]any{
		"id": strconv.FormatInt(o.ID, 10), "customer_id": o.CustomerID, "order_id": o.OrderID,
		"order_invoice_number": o.InvoiceNumber, "order_status": o.Status, "order_amount": strconv.FormatInt(o.Amount, 10) + ".00",
		"order_currency": "VND", "order_description": o.Description, "authentication_status": nil,
		"created_at": o.CreatedAt.In(hcm).Format("2006-01-02 15:04:05"), "updated_at": o.UpdatedAt.In(hcm).Format("2006-01-02 15:04:05"),
		"livemode": true,
	}
}

func TestListOrders(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		orderSet(t, b)
		o := map[string]map[string]any{}
		for _, inv := range []string{"INV-001", "INV-002", "ABC-003", "INV-004", "INV-005"} {
			o[inv] = orderJSON(b.order(t, b.a, inv))
		}
		// The exact body of one order, spelled out once.
		want1 := map[string]any{
			"id": o["INV-001"]["id"], "customer_id": "CUST-7", "order_id": "", "order_invoice_number": "INV-001",
			"order_status": "AUTHENTICATION_NOT_NEEDED", "order_amount": "150000.00", "order_currency": "VND",
			"order_description": "Thanh toán đơn hàng INV-001", "authentication_status": nil,
			"created_at": "2026-03-01 09:00:00", "updated_at": "2026-03-01 09:00:00", "livemode": true,
		}
		if d := cmp.Diff(want1, o["INV-001"]); d != "" {
			t.Fatalf("INV-001 (-want +got):\n%s", d)
		}
		if o["INV-004"]["order_status"] != "CAPTURED" || o["INV-004"]["updated_at"] != "2026-03-05 12:10:00" ||
			o["INV-005"]["order_status"] != "CANCELLED" || o["INV-005"]["updated_at"] != "2026-03-06 08:05:00" {
			t.Fatalf("paid and cancelled: %v %v", o["INV-004"], o["INV-005"])
		}
		list := func(invs ...string) []any {
			out := []any{}
			for _, inv := range invs {
				out = append(out, o[inv])
			}
			return out
		}
		meta := func(per, total int, more bool, page, count int) map[string]any {
			return map[string]any{"per_page": float64(per), "total": float64(total), "has_more": more,
				"current_page": float64(page), "page_count": float64(count)}
		}
		all := list("INV-005", "INV-004", "ABC-003", "INV-002", "INV-001")
		for _, tt := range []struct {
			query string
			data  []any
			meta  map[string]any
		}{
			{"", all, meta(20, 5, false, 1, 1)},
			{"sort=created_at:desc", all, meta(20, 5, false, 1, 1)},
			{"sort=created_at:asc", list("INV-001", "INV-002", "ABC-003", "INV-004", "INV-005"), meta(20, 5, false, 1, 1)},
			{"sort%5Bcreated_at%5D=asc&per_page=2", list("INV-001", "INV-002"), meta(2, 5, true, 1, 3)},
			{"order_status=CAPTURED", list("INV-004"), meta(20, 1, false, 1, 1)},
			{"order_status=CANCELLED", list("INV-005"), meta(20, 1, false, 1, 1)},
			{"order_status=AUTHENTICATION_NOT_NEEDED", list("ABC-003", "INV-002", "INV-001"), meta(20, 3, false, 1, 1)},
			{"customer_id=CUST-9", list("INV-002"), meta(20, 1, false, 1, 1)},
			{"customer_id=", all, meta(20, 5, false, 1, 1)},
			{"created_at=2026-03-03", list("ABC-003"), meta(20, 1, false, 1, 1)},
			{"created_at=2026-03-02", list("INV-002"), meta(20, 1, false, 1, 1)},
			{"created_at=2026-03-04", list(), meta(20, 0, false, 1, 1)},
			{"from_created_at=2026-03-02&end_created_at=2026-03-05", list("INV-004", "ABC-003", "INV-002"), meta(20, 3, false, 1, 1)},
			{"from_created_at=2026-03-02&to_created_at=2026-03-03", list("ABC-003", "INV-002"), meta(20, 2, false, 1, 1)},
			{"from_created_at=2026-03-05", list("INV-005", "INV-004"), meta(20, 2, false, 1, 1)},
			{"end_created_at=2026-03-01", list("INV-001"), meta(20, 1, false, 1, 1)},
			{"q=abc", list("ABC-003"), meta(20, 1, false, 1, 1)},
			{"q=cust-9", list("INV-002"), meta(20, 1, false, 1, 1)},
			{"q=shop-order", list("INV-005"), meta(20, 1, false, 1, 1)},
			{"q=" + url.QueryEscape("đơn hàng INV-00"), list("INV-005", "INV-004", "INV-002", "INV-001"), meta(20, 4, false, 1, 1)},
			{"q=100%25", list(), meta(20, 0, false, 1, 1)},
			{"q=INV-00&order_status=AUTHENTICATION_NOT_NEEDED&customer_id=CUST-7", list("INV-001"), meta(20, 1, false, 1, 1)},
			{"per_page=2", list("INV-005", "INV-004"), meta(2, 5, true, 1, 3)},
			{"per_page=2&page=2", list("ABC-003", "INV-002"), meta(2, 5, true, 2, 3)},
			{"per_page=2&page=3", list("INV-001"), meta(2, 5, false, 3, 3)},
			{"per_page=2&page=9", list(), meta(2, 5, false, 9, 3)},
			{"per_page=100", all, meta(100, 5, false, 1, 1)},
		} {
			r := b.api(t, b.a, "GET", "/v1/order?"+tt.query, "")
			checkJSON(t, "GET /v1/order?"+tt.query, r, 200, map[string]any{"data": tt.data, "meta": tt.meta})
		}
		// Merchant B sees only its own order, never A's.
		r := b.api(t, b.b, "GET", "/v1/order", "")
		checkJSON(t, "merchant B", r, 200, map[string]any{"data": []any{orderJSON(b.order(t, b.b, "INV-001"))}, "meta": meta(20, 1, false, 1, 1)})

		for _, tt := range []struct{ query, message string }{
			{"per_page=0", "per_page must be an integer from 1 to 100"},
			{"per_page=101", "per_page must be an integer from 1 to 100"},
			{"per_page=abc", "per_page must be an integer from 1 to 100"},
			{"page=0", "page must be an integer from 1 to 1000000"},
			{"page=1.5", "page must be an integer from 1 to 1000000"},
			{"order_status=PAID", "order_status must be one of CAPTURED, CANCELLED, AUTHENTICATION_NOT_NEEDED"},
			{"order_status=", "order_status must be one of CAPTURED, CANCELLED, AUTHENTICATION_NOT_NEEDED"},
			{"created_at=2026-02-30", "created_at must be a date in the form YYYY-MM-DD"},
			{"from_created_at=01/03/2026", "from_created_at must be a date in the form YYYY-MM-DD"},
			{"end_created_at=2026-3-1", "end_created_at must be a date in the form YYYY-MM-DD"},
			{"from_created_at=2026-03-05&end_created_at=2026-03-01", "from_created_at must not be after end_created_at"},
			{"end_created_at=2026-03-05&to_created_at=2026-03-05", "give end_created_at or to_created_at, not both"},
			{"sort=amount:asc", "sort must be created_at:asc or created_at:desc"},
			{"sort%5Bcreated_at%5D=up", "sort[created_at] must be asc or desc"},
			{"q=" + strings.Repeat("x", 256), "q must be at most 255 characters"},
			{"page=1&page=2", "query parameter page is given 2 times"},
			{"status=CAPTURED", `unknown query parameter "status" (known: per_page, page, q, order_status, customer_id, created_at, from_created_at, end_created_at, to_created_at, sort, sort[created_at])`},
		} {
			checkJSON(t, tt.query, b.api(t, b.a, "GET", "/v1/order?"+tt.query, ""), 400, wantError("validation_error", tt.message))
		}
	})
}

func TestOrderDetail(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		orderSet(t, b)
		o := b.order(t, b.a, "INV-004")
		ds, err := b.db.MatchDecisions(context.Background(), b.a.company, o.ID, 0)
		if err != nil || len(ds) != 1 || ds[0].Outcome != recon.MatchCaptured {
			t.Fatalf("decisions %v %v", ds, err)
		}
		d := ds[0]
		page := b.newOrderPage(t, "INV-004")
		want := orderJSON(o)
		want["transactions"] = []any{map[string]any{
			"id": strconv.FormatInt(d.TransactionID, 10), "payment_method": "BANK_TRANSFER", "transaction_type": "PAYMENT",
			"transaction_amount": "450000.00", "transaction_currency": "VND", "transaction_status": "APPROVED",
			"authentication_status": "AUTHENTICATION_NOT_NEEDED", "transaction_date": "2026-03-05 12:10:00",
		}}
		want["payment"] = map[string]any{
			"method": "BANK_TRANSFER", "code": o.PaymentCode, "virtual_account": nil,
			"bank_account": map[string]any{"id": float64(b.a.account), "bank_name": "Vietcombank", "account_number": "0071000123456", "holder_name": "CONG TY TNHH SAO MAI"},
			"paid_amount":  "450000.00", "paid_at": "2026-03-05 12:10:00", "cancelled_at": nil, "voided_at": nil,
			"checkout_url": page,
		}
		want["match_decisions"] = []any{map[string]any{
			"id": strconv.FormatInt(d.ID, 10), "transaction_id": strconv.FormatInt(d.TransactionID, 10), "outcome": "matched",
			"rule": "code", "code": o.PaymentCode, "amount": "450000.00", "order_amount": "450000.00", "paid_total": "450000.00",
			"reason": d.Reason, "at": "2026-03-05 12:10:00",
		}}
		checkJSON(t, "detail INV-004", b.api(t, b.a, "GET", "/v1/order/detail/INV-004", ""), 200, map[string]any{"data": want})
		if !strings.HasPrefix(page, "/v1/checkout/"+b.a.id+"/INV-004?t=") {
			t.Fatalf("checkout_url %q", page)
		}

		// An unpaid order: no transactions, no decisions.
		o1 := b.order(t, b.a, "INV-001")
		r := b.api(t, b.a, "GET", "/v1/order/detail/INV-001", "").json(t)["data"].(map[string]any)
		if len(r["transactions"].([]any)) != 0 || len(r["match_decisions"].([]any)) != 0 ||
			r["payment"].(map[string]any)["paid_at"] != nil || r["payment"].(map[string]any)["code"] != o1.PaymentCode {
			t.Fatalf("unpaid detail %v", r)
		}
		// B's INV-001 is B's; A cannot see B's orders; unknown is 404.
		if got := b.api(t, b.b, "GET", "/v1/order/detail/INV-001", "").json(t)["data"].(map[string]any)["order_amount"]; got != "990000.00" {
			t.Fatalf("merchant B's INV-001: %v", got)
		}
		checkJSON(t, "B reads A's order", b.api(t, b.b, "GET", "/v1/order/detail/INV-004", ""), 404, wantError("not_found", "order not found"))
		checkJSON(t, "unknown", b.api(t, b.a, "GET", "/v1/order/detail/NOPE", ""), 404, wantError("not_found", "order not found"))
	})
}

func TestCancelAndVoid(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ctx := context.Background()
		b.newOrder(t, b.a, "INV-1", "100000")
		b.newOrder(t, b.a, "INV-2", "200000")
		b.clock.Set(time.Date(2026, 3, 1, 10, 0, 0, 0, hcm))
		if r := b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn","secret_key":"whsec_abcdefghijkl"}`); r.status != 200 {
			t.Fatalf("PUT /v1/ipn: %d %s", r.status, r.body)
		}
		b.pay(t, b.a, b.order(t, b.a, "INV-2").PaymentCode, 200000, "FT-2")
		b.clock.Set(time.Date(2026, 3, 1, 11, 0, 0, 0, hcm))

		// Cancel an unpaid order.
		r := b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-1"}`)
		o1 := b.order(t, b.a, "INV-1")
		checkJSON(t, "cancel unpaid", r, 200, map[string]any{"success": true, "message": "Đã hủy đơn hàng thành công", "data": orderJSON(o1)})
		if o1.Status != recon.OrderCancelled || o1.UpdatedAt.In(hcm).Format(time.DateTime) != "2026-03-01 11:00:00" {
			t.Fatalf("cancelled order %+v", o1)
		}
		for _, tt := range []struct {
			name, path, body string
			status           int
			want             map[string]any
		}{
			{"cancel twice", "cancel", `{"order_invoice_number":"INV-1"}`, 409, wantError("conflict", "order INV-1 is already cancelled")},
			{"cancel paid", "cancel", `{"order_invoice_number":"INV-2"}`, 409, wantError("conflict", "order INV-2 is paid: void it instead of cancelling")},
			{"void unpaid (cancelled)", "voidTransaction", `{"order_invoice_number":"INV-1"}`, 409, wantError("conflict", "order INV-1 is already cancelled")},
			{"cancel unknown", "cancel", `{"order_invoice_number":"NOPE"}`, 404, wantError("not_found", "order not found")},
			{"void unknown", "voidTransaction", `{"order_invoice_number":"NOPE"}`, 404, wantError("not_found", "order not found")},
			{"missing invoice", "cancel", `{}`, 400, wantError("validation_error", "order_invoice_number is required")},
			{"number invoice", "cancel", `{"order_invoice_number":1}`, 400, wantError("validation_error", "order_invoice_number must be a string, not number")},
			{"unknown field", "voidTransaction", `{"order_invoice_number":"INV-2","reason":"x"}`, 400, wantError("validation_error", `unknown field "reason"`)},
			{"empty body", "voidTransaction", ``, 400, wantError("validation_error", "request body is empty: a JSON object is required")},
		} {
			checkJSON(t, tt.name, b.api(t, b.a, "POST", "/v1/order/"+tt.path, tt.body), tt.status, tt.want)
		}
		// Another merchant cannot touch A's orders.
		checkJSON(t, "B voids A's order", b.api(t, b.b, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-2"}`), 404, wantError("not_found", "order not found"))

		// Void a paid order: CANCELLED, and a TRANSACTION_VOID IPN enqueued.
		b.newOrder(t, b.a, "INV-3", "300000")
		checkJSON(t, "void unpaid", b.api(t, b.a, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-3"}`), 409,
			wantError("conflict", "order INV-3 is not paid: cancel it instead of voiding"))
		r = b.api(t, b.a, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-2"}`)
		o2 := b.order(t, b.a, "INV-2")
		checkJSON(t, "void paid", r, 200, map[string]any{"success": true, "message": "Đã hủy giao dịch thành công", "data": orderJSON(o2)})
		if o2.Status != recon.OrderCancelled || o2.VoidedAt.IsZero() {
			t.Fatalf("voided order %+v", o2)
		}
		checkJSON(t, "void twice", b.api(t, b.a, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-2"}`), 409,
			wantError("conflict", "order INV-2 is already cancelled"))
		ds, err := b.db.Deliveries(ctx, b.a.company, recon.DeliveryFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		events := map[string]*recon.Delivery{}
		for _, d := range ds {
			events[d.Event] = d
		}
		void := events[recon.IPNTransactionVoid]
		if len(ds) != 2 || events[recon.IPNOrderPaid] == nil || void == nil {
			t.Fatalf("deliveries: %v", ds)
		}
		var body struct {
			Timestamp        int64  `json:"timestamp"`
			NotificationType string `json:"notification_type"`
			Order            struct {
				OrderInvoiceNumber string `json:"order_invoice_number"`
				OrderStatus        string `json:"order_status"`
			} `json:"order"`
			Transaction struct {
				TransactionStatus string `json:"transaction_status"`
				TransactionDate   string `json:"transaction_date"`
			} `json:"transaction"`
		}
		if err := json.Unmarshal(void.Payload, &body); err != nil {
			t.Fatal(err)
		}
		if body.NotificationType != "TRANSACTION_VOID" || body.Order.OrderInvoiceNumber != "INV-2" || body.Order.OrderStatus != "CANCELLED" ||
			body.Transaction.TransactionStatus != "VOIDED" || body.Transaction.TransactionDate != "2026-03-01 11:00:00" ||
			body.Timestamp != time.Date(2026, 3, 1, 11, 0, 0, 0, hcm).Unix() {
			t.Fatalf("TRANSACTION_VOID payload %s", void.Payload)
		}
		// The detail shows the payment voided.
		det := b.api(t, b.a, "GET", "/v1/order/detail/INV-2", "").json(t)["data"].(map[string]any)
		if det["transactions"].([]any)[0].(map[string]any)["transaction_status"] != "VOIDED" ||
			det["payment"].(map[string]any)["voided_at"] != "2026-03-01 11:00:00" {
			t.Fatalf("voided detail %v", det)
		}
	})
}

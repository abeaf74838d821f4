package recon_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"recon"
)

// TestParseIPNTypes is the rule of notification_types (PUT /v1/ipn, the
// dashboard, the CLI; docs/api-v2.md, Notifications) as a table: known types,
// none twice, at least one, the given order kept; a refusal names the type.
func TestParseIPNTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
		err  string // the EINVALID message, "" when accepted
	}{
		{name: "the default", in: []string{"ORDER_PAID", "TRANSACTION_VOID"}, want: []string{"ORDER_PAID", "TRANSACTION_VOID"}},
		{name: "one new type alone", in: []string{"ORDER_PARTIALLY_PAID"}, want: []string{"ORDER_PARTIALLY_PAID"}},
		{name: "order kept", in: []string{"REFUND_FAILED", "ORDER_EXPIRED", "ORDER_PAID"}, want: []string{"REFUND_FAILED", "ORDER_EXPIRED", "ORDER_PAID"}},
		{name: "every type", in: recon.IPNTypes, want: recon.IPNTypes},
		{name: "nil", in: nil,
			err: "notification_types needs at least one of ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED"},
		{name: "empty", in: []string{},
			err: "notification_types needs at least one of ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED"},
		{name: "unknown", in: []string{"ORDER_PAID", "ORDER_REFUNDED"},
			err: `unknown notification type "ORDER_REFUNDED" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`},
		{name: "case matters", in: []string{"order_paid"},
			err: `unknown notification type "order_paid" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`},
		{name: "empty string", in: []string{""},
			err: `unknown notification type "" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`},
		{name: "twice", in: []string{"ORDER_EXPIRED", "ORDER_PAID", "ORDER_EXPIRED"}, err: `notification type "ORDER_EXPIRED" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := recon.ParseIPNTypes(tc.in)
			if tc.err != "" {
				var re *recon.Error
				if !errors.As(err, &re) || re.Code != recon.EINVALID || re.Message != tc.err {
					t.Fatalf("err %v, want EINVALID %q", err, tc.err)
				}
				if len(re.Fields["notification_types"]) != 1 {
					t.Errorf("fields %v, want notification_types named", re.Fields)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestIPNWants is the subscription rule of notifyAt's filter: settings saved
// before API v2 ("{}", "", or no notification_types) want exactly the v1
// types, a chosen list wants exactly its types, other keys of the settings
// do not matter, and broken settings are an error rather than a guess.
func TestIPNWants(t *testing.T) {
	v1 := map[string]bool{"ORDER_PAID": true, "TRANSACTION_VOID": true}
	only := func(types ...string) map[string]bool {
		m := map[string]bool{}
		for _, t := range types {
			m[t] = true
		}
		return m
	}
	for _, tc := range []struct {
		settings string
		want     map[string]bool // the types wanted; every other one is not
		err      bool
	}{
		{settings: "{}", want: v1},
		{settings: "", want: v1},
		{settings: `{"notification_types":null}`, want: v1},
		{settings: `{"other":"kept"}`, want: v1},
		{settings: `{"notification_types":["ORDER_PAID","TRANSACTION_VOID"]}`, want: v1},
		{settings: `{"notification_types":["ORDER_PARTIALLY_PAID"]}`, want: only("ORDER_PARTIALLY_PAID")},
		{settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID","ORDER_EXPIRED"],"other":1}`,
			want: only("ORDER_PAID", "ORDER_PARTIALLY_PAID", "ORDER_EXPIRED")},
		{settings: `{"notification_types":["REFUND_SUCCEEDED","REFUND_FAILED"]}`, want: only("REFUND_SUCCEEDED", "REFUND_FAILED")},
		{settings: `{"notification_types":[]}`, want: only()}, // never saved (ParseIPNTypes refuses it): nothing
		{settings: `{"notification_types":"ORDER_PAID"}`, err: true},
		{settings: `not json`, err: true},
	} {
		for _, typ := range append(slices.Clone(recon.IPNTypes), "TEST_NOTIFICATION", "") {
			got, err := recon.IPNWants(tc.settings, typ)
			if tc.err {
				if err == nil {
					t.Errorf("IPNWants(%q, %q) = %v, want an error", tc.settings, typ, got)
				}
				continue
			}
			if err != nil || got != tc.want[typ] {
				t.Errorf("IPNWants(%q, %q) = %v, %v; want %v", tc.settings, typ, got, err, tc.want[typ])
			}
		}
	}
	if !slices.Equal(recon.DefaultIPNTypes, []string{"ORDER_PAID", "TRANSACTION_VOID"}) {
		t.Errorf("DefaultIPNTypes = %v: a target saved before API v2 must keep receiving exactly what v1 sent", recon.DefaultIPNTypes)
	}
}

// goldenOrder is a fixed order whose v1 IPN bodies were recorded with the
// code before API v2 (IPNDelivery as of commit face163).
func goldenOrder() *recon.Order {
	return &recon.Order{ID: 42, CompanyID: 7, InvoiceNumber: "INV-2026-0042", OrderID: "SO-9001", CustomerID: "CUS-17",
		Status: recon.OrderCaptured, Amount: 250000, Currency: "VND", Description: "Đơn hàng áo thun \"cotton\" <M>",
		PaymentCode: "DH20261126042", PaidAmount: 250000, CustomData: `[{"size":"M","qty":2}]`, CustomDataSigned: true,
		UserAgent: "Mozilla/5.0", IPAddress: "203.0.113.9", PaidAt: time.Date(2026, 11, 26, 10, 15, 30, 0, time.UTC), PaidTransactionID: 9876}
}

var goldenAt = time.Date(2026, 11, 26, 17, 20, 0, 0, time.FixedZone("ICT", 7*3600))

// TestIPNDeliveryV1Unchanged: the ORDER_PAID and TRANSACTION_VOID bodies are
// byte for byte those v1 sent before API v2 (recorded from the code before
// it), so a v1 receiver sees no changed body (docs/api-v2.md, Notifications).
func TestIPNDeliveryV1Unchanged(t *testing.T) {
	badCustom := goldenOrder()
	badCustom.CustomData, badCustom.PaidAt = "not json", time.Time{}
	for _, tc := range []struct {
		name  string
		order *recon.Order
		event string
		want  string
	}{
		{"ORDER_PAID", goldenOrder(), recon.IPNOrderPaid,
			`{"timestamp":1795688400,"notification_type":"ORDER_PAID","order":{"id":"42","order_id":"SO-9001","order_status":"CAPTURED","order_currency":"VND","order_amount":"250000.00","order_invoice_number":"INV-2026-0042","custom_data":[{"size":"M","qty":2}],"custom_data_signed":true,"user_agent":"Mozilla/5.0","ip_address":"203.0.113.9","order_description":"Đơn hàng áo thun \"cotton\" \u003cM\u003e"},"transaction":{"id":"9876","payment_method":"BANK_TRANSFER","transaction_id":"9876","transaction_type":"PAYMENT","transaction_date":"2026-11-26 10:15:30","transaction_status":"APPROVED","transaction_amount":"250000.00","transaction_currency":"VND","authentication_status":"AUTHENTICATION_NOT_NEEDED","card_number":"","card_holder_name":"","card_expiry":"","card_funding_method":"","card_brand":""},"customer":{"id":"CUS-17","customer_id":"CUS-17"}}`},
		{"TRANSACTION_VOID", goldenOrder(), recon.IPNTransactionVoid,
			`{"timestamp":1795688400,"notification_type":"TRANSACTION_VOID","order":{"id":"42","order_id":"SO-9001","order_status":"CAPTURED","order_currency":"VND","order_amount":"250000.00","order_invoice_number":"INV-2026-0042","custom_data":[{"size":"M","qty":2}],"custom_data_signed":true,"user_agent":"Mozilla/5.0","ip_address":"203.0.113.9","order_description":"Đơn hàng áo thun \"cotton\" \u003cM\u003e"},"transaction":{"id":"9876","payment_method":"BANK_TRANSFER","transaction_id":"9876","transaction_type":"VOID","transaction_date":"2026-11-26 17:20:00","transaction_status":"VOIDED","transaction_amount":"250000.00","transaction_currency":"VND","authentication_status":"AUTHENTICATION_NOT_NEEDED","card_number":"","card_holder_name":"","card_expiry":"","card_funding_method":"","card_brand":""},"customer":{"id":"CUS-17","customer_id":"CUS-17"}}`},
		{"ORDER_PAID, broken custom data, no paid time", badCustom, recon.IPNOrderPaid,
			`{"timestamp":1795688400,"notification_type":"ORDER_PAID","order":{"id":"42","order_id":"SO-9001","order_status":"CAPTURED","order_currency":"VND","order_amount":"250000.00","order_invoice_number":"INV-2026-0042","custom_data":[],"custom_data_signed":true,"user_agent":"Mozilla/5.0","ip_address":"203.0.113.9","order_description":"Đơn hàng áo thun \"cotton\" \u003cM\u003e"},"transaction":{"id":"9876","payment_method":"BANK_TRANSFER","transaction_id":"9876","transaction_type":"PAYMENT","transaction_date":"2026-11-26 17:20:00","transaction_status":"APPROVED","transaction_amount":"250000.00","transaction_currency":"VND","authentication_status":"AUTHENTICATION_NOT_NEEDED","card_number":"","card_holder_name":"","card_expiry":"","card_funding_method":"","card_brand":""},"customer":{"id":"CUS-17","customer_id":"CUS-17"}}`},
	} {
		d, err := recon.IPNDelivery(tc.order, tc.event, goldenAt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(d.Payload) != tc.want {
			t.Errorf("%s: body changed for v1 receivers:\n got %s\nwant %s", tc.name, d.Payload, tc.want)
		}
		if d.Kind != recon.DeliveryIPN || d.Event != tc.event || d.OrderID != 42 || d.CompanyID != 7 {
			t.Errorf("%s: delivery %+v", tc.name, d)
		}
	}
}

// TestIPNDeliveryNewTypes: the API v2 types keep the §2.8 body (every key of
// v1, in v1's order) and say what happened in notification_type,
// transaction_type, transaction_status, transaction_date and
// transaction_amount (docs/api-v2.md, Notifications).
func TestIPNDeliveryNewTypes(t *testing.T) {
	partial := goldenOrder()
	partial.Status, partial.PaidAmount = recon.OrderAwaitingPayment, 100000
	expired := goldenOrder()
	expired.Status, expired.PaidAmount, expired.PaidAt, expired.PaidTransactionID = recon.OrderCancelled, 0, time.Time{}, 0
	expiredPart := goldenOrder()
	expiredPart.Status, expiredPart.PaidAmount = recon.OrderCancelled, 100000
	for _, tc := range []struct {
		name        string
		order       *recon.Order
		event       string
		kind        string // transaction_type
		status      string // transaction_status
		date        string // transaction_date
		amount      string // transaction_amount
		txID        string
		orderStatus string
	}{
		{"partially paid", partial, recon.IPNOrderPartiallyPaid, "PAYMENT", "APPROVED", "2026-11-26 10:15:30", "100000.00", "9876", recon.OrderAwaitingPayment},
		{"expired unpaid", expired, recon.IPNOrderExpired, "EXPIRY", "EXPIRED", "2026-11-26 17:20:00", "0.00", "0", recon.OrderCancelled},
		{"expired after a part", expiredPart, recon.IPNOrderExpired, "EXPIRY", "EXPIRED", "2026-11-26 17:20:00", "100000.00", "9876", recon.OrderCancelled},
	} {
		d, err := recon.IPNDelivery(tc.order, tc.event, goldenAt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d.Kind != recon.DeliveryIPN || d.Event != tc.event || d.OrderID != 42 {
			t.Errorf("%s: delivery %+v", tc.name, d)
		}
		var body struct {
			Timestamp        int64  `json:"timestamp"`
			NotificationType string `json:"notification_type"`
			Order            struct {
				Status string `json:"order_status"`
				Amount string `json:"order_amount"`
			} `json:"order"`
			Transaction struct {
				ID     string `json:"transaction_id"`
				Type   string `json:"transaction_type"`
				Status string `json:"transaction_status"`
				Date   string `json:"transaction_date"`
				Amount string `json:"transaction_amount"`
			} `json:"transaction"`
		}
		if err := json.Unmarshal(d.Payload, &body); err != nil {
			t.Fatal(err)
		}
		tx := body.Transaction
		if body.Timestamp != goldenAt.Unix() || body.NotificationType != tc.event || body.Order.Status != tc.orderStatus ||
			body.Order.Amount != "250000.00" || tx.Type != tc.kind || tx.Status != tc.status || tx.Date != tc.date ||
			tx.Amount != tc.amount || tx.ID != tc.txID {
			t.Errorf("%s: body %s", tc.name, d.Payload)
		}
		// The shape is v1's: the same keys as ORDER_PAID.
		v1, _ := recon.IPNDelivery(goldenOrder(), recon.IPNOrderPaid, goldenAt)
		if got, want := keys(t, d.Payload), keys(t, v1.Payload); !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want v1's %v", tc.name, got, want)
		}
	}
	for _, ev := range []string{recon.IPNRefundSucceeded, "ORDER_REFUNDED", ""} {
		if _, err := recon.IPNDelivery(goldenOrder(), ev, goldenAt); err == nil {
			t.Errorf("IPNDelivery(%q) made an order IPN", ev)
		}
	}
}

// keys lists the paths of a JSON object's keys ("order.order_status"),
// sorted.
func keys(t *testing.T, doc []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			out = append(out, prefix+k)
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", m)
	slices.Sort(out)
	return out
}

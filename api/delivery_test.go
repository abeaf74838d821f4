package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestReconciliationAndDeliveries(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		ctx := context.Background()
		acct := b.account(t, b.company.ID, "111")
		b.do(t, "PATCH", "/api/v1/company/configurations", "admin", `{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
		if err := b.store.SetIPN(ctx, b.company.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthSecretKey, Secret: "k", Active: true}); err != nil {
			t.Fatal(err)
		}
		for _, o := range []*recon.Order{
			{CompanyID: b.company.ID, InvoiceNumber: "INV-1", PaymentCode: "DH1001", Amount: 100_000},
			{CompanyID: b.company.ID, InvoiceNumber: "INV-2", PaymentCode: "DH1002", Amount: 100_000},
		} {
			if err := b.store.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", fmt.Sprintf(`{"transactions":[
			{"bank_account_id":%d,"transaction_date":"2026-03-01 08:00:00","amount_in":100000,"transaction_content":"chuyen tien DH1001","reference_number":"R1"},
			{"bank_account_id":%d,"transaction_date":"2026-03-01 09:00:00","amount_in":30000,"transaction_content":"DH1002 dot 1","reference_number":"R2"},
			{"bank_account_id":%d,"transaction_date":"2026-03-01 10:00:00","amount_in":5000,"transaction_content":"khong co ma","reference_number":"R3"}]}`, acct, acct, acct))
		if status != 200 {
			t.Fatalf("push: %d %v", status, body)
		}
		// The transaction shows what matching decided about it; another company's is not found.
		first := fmt.Sprint(body["data"].([]any)[1].(map[string]any)["id"])
		status, _, one := b.do(t, "GET", "/api/v1/transactions/"+first, "viewer", "")
		ds, _ := one["data"].(map[string]any)["match_decisions"].([]any)
		if status != 200 || len(ds) != 1 || ds[0].(map[string]any)["outcome"] != "underpaid" ||
			ds[0].(map[string]any)["reason"] != "payment code DH1002 names order INV-2: 30000 of 100000 VND paid, 70000 short" {
			t.Fatalf("transaction %s: %d %v", first, status, one)
		}
		if status, _, _ := b.do(t, "GET", "/api/v1/transactions/"+first, "other-viewer", ""); status != 404 {
			t.Fatalf("another company's transaction: %d", status)
		}
		status, _, rep := b.do(t, "GET", "/api/v1/reconciliation?from_date=2026-03-01&to_date=2026-03-01", "viewer", "")
		if status != 200 {
			t.Fatalf("report: %d %v", status, rep)
		}
		data := rep["data"].(map[string]any)
		sum := data["summary"].(map[string]any)
		if sum["matched"].(map[string]any)["count"] != 1.0 || sum["underpaid"].(map[string]any)["count"] != 1.0 ||
			sum["unmatched"].(map[string]any)["amount"] != 5000.0 || len(data["unmatched"].([]any)) != 1 || len(data["underpaid"].([]any)) != 1 {
			t.Fatalf("report: %v", data)
		}
		// The refunds part (docs/api.md): none in this range, every status at 0.
		if rf, _ := data["refunds"].(map[string]any); rf == nil || rf["count"] != 0.0 || rf["amount"] != 0.0 ||
			rf["by_status"].(map[string]any)["pending_approval"].(map[string]any)["count"] != 0.0 {
			t.Errorf("report's refunds: %v", data["refunds"])
		}
		for _, q := range []string{"from_date=2026-03-02&to_date=2026-03-01", "from_date=x", "day=1"} {
			if status, _, _ := b.do(t, "GET", "/api/v1/reconciliation?"+q, "viewer", ""); status != 400 {
				t.Errorf("report %s: %d, want 400", q, status)
			}
		}
		// The capture's IPN is in the outbox; the company sees it, another does not.
		status, _, list := b.do(t, "GET", "/api/v1/deliveries", "deliveries", "")
		items, _ := list["data"].([]any)
		if status != 200 || len(items) != 1 || items[0].(map[string]any)["event"] != "ORDER_PAID" {
			t.Fatalf("deliveries: %d %v", status, list)
		}
		id := fmt.Sprint(items[0].(map[string]any)["id"])
		status, _, one = b.do(t, "GET", "/api/v1/deliveries/"+id, "deliveries", "")
		payload, _ := one["data"].(map[string]any)["payload"].(map[string]any)
		if status != 200 || payload["notification_type"] != "ORDER_PAID" || payload["order"].(map[string]any)["order_invoice_number"] != "INV-1" {
			t.Fatalf("delivery %s: %d %v", id, status, one)
		}
		if status, _, _ := b.do(t, "POST", "/api/v1/deliveries/"+id+"/replay", "deliveries", ""); status != 200 {
			t.Fatalf("replay: %d", status)
		}
		if status, _, _ := b.do(t, "GET", "/api/v1/deliveries/"+id, "other-deliveries", ""); status != 404 {
			t.Fatalf("another company's delivery: %d, want 404", status)
		}
		if status, _, _ := b.do(t, "POST", "/api/v1/deliveries/"+id+"/replay", "other-deliveries", ""); status != 404 {
			t.Fatalf("another company's replay: %d, want 404", status)
		}
		if status, _, _ := b.do(t, "GET", "/api/v1/deliveries?status=lost", "deliveries", ""); status != 400 {
			t.Fatalf("bad status filter: %d", status)
		}
	})
}

// TestDeliveryOperations: replay every failed notification since a time,
// the per-kind figures, and a test notification, with their failure paths;
// another company's deliveries are neither counted nor replayed.
func TestDeliveryOperations(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		ctx := context.Background()
		// No IPN target yet: nowhere to send a test to.
		status, _, body := b.do(t, "POST", "/api/v1/deliveries/test", "deliveries", `{"kind":"ipn"}`)
		if status != 400 || body["message"] != "there is no active ipn target to send a test notification to: set one first" {
			t.Fatalf("test without a target: %d %v", status, body)
		}
		if err := b.store.SetIPN(ctx, b.company.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		status, _, body = b.do(t, "POST", "/api/v1/deliveries/test", "deliveries", `{"kind":"ipn"}`)
		d, _ := body["data"].(map[string]any)
		if status != 201 || d["event"] != "TEST_NOTIFICATION" || d["status"] != "pending" {
			t.Fatalf("test notification: %d %v", status, body)
		}
		id := int64(d["id"].(float64))
		_, _, body = b.do(t, "GET", fmt.Sprint("/api/v1/deliveries/", id), "deliveries", "")
		if p := body["data"].(map[string]any)["payload"].(map[string]any); p["notification_type"] != "TEST_NOTIFICATION" || p["message"] == nil {
			t.Fatalf("test notification's payload: %v", body)
		}
		// It fails for good: dead. Another company has a dead one too.
		theirs := &recon.Delivery{CompanyID: b.other.ID, Kind: recon.DeliveryIPN, Event: "ORDER_PAID", Payload: []byte(`{}`)}
		if err := b.store.EnqueueDelivery(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		var outcomes []recon.AttemptOutcome
		for _, d := range []int64{id, theirs.ID} {
			outcomes = append(outcomes, recon.AttemptOutcome{Attempt: &recon.DeliveryAttempt{DeliveryID: d, At: now, URL: "https://shop.example.vn/ipn",
				StatusCode: 500, Latency: 25 * time.Millisecond}, Status: recon.DeliveryDead})
		}
		if err := b.store.RecordAttempts(ctx, outcomes); err != nil {
			t.Fatal(err)
		}
		status, _, body = b.do(t, "GET", "/api/v1/deliveries/stats", "deliveries", "")
		want := `[{"attempts":1,"dead":1,"delivered":0,"failing":0,"kind":"ipn","latency_p50_ms":25,"latency_p95_ms":25,"pending":0,"succeeded":0,"success_rate":0}]`
		if got := jsonText(body["data"]); status != 200 || got != want {
			t.Fatalf("stats: %d %s\nwant %s", status, got, want)
		}
		status, _, body = b.do(t, "POST", "/api/v1/deliveries/replay", "deliveries", `{"since":"2000-01-01 00:00:00","kind":"ipn"}`)
		if status != 200 || jsonText(body["data"]) != `{"replayed":1}` {
			t.Fatalf("replay: %d %v", status, body)
		}
		if got, _ := b.store.Delivery(ctx, b.other.Tenant(), theirs.ID); got.Status != recon.DeliveryDead {
			t.Fatalf("another company's delivery was replayed: %+v", got)
		}
		for _, c := range []struct {
			method, path, token, body string
			status                    int
			message                   string
		}{
			{"POST", "/api/v1/deliveries/replay", "deliveries", `{}`, 400, "since is required"},
			{"POST", "/api/v1/deliveries/replay", "deliveries", `{"since":"yesterday"}`, 400, "since must be YYYY-MM-DD HH:MM:SS"},
			{"POST", "/api/v1/deliveries/replay", "deliveries", `{"since":"2026-01-01 00:00:00","kind":"sms"}`, 400, "kind"},
			{"POST", "/api/v1/deliveries/replay", "deliveries", `{"since":"2026-01-01 00:00:00","status":"dead"}`, 400, "unknown field"},
			{"POST", "/api/v1/deliveries/replay", "deliveries", `{"since":5}`, 400, "since"},
			{"GET", "/api/v1/deliveries/stats?since=x", "deliveries", "", 400, "since must be"},
			{"GET", "/api/v1/deliveries/stats?from=2026-01-01", "deliveries", "", 400, "unknown query parameter"},
			{"POST", "/api/v1/deliveries/test", "deliveries", `{}`, 400, "kind is required"},
			{"POST", "/api/v1/deliveries/test", "deliveries", `{"kind":"sms"}`, 400, "kind"},
			{"POST", "/api/v1/deliveries/test", "deliveries", `{"kind":"webhook"}`, 400, "no active webhook target"},
			{"POST", "/api/v1/deliveries/test", "deliveries", `[`, 400, ""},
		} {
			status, _, body := b.do(t, c.method, c.path, c.token, c.body)
			if status != c.status || !strings.Contains(fmt.Sprint(body["message"]), c.message) {
				t.Errorf("%s %s %s: %d %v, want %d %q", c.method, c.path, c.body, status, body, c.status, c.message)
			}
		}
	})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

package api_test

import (
	"context"
	"fmt"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestReconciliationAndDeliveries(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		ctx := context.Background()
		acct := b.account(t, b.company.ID, "111")
		b.do(t, "PATCH", "/api/v1/company/configurations", "admin", `{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
		if err := b.store.SetIPN(ctx, b.company.ID, &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthSecretKey, Secret: "k", Active: true}); err != nil {
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

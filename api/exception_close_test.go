package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// Exceptions an accountant can close through the API (issue 22; docs/api.md,
// Exceptions queue): write_off and ask_remainder, every decision in the
// detail, the totals, the memo search and several resolved at once; bad
// input and other tenants refused.
func TestExceptionsAPIClose(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := exceptionSetup(t, engine)
		ctx := t.Context()
		underpaid := func(invoice, code string, amount, paid int64, date string) int64 {
			t.Helper()
			o := &recon.Order{CompanyID: b.company.ID, InvoiceNumber: invoice, PaymentCode: code, Amount: amount, BankAccountID: b.account}
			if err := b.store.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			d, _ := time.Parse(recon.DateTimeLayout, date)
			res, err := recon.Ingest(ctx, b.store, b.company.Tenant(), d, []recon.TransactionInput{{BankAccountID: b.account, TransactionDate: d,
				AmountIn: paid, Content: "thanh toan " + code, ReferenceNumber: invoice}})
			if err != nil {
				t.Fatal(err)
			}
			return res[0].ID
		}
		short := underpaid("SHORT", "DH10020", 200_000, 120_000, "2026-03-03 10:00:00")
		short2 := underpaid("SHORT2", "DH10021", 300_000, 100_000, "2026-03-04 10:00:00")
		resolve := func(id int64) string { return fmt.Sprintf("/api/v1/exceptions/%d/resolve", id) }
		data := func(body map[string]any) map[string]any { d, _ := body["data"].(map[string]any); return d }

		// Refused, writing nothing.
		for _, c := range []struct {
			name, token string
			id          int64
			body        string
			status      int
			code        string
		}{
			{"write_off with an order", "accountant", short, fmt.Sprintf(`{"action":"write_off","order_id":%d,"note":"x"}`, b.open.ID), 400, "validation_error"},
			{"write_off without a note", "accountant", short, `{"action":"write_off"}`, 400, "validation_error"},
			{"write_off of an unmatched transfer", "accountant", b.u1, `{"action":"write_off","note":"x"}`, 409, "conflict"},
			{"ask_remainder of a duplicate", "accountant", b.dup, `{"action":"ask_remainder","note":"x"}`, 409, "conflict"},
			{"write_off by a Member", "viewer", short, `{"action":"write_off","note":"x"}`, 403, "forbidden"},
			{"write_off of another tenant's", "other", short, `{"action":"write_off","note":"x"}`, 404, "not_found"},
		} {
			status, _, body := b.do(t, "POST", resolve(c.id), c.token, c.body)
			if status != c.status || body["error"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
			}
		}
		if o, _ := b.store.Order(ctx, b.company.Tenant(), "SHORT"); o.Status != recon.OrderAwaitingPayment {
			t.Fatalf("SHORT after the refusals: %s", o.Status)
		}

		// Write off SHORT's remainder: paid, with the amount written off.
		status, _, body := b.do(t, "POST", resolve(short), "accountant", `{"action":"write_off","note":"giảm giá cho khách"}`)
		if d := data(body); status != 200 || d["action"] != "write_off" || d["amount"] != "80000.00" || d["closes"] != true {
			t.Fatalf("write_off: %d %v", status, body)
		}
		if o, _ := b.store.Order(ctx, b.company.Tenant(), "SHORT"); o.Status != recon.OrderCaptured || o.PaidAmount != 120_000 {
			t.Fatalf("SHORT: %+v", o)
		}
		// Ask for SHORT2's: a virtual account, the exception still open.
		status, _, body = b.do(t, "POST", resolve(short2), "accountant", `{"action":"ask_remainder","note":"nhắc khách"}`)
		if d := data(body); status != 200 || d["amount"] != "200000.00" || d["va_number"] == "" || d["closes"] != false {
			t.Fatalf("ask_remainder: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/exceptions/%d", short2), "viewer", "")
		if d := data(body); status != 200 || d["status"] != "open" || d["resolution"] != nil || len(d["decisions"].([]any)) != 1 {
			t.Fatalf("after the ask: %d %v", status, body)
		}

		// Totals of the open queue, and with the memo search.
		if status, _, body = b.do(t, "GET", "/api/v1/exceptions/totals", "viewer", ""); status != 200 {
			t.Fatalf("totals: %d %v", status, body)
		}
		wantBody(t, "totals", body, `{"status":"success","data":{"count":3,"amount":"350000.00","kinds":[
			{"kind":"unmatched","count":1,"amount":"150000.00"},{"kind":"underpaid","count":1,"amount":"100000.00"},
			{"kind":"duplicate","count":1,"amount":"100000.00"}],"livemode":true}}`)
		_, _, body = b.do(t, "GET", "/api/v1/exceptions/totals?q=dh10010", "viewer", "")
		if d := data(body); d["count"] != float64(1) || d["amount"] != "150000.00" {
			t.Errorf("totals of q=dh10010: %v", body)
		}
		_, _, body = b.do(t, "GET", "/api/v1/exceptions?q=DH10021", "viewer", "")
		if list := body["data"].([]any); len(list) != 1 || list[0].(map[string]any)["transaction_id"] != float64(short2) {
			t.Errorf("list q=DH10021: %v", body)
		}
		_, _, body = b.do(t, "GET", "/api/v1/exceptions/totals", "other", "")
		if d := data(body); d["count"] != float64(1) {
			t.Errorf("the other tenant's totals: %v", body)
		}
		for _, q := range []string{"kind=lost", "q=" + strings.Repeat("x", 101), "q=%01", "color=red"} {
			if status, _, body := b.do(t, "GET", "/api/v1/exceptions/totals?"+q, "viewer", ""); status != 400 || body["error"] != "validation_error" {
				t.Errorf("totals?%s: %d %v", q, status, body)
			}
		}

		// Several at once: each its own decision, one refused alone.
		for _, c := range []struct {
			name, token, body string
			status            int
		}{
			{"no ids", "accountant", `{"transaction_ids":[],"action":"ignore","note":"x"}`, 400},
			{"ids as text", "accountant", `{"transaction_ids":["1"],"action":"ignore","note":"x"}`, 400},
			{"a match", "accountant", fmt.Sprintf(`{"transaction_ids":[%d],"action":"match","note":"x"}`, b.u1), 400},
			{"no note", "accountant", fmt.Sprintf(`{"transaction_ids":[%d],"action":"ignore"}`, b.u1), 400},
			{"twice the same", "accountant", fmt.Sprintf(`{"transaction_ids":[%d,%d],"action":"ignore","note":"x"}`, b.u1, b.u1), 400},
			{"unknown field", "accountant", fmt.Sprintf(`{"transaction_ids":[%d],"action":"ignore","note":"x","all":true}`, b.u1), 400},
			{"a Member", "viewer", fmt.Sprintf(`{"transaction_ids":[%d],"action":"ignore","note":"x"}`, b.u1), 403},
		} {
			if status, _, body := b.do(t, "POST", "/api/v1/exceptions/resolve", c.token, c.body); status != c.status {
				t.Errorf("%s: %d %v, want %d", c.name, status, body, c.status)
			}
		}
		status, _, body = b.do(t, "POST", "/api/v1/exceptions/resolve", "accountant",
			fmt.Sprintf(`{"transaction_ids":[%d,%d,%d,%d],"action":"ignore","note":"không phải đơn hàng"}`, b.u1, b.dup, b.otherTx, short))
		items, _ := body["data"].([]any)
		if status != 200 || len(items) != 4 {
			t.Fatalf("bulk: %d %v", status, body)
		}
		for i, want := range []string{"resolved", "resolved", "refused:not_found", "refused:conflict"} {
			it := items[i].(map[string]any)
			got, _ := it["status"].(string)
			if e, _ := it["error"].(string); e != "" {
				got += ":" + e
			}
			if got != want {
				t.Errorf("bulk item %d: %v, want %s", i, it, want)
			}
		}
		entries, _, err := b.store.AuditEntries(ctx, b.company.Tenant(), recon.AuditFilter{Action: recon.AuditExceptionDecision, Page: 1, PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{b.u1, b.dup} {
			n := 0
			for _, a := range entries {
				if a.Object == fmt.Sprint("exception ", id) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("exception %d has %d audit entries, want 1", id, n)
			}
		}
		if id1, id2 := items[0].(map[string]any)["resolution"].(map[string]any)["id"], items[1].(map[string]any)["resolution"].(map[string]any)["id"]; id1 == id2 {
			t.Errorf("one decision record for two exceptions: %v", items)
		}
	})
}

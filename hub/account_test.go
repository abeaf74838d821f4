package hub_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestLinkedAccounts: a linked account is an ordinary bank account of the
// merchant (transfers to it flow through the one pipeline) and the hub's
// account and transaction routes show it, to its merchant only.
func TestLinkedAccounts(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "accounts")
		_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
		linkMB(p)
		p.post("link_otp", "otp", "12345678").want(200, `id="done"`)
		// An ordinary account of the merchant, not linked by the hub: not shown.
		plain := &recon.BankAccount{CompanyID: b.company.ID, BankName: "ACB", AccountNumber: "999"}
		if err := b.store.CreateBankAccount(t.Context(), plain); err != nil {
			t.Fatal(err)
		}
		status, _, body := b.do(t, "GET", "/v1/bank-account", "merchant", "")
		list, _ := body["data"].([]any)
		if status != 200 || len(list) != 1 {
			t.Fatalf("list: %d %s", status, jsonText(body))
		}
		a := list[0].(map[string]any)
		axid := a["xid"].(string)
		if a["company_xid"] != cxid || a["brand_name"] != "MBBank" || a["account_number"] != mbIndividual || a["account_holder_name"] != "NGUYEN VAN AN" ||
			a["account_type"] != "individual" || a["active"] != "1" || a["link_state"] != "linked" || a["last_transaction"] != nil {
			t.Fatalf("account: %v", a)
		}
		accounts, _ := b.store.BankAccounts(t.Context(), b.company.Tenant())
		var linkedID int64
		for _, acc := range accounts {
			if acc.AccountNumber == mbIndividual {
				linkedID = acc.ID
			}
		}
		day := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
		in := []recon.TransactionInput{
			{BankAccountID: linkedID, TransactionDate: day, AmountIn: 150000, Content: "chuyen tien", ReferenceNumber: "FT1"},
			{BankAccountID: linkedID, TransactionDate: day.AddDate(0, 0, 1), AmountOut: 20000, Content: "rut tien", ReferenceNumber: "FT2"},
			{BankAccountID: plain.ID, TransactionDate: day, AmountIn: 1, Content: "x", ReferenceNumber: "FT3"},
		}
		res, err := recon.Ingest(t.Context(), b.store, b.company.Tenant(), day.AddDate(0, 0, 1), in)
		if err != nil {
			t.Fatal(err)
		}
		status, _, body = b.do(t, "GET", "/v1/transaction?bank_account_xid="+axid, "merchant", "")
		txs := body["data"].([]any)
		if status != 200 || len(txs) != 2 || txs[0].(map[string]any)["reference_number"] != "FT2" || txs[0].(map[string]any)["transfer_type"] != "debit" ||
			txs[1].(map[string]any)["transaction_date"] != "2026-11-20 09:30:00" || txs[1].(map[string]any)["company_xid"] != cxid {
			t.Fatalf("transactions: %d %s", status, jsonText(body))
		}
		for _, tc := range []struct {
			q string
			n int
		}{{"from_date=2026-11-21", 1}, {"to_date=2026-11-20", 1}, {"company_xid=" + cxid, 2}, {"company_xid=" + recon.NewXID(), 0}, {"per_page=1&page=2", 1}} {
			_, _, body := b.do(t, "GET", "/v1/transaction?"+tc.q, "merchant", "")
			if got := len(body["data"].([]any)); got != tc.n {
				t.Errorf("?%s: %d transactions, want %d", tc.q, got, tc.n)
			}
		}
		for _, q := range []string{"from_date=2026-11-22&to_date=2026-11-21", "from_date=yesterday", "bank_account_xid=1", "sort=asc"} {
			if status, _, body := b.do(t, "GET", "/v1/transaction?"+q, "merchant", ""); status != 400 {
				t.Errorf("?%s: %d %v", q, status, body)
			}
		}
		id := strconv.FormatInt(res[0].ID, 10)
		if status, _, body = b.do(t, "GET", "/v1/transaction/"+id, "merchant", ""); status != 200 || body["data"].(map[string]any)["amount_in"] != float64(150000) {
			t.Fatalf("transaction: %d %v", status, body)
		}
		// The plain account's transaction, another merchant, a bad id: 404.
		for _, tc := range []struct{ token, path string }{
			{"merchant", "/v1/transaction/" + strconv.FormatInt(res[2].ID, 10)}, {"other", "/v1/transaction/" + id},
			{"merchant", "/v1/transaction/x"}, {"other", "/v1/bank-account/" + axid}, {"merchant", "/v1/bank-account/" + recon.NewXID()},
		} {
			if status, _, body := b.do(t, "GET", tc.path, tc.token, ""); status != 404 {
				t.Errorf("GET %s as %s: %d %v", tc.path, tc.token, status, body)
			}
		}
		if _, _, body = b.do(t, "GET", "/v1/bank-account", "other", ""); len(body["data"].([]any)) != 0 {
			t.Errorf("other's accounts: %v", body)
		}
		_, _, body = b.do(t, "GET", "/v1/bank-account/"+axid, "merchant", "")
		if d := body["data"].(map[string]any); d["last_transaction"] != "2026-11-21 09:30:00" || d["accumulated"] != "130000" {
			t.Fatalf("account after transfers: %v", d)
		}
		_, _, body = b.do(t, "GET", "/v1/company/counter/"+cxid, "merchant", "")
		if jsonText(body["data"]) != `{"bank_account":1,"dates":[{"date":"2026-11-20","transaction":1,"transaction_in":1,"transaction_out":0},{"date":"2026-11-21","transaction":1,"transaction_in":0,"transaction_out":1}],"total":{"transaction":2,"transaction_in":1,"transaction_out":1}}` {
			t.Fatalf("counter: %s", jsonText(body))
		}
		_, _, body = b.do(t, "GET", "/v1/company/counter/"+cxid+"?date=2026-11-21", "merchant", "")
		if jsonText(body["data"]) != `{"bank_account":1,"dates":[{"date":"2026-11-21","transaction":1,"transaction_in":0,"transaction_out":1}],"total":{"transaction":1,"transaction_in":0,"transaction_out":1}}` {
			t.Fatalf("counter of a day: %s", jsonText(body))
		}
	})
}

func TestMerchantConfig(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "GET", "/v1/merchant-config", "merchant", "")
		if status != 200 || jsonText(body) != `{"data":{"display_name":"","logo_url":"","primary_color":"","secondary_color":""}}` {
			t.Fatalf("empty: %d %s", status, jsonText(body))
		}
		status, _, body = b.do(t, "POST", "/v1/merchant-config", "merchant", `{"display_name":"Cửa hàng <Sao Mai>","primary_color":"#0a7d3b"}`)
		if status != 200 || body["data"].(map[string]any)["display_name"] != "Cửa hàng <Sao Mai>" {
			t.Fatalf("save: %d %v", status, body)
		}
		for _, bad := range []string{`{"primary_color":"red"}`, `{"logo_url":"http://x.vn/l.png"}`, `{"logo_url":"javascript:alert(1)"}`, `{"logo_url":"https://192.168.1.10/l.png"}`, `{"display_name":"` + strings.Repeat("a", 101) + `"}`, `{"font":"x"}`} {
			if status, _, body := b.do(t, "POST", "/v1/merchant-config", "merchant", bad); status != 400 || body["errors"] == nil {
				t.Errorf("POST %s: %d %v", bad, status, body)
			}
		}
		// Partial: one field changes, the others stay; another merchant is untouched.
		b.do(t, "POST", "/v1/merchant-config", "merchant", `{"logo_url":"https://cdn.example.vn/logo.png"}`)
		_, _, body = b.do(t, "GET", "/v1/merchant-config", "merchant", "")
		if d := body["data"].(map[string]any); d["primary_color"] != "#0a7d3b" || d["logo_url"] != "https://cdn.example.vn/logo.png" {
			t.Fatalf("after partial: %v", d)
		}
		if _, _, body = b.do(t, "GET", "/v1/merchant-config", "other", ""); body["data"].(map[string]any)["display_name"] != "" {
			t.Fatalf("other's: %v", body)
		}
		// The page shows the branding (the logo beside the name), escaped.
		cxid := linkSetup(t, b, "brand")
		_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
		p.open().want(200, `--brand: #0a7d3b`, `alt="" id="logo"><span>Cửa hàng &lt;Sao Mai&gt;</span>`, `src="https://cdn.example.vn/logo.png"`)
	})
}

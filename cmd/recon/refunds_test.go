package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestRefundsCommands: `recon refunds list|show|approve|reject|cancel|
// threshold` and `recon simulate refund-settlement` act through the refunds
// service as the named user: four eyes hold, the settlement goes through
// ingestion, and test mode is apart.
func TestRefundsCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Sao Mai", "--short-name", "SM")["id"])
	account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")["id"])
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "a@saomai.vn", "--role", "Admin")
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "b@saomai.vn", "--role", "Admin")
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "m@saomai.vn", "--role", "Member", "--permission", "create_refunds")
	tx := int64(cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", account, "--amount", "100000", "--content", "chuyen tien")["id"].(float64))

	// The threshold, set by an Admin only.
	if _, err := cli(t, dbURL, "refunds", "threshold", "--company", co, "--set", "50000", "--user", "m@saomai.vn"); err == nil {
		t.Fatal("a Member set the threshold")
	}
	if got := cliJSON(t, dbURL, "refunds", "threshold", "--company", co, "--set", "50000", "--user", "a@saomai.vn"); got["refund_approval_threshold"] != float64(50000) {
		t.Fatalf("threshold: %v", got)
	}

	db := dbtest.OpenURL(t, dbURL)
	var companyID int64
	fmt.Sscan(co, &companyID)
	u, err := db.UserByEmail(ctx, companyID, "a@saomai.vn")
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.CreateRefund(ctx, recon.LiveTenant(companyID), &recon.RefundRequest{TransactionID: tx, Amount: 60_000, Reason: "trả hàng",
		Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0011002", AccountName: "NGUYEN VAN A"}, By: recon.RefundActor{UserID: u.ID, Email: u.Email}}, time.Now())
	if err != nil || r.Status != recon.RefundPendingApproval {
		t.Fatalf("%+v %v", r, err)
	}

	list := cliJSON(t, dbURL, "refunds", "list", "--company", co, "--status", "pending_approval")
	if l := list["refunds"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != r.ID || list["total"] != float64(1) {
		t.Fatalf("list: %v", list)
	}
	if out, err := cli(t, dbURL, "refunds", "approve", r.ID, "--company", co, "--user", "a@saomai.vn"); err == nil || !strings.Contains(err.Error(), "you requested refund") {
		t.Fatalf("the requester approves: %v %s", err, out)
	}
	if _, err := cli(t, dbURL, "refunds", "approve", r.ID, "--company", co, "--user", "m@saomai.vn"); err == nil {
		t.Fatal("a Member approves")
	}
	got := cliJSON(t, dbURL, "refunds", "approve", r.ID, "--company", co, "--user", "b@saomai.vn")
	if got["status"] != "pending" || got["instructions"] == nil {
		t.Fatalf("approved: %v", got)
	}
	out, err := cli(t, dbURL, "refunds", "show", r.ID, "--company", co)
	if err != nil || !strings.Contains(out, "with the memo "+r.Reference) || !strings.Contains(out, "VietQR: 000201") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	// Test mode is apart.
	if _, err := cli(t, dbURL, "refunds", "show", r.ID, "--company", co, "--test"); err == nil {
		t.Fatal("the test tenant sees a live refund")
	}
	sim := cliJSON(t, dbURL, "simulate", "refund-settlement", r.ID, "--company", co)
	if sim["refund"].(map[string]any)["status"] != "succeeded" || sim["transaction"].(map[string]any)["duplicate"] != false {
		t.Fatalf("simulated: %v", sim)
	}
	if sim = cliJSON(t, dbURL, "simulate", "refund-settlement", r.ID, "--company", co); sim["transaction"].(map[string]any)["duplicate"] != true {
		t.Fatalf("simulated twice: %v", sim)
	}
	if _, err := cli(t, dbURL, "refunds", "cancel", r.ID, "--company", co, "--user", "m@saomai.vn"); err == nil || !strings.Contains(err.Error(), "is succeeded") {
		t.Fatalf("cancel a settled refund: %v", err)
	}
	// Reject and cancel.
	cliJSON(t, dbURL, "refunds", "threshold", "--company", co, "--set", "30000", "--user", "b@saomai.vn")
	r2, err := db.CreateRefund(ctx, recon.LiveTenant(companyID), &recon.RefundRequest{TransactionID: tx, Amount: 40_000, Reason: "x",
		Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0011002", AccountName: "A"}, By: recon.RefundActor{ClientID: "shop"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := cliJSON(t, dbURL, "refunds", "reject", r2.ID, "--company", co, "--user", "a@saomai.vn"); got["status"] != "rejected" {
		t.Fatalf("rejected: %v", got)
	}
	r3, err := db.CreateRefund(ctx, recon.LiveTenant(companyID), &recon.RefundRequest{TransactionID: tx, Amount: 1_000, Reason: "x",
		Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0011002", AccountName: "A"}, By: recon.RefundActor{ClientID: "shop"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := cliJSON(t, dbURL, "refunds", "cancel", r3.ID, "--company", co, "--user", "m@saomai.vn"); got["status"] != "cancelled" {
		t.Fatalf("cancelled: %v", got)
	}

	// An exception resolved as a refund with a receiver creates one.
	var accountID int64
	fmt.Sscan(account, &accountID)
	if err := db.CreateOrder(ctx, &recon.Order{CompanyID: companyID, InvoiceNumber: "INV-1", PaymentCode: "DH99991", Amount: 10, BankAccountID: accountID}); err != nil {
		t.Fatal(err)
	}
	stray := fmt.Sprint(cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", account, "--amount", "25000", "--content", "chuyen nham")["id"])
	res := cliJSON(t, dbURL, "exceptions", "resolve", stray, "--company", co, "--refund", "--note", "not ours", "--user", "a@saomai.vn",
		"--receiver-bin", "970436", "--receiver-account", "0011003", "--receiver-name", "TRAN THI B")
	id, _ := res["refund_id"].(string)
	if got := cliJSON(t, dbURL, "refunds", "show", id, "--company", co); got["amount"] != float64(25000) || got["reason"] != "not ours" {
		t.Fatalf("the resolution's refund: %v (resolution %v)", got, res)
	}
}

// TestRefundsEndToEnd: on a real server with a real receiver, on both
// engines, without a payout connector (a live company, even on a sandbox
// server): a shop's server requests a full refund of one order and a
// partial one of another through API v2; a statement upload carrying both
// outgoing transfers (the partial one twice) settles each once; the
// merchant's endpoint receives REFUND_SUCCEEDED for each, signed; the
// second copy is a refund_transfer exception.
func TestRefundsEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		cliJSON(t, dbURL, "ipn", "set", "--company", m.company, "--url", rc.URL+"/ipn", "--auth-type", "SECRET_KEY", "--secret", "ipn-secret-0123456789",
			"--sandbox", "--allow-private-targets", "--notification-types", "ORDER_PAID,REFUND_SUCCEEDED,REFUND_FAILED")
		client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "shop server", "--scopes", "refund:read refund:write transaction:read")["client_id"].(string)
		shop := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "", "--scopes", "refund:read refund:write transaction:read")["access_token"].(string)

		full, part := m.checkout(t, "INV-1", 150000), m.checkout(t, "INV-2", 80000)
		m.pay(t, full, 150000)
		m.pay(t, part, 80000)
		testkit.WaitFor(t, "ORDER_PAID", 10*time.Second, func() bool { return len(rc.IPNs("ORDER_PAID")) == 2 })
		// The paying transactions, by memo.
		db := dbtest.OpenURL(t, dbURL)
		var companyID int64
		fmt.Sscan(m.company, &companyID)
		txs, _, err := db.Transactions(context.Background(), recon.LiveTenant(companyID), recon.TransactionFilter{Page: 1, Limit: 10})
		if err != nil || len(txs) != 2 {
			t.Fatalf("transactions: %v %v", txs, err)
		}
		paidBy := map[string]int64{}
		for _, x := range txs {
			paidBy[x.Code] = x.ID
		}
		receiver := `"receiver":{"bank_bin":"970436","account_number":"0071000999999","account_name":"NGUYEN VAN A"}`
		request := func(txID int64, key, body string) map[string]any {
			auth := func(r *http.Request) { testkit.Bearer(shop)(r); r.Header.Set("X-Idempotency-Key", key) }
			status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/v2/transactions/%d/refund", base, txID), auth, "application/json", body)
			if status != 201 {
				t.Fatalf("refund: %d %s", status, raw)
			}
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			return v["data"].(map[string]any)
		}
		r1 := request(paidBy[full], "full-1", `{"reason":"hủy đơn",`+receiver+`}`)
		r2 := request(paidBy[part], "part-1", `{"amount":30000,"reason":"thiếu hàng",`+receiver+`}`)
		if r1["amount"] != float64(150000) || r1["status"] != "pending" || r1["instructions"] == nil || r2["amount"] != float64(30000) {
			t.Fatalf("refunds: %v %v", r1, r2)
		}

		ict := time.FixedZone("ICT", 7*3600)
		day := time.Now().In(ict).Format("2006-01-02")
		csv := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n" +
			day + " 00:10:00,0,150000,IBFT " + r1["reference"].(string) + " NGUYEN VAN A,OUT1\n" +
			day + " 00:11:00,0,30000,HOAN TIEN " + r2["reference"].(string) + ",OUT2\n" +
			day + " 00:12:00,0,30000,HOAN TIEN " + r2["reference"].(string) + " LAN 2,OUT3\n" // another memo: not a possible duplicate of OUT2
		if status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%s/statements?format=csv", base, m.account), testkit.Bearer(m.feedToken), "text/csv", csv); status != 200 {
			t.Fatalf("statement: %d %s", status, raw)
		}
		testkit.WaitFor(t, "REFUND_SUCCEEDED", 10*time.Second, func() bool { return len(rc.IPNs("REFUND_SUCCEEDED")) == 2 })
		for _, ipn := range rc.IPNs("REFUND_SUCCEEDED") {
			tr := ipn["transaction"].(map[string]any)
			if tr["transaction_type"] != "REFUND" || (tr["id"] != r1["id"] && tr["id"] != r2["id"]) {
				t.Fatalf("REFUND_SUCCEEDED: %v", ipn)
			}
		}
		for _, got := range rc.Got() {
			h := got.Header
			if err := delivery.Verify(m.signingSecret, h.Get("X-Recon-Timestamp"), h.Get("X-Recon-Signature"), got.Body, time.Now(), time.Minute); err != nil {
				t.Errorf("signature: %v", err)
			}
		}
		for _, r := range []map[string]any{r1, r2} {
			status, raw := testkit.Do(t, "GET", base+"/v2/refunds/"+r["id"].(string), testkit.Bearer(shop), "", "")
			if status != 200 || !strings.Contains(string(raw), `"status":"succeeded"`) {
				t.Fatalf("refund after the statement: %d %s", status, raw)
			}
		}
		list, _, err := db.Exceptions(context.Background(), recon.LiveTenant(companyID), recon.ExceptionFilter{Kind: recon.ExceptionRefundTransfer, Limit: 10})
		if err != nil || len(list) != 1 || list[0].Transaction.ReferenceNumber != "OUT3" {
			t.Fatalf("the second transfer: %+v %v", list, err)
		}
	})
}

// TestSandboxRefundEndToEnd: in test mode on a real server the sandbox
// payout connector takes a refund at once and, a moment later, the
// server's loop sends it through ingestion: succeeded; a documented
// receiver fails.
func TestSandboxRefundEndToEnd(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	base, _, _ := startServer(t, dbURL)
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
	account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--test", "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")["id"])
	client := cliJSON(t, dbURL, "client", "create", "--company", co, "--test", "--name", "shop (test)", "--scopes", "transaction:write refund:read refund:write")["client_id"].(string)
	token := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "", "--scopes", "transaction:write refund:read refund:write")["access_token"].(string)
	status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", token, fmt.Sprintf(`{"bank_account_id":%s,"amount":90000,"transaction_content":"chuyen tien"}`, account))
	if status != 200 {
		t.Fatalf("transfer: %d %v", status, body)
	}
	tx := int64(body["data"].(map[string]any)["id"].(float64))
	request := func(key, accountNumber string) string {
		auth := func(r *http.Request) { testkit.Bearer(token)(r); r.Header.Set("X-Idempotency-Key", key) }
		status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/v2/transactions/%d/refund", base, tx), auth, "application/json",
			`{"amount":30000,"reason":"x","receiver":{"bank_bin":"970436","account_number":"`+accountNumber+`","account_name":"A"}}`)
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil || status != 201 || v["data"].(map[string]any)["status"] != "processing" {
			t.Fatalf("refund: %d %s", status, raw)
		}
		return v["data"].(map[string]any)["id"].(string)
	}
	ok, failing := request("ok", "0071000999999"), request("fails", "000000000001")
	statusOf := func(id string) map[string]any {
		status, body := testkit.Call(t, "GET", base+"/v2/refunds/"+id, token, "")
		if status != 200 {
			t.Fatalf("refund %s: %d %v", id, status, body)
		}
		return body["data"].(map[string]any)
	}
	testkit.WaitFor(t, "the sandbox's payouts", 30*time.Second, func() bool {
		return statusOf(ok)["status"] == "succeeded" && statusOf(failing)["status"] == "failed"
	})
	if f := statusOf(failing); f["failure_reason"] != "the receiving account does not exist" {
		t.Fatalf("failed: %v", f)
	}
}

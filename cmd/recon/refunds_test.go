package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestRefundsCommands: `recon refunds list|show|approve|reject|cancel|
// threshold` and `recon simulate refund-settlement` act through the refunds
// service as the named user: four eyes hold, the settlement goes through
// ingestion, and test mode is apart.
func TestRefundsCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := dbtest.NewURL(t, "sqlite")
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

package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"recon"
)

// linkAccount links an MBBank account for the customer through the page's
// steps, as the hosted page does, and returns its bank account id and xid.
func linkAccount(t *testing.T, s recon.Store, tenant recon.TenantID, customerXID, number string) (int64, string) {
	t.Helper()
	lt := newLinkToken(t, s, tenant, customerXID, time.Hour)
	hash := recon.HashLinkToken(lt.Token)
	_, sess, err := s.StepLinkSession(t.Context(), hash, recon.LinkStep{Kind: recon.StepOpen})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []recon.LinkStep{
		{Kind: recon.StepPickBank, BankCode: "MB", BrandName: "MBBank", AccountType: recon.AccountIndividual},
		{Kind: recon.StepDetails, BrandName: "MBBank", AccountNumber: number, Challenge: &recon.LinkChallenge{HolderName: "NGUYEN VAN AN", Ref: "r", OTPLength: 8}},
		{Kind: recon.StepLinkOTP, BrandName: "MBBank", OTPOK: true},
	} {
		st.SessionXID = sess.XID
		if _, sess, err = s.StepLinkSession(t.Context(), hash, st); err != nil {
			t.Fatalf("%s: %v", st.Kind, err)
		}
	}
	if sess.Status != recon.LinkSessionCompleted || sess.BankAccountID == 0 {
		t.Fatalf("session: %+v", sess)
	}
	return sess.BankAccountID, sess.BankAccountXID
}

// testHubBalanceChanges: every transaction stored on a linked account
// enqueues the balance-change notification in ingestion's transaction, when
// the merchant has an active hub IPN target; others enqueue none.
func testHubBalanceChanges(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1, format("DH"))
	if _, err := s.UpdateCompany(ctx, co.ID, func(c *recon.Company) error { c.Config.Paycode = true; return nil }); err != nil {
		t.Fatal(err)
	}
	cu := newHubCustomer(t, s, co.Tenant(), "Khách A")
	linkedID, linkedXID := linkAccount(t, s, co.Tenant(), cu.XID, "0123456789")
	plain := &recon.BankAccount{CompanyID: co.ID, BankName: "ACB", AccountNumber: "777"}
	if err := s.CreateBankAccount(ctx, plain); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	ingest := func(ref string, account int64, in, out int64) {
		t.Helper()
		if _, err := recon.Ingest(ctx, s, co.Tenant(), day, []recon.TransactionInput{{BankAccountID: account, TransactionDate: day,
			AmountIn: in, AmountOut: out, Content: "thanh toan DH12345", ReferenceNumber: ref}}); err != nil {
			t.Fatal(err)
		}
	}
	ingest("NOTARGET", linkedID, 1000, 0) // no hub IPN target: nothing
	if err := s.SetHubIPN(ctx, co.Tenant(), &recon.Target{URL: "https://shop.example.vn/hub-ipn", AuthType: recon.AuthSecretKey, Active: true}); err != nil {
		t.Fatal(err)
	}
	ingest("FT1", linkedID, 150000, 0)
	ingest("FT2", linkedID, 0, 50000)
	ingest("FT3", plain.ID, 5, 0) // not linked: nothing
	list, err := s.Deliveries(ctx, co.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryHubIPN})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d balance-change notifications, want 2", len(list))
	}
	var b recon.BalanceChange
	if err := json.Unmarshal(list[1].Payload, &b); err != nil {
		t.Fatal(err)
	}
	code := "DH12345"
	want := recon.BalanceChange{Gateway: "MBBank", TransactionDate: "2026-11-20 09:30:00", AccountNumber: "0123456789",
		BankAccountXID: linkedXID, PaymentCode: &code, Content: "thanh toan DH12345", TransferType: "credit", Amount: 150000,
		ReferenceCode: "FT1", Accumulated: 151000, TransactionID: b.TransactionID}
	diff(t, "FT1's notification", want, b)
	if b.TransactionID == 0 || list[1].Event != recon.BalanceChangeEvent {
		t.Fatalf("delivery: %+v", list[1])
	}
	if err := json.Unmarshal(list[0].Payload, &b); err != nil || b.TransferType != "debit" || b.Amount != 50000 || b.Accumulated != 101000 {
		t.Fatalf("FT2's notification: %+v %v", b, err)
	}
	// A batch on both accounts: the linked account's row alone is notified,
	// with that account's details.
	if _, err := recon.Ingest(ctx, s, co.Tenant(), day, []recon.TransactionInput{
		{BankAccountID: plain.ID, TransactionDate: day, AmountIn: 7, Content: "x", ReferenceNumber: "MIX1"},
		{BankAccountID: linkedID, TransactionDate: day, AmountIn: 9, Content: "y", ReferenceNumber: "MIX2"},
	}); err != nil {
		t.Fatal(err)
	}
	if list, _ = s.Deliveries(ctx, co.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryHubIPN}); len(list) != 3 {
		t.Fatalf("mixed batch: %d notifications, want 3", len(list))
	}
	if err := json.Unmarshal(list[0].Payload, &b); err != nil || b.ReferenceCode != "MIX2" || b.AccountNumber != "0123456789" || b.BankAccountXID != linkedXID {
		t.Fatalf("mixed batch's notification: %+v %v", b, err)
	}
	// An inactive target sends nothing more.
	if err := s.SetHubIPN(ctx, co.Tenant(), &recon.Target{URL: "https://shop.example.vn/hub-ipn", AuthType: recon.AuthSecretKey}); err != nil {
		t.Fatal(err)
	}
	ingest("FT4", linkedID, 1, 0)
	if list, _ = s.Deliveries(ctx, co.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryHubIPN}); len(list) != 3 {
		t.Fatalf("inactive target: %d notifications", len(list))
	}
}

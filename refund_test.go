package recon_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"recon"
)

var refundNow = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func day(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }

var receiver = recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0071000123456", AccountName: "NGUYEN VAN A"}

// TestNextRefund walks every event from every status: the transition table
// of docs/api-v2.md, Refunds, and invalid_state for everything else.
func TestNextRefund(t *testing.T) {
	want := map[recon.RefundEvent]map[string]string{
		recon.RefundApprove: {recon.RefundPendingApproval: recon.RefundPending},
		recon.RefundReject:  {recon.RefundPendingApproval: recon.RefundRejected},
		recon.RefundCancel:  {recon.RefundPendingApproval: recon.RefundCancelled, recon.RefundPending: recon.RefundCancelled},
		recon.RefundSend:    {recon.RefundPending: recon.RefundProcessing},
		recon.RefundSettle:  {recon.RefundPending: recon.RefundSucceeded, recon.RefundProcessing: recon.RefundSucceeded},
		recon.RefundFail:    {recon.RefundProcessing: recon.RefundFailed},
	}
	requester := recon.RefundActor{UserID: 1, Email: "a@shop.vn"}
	approver := recon.RefundActor{UserID: 2, Email: "b@shop.vn"}
	for ev, moves := range want {
		for _, from := range recon.RefundStatuses {
			r := &recon.Refund{ID: "r1", Status: from, RequestedBy: requester, Amount: 5}
			before := *r
			got, err := recon.NextRefund(r, recon.RefundChange{Event: ev, By: approver, SettledBy: 9, Payout: "sandbox", Reason: "account closed"}, refundNow)
			if !cmp.Equal(*r, before) {
				t.Fatalf("NextRefund changed its argument")
			}
			to, ok := moves[from]
			if ok != recon.RefundAllows(from, ev) {
				t.Errorf("RefundAllows(%s, %s) = %v", from, ev, !ok)
			}
			if !ok {
				if recon.RefundRule(err) != recon.RuleInvalidState {
					t.Errorf("%s from %s: %v, want invalid_state", ev, from, err)
				}
				continue
			}
			if err != nil || got.Status != to || !got.UpdatedAt.Equal(refundNow) {
				t.Errorf("%s from %s: %+v %v, want %s", ev, from, got, err, to)
				continue
			}
			switch ev {
			case recon.RefundApprove, recon.RefundReject:
				if got.DecidedBy != (recon.RefundActor{UserID: 2, Email: "b@shop.vn"}) {
					t.Errorf("%s: decided by %+v", ev, got.DecidedBy)
				}
			case recon.RefundSettle:
				if got.SettledTransactionID != 9 {
					t.Errorf("settled by %d", got.SettledTransactionID)
				}
			case recon.RefundSend:
				if got.Payout != "sandbox" {
					t.Errorf("payout %q", got.Payout)
				}
			case recon.RefundFail:
				if got.FailureReason != "account closed" {
					t.Errorf("failure reason %q", got.FailureReason)
				}
			}
		}
	}
	// Holding: exactly the three waiting states and succeeded.
	for _, s := range recon.RefundStatuses {
		holds := s == recon.RefundPendingApproval || s == recon.RefundPending || s == recon.RefundProcessing || s == recon.RefundSucceeded
		if recon.RefundHolds(s) != holds {
			t.Errorf("RefundHolds(%s) = %v", s, !holds)
		}
	}
	_, err := recon.NextRefund(&recon.Refund{Status: recon.RefundPending}, recon.RefundChange{Event: "explode"}, refundNow)
	if recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown event: %v", err)
	}
	msg := recon.ErrorMessage(func() error {
		_, err := recon.NextRefund(&recon.Refund{ID: "r9", Status: recon.RefundSucceeded}, recon.RefundChange{Event: recon.RefundCancel}, refundNow)
		return err
	}())
	if msg != "refund r9 is succeeded: it cannot cancel (its money has left)" {
		t.Errorf("message %q", msg)
	}
}

// TestRefundFourEyes: approving and rejecting need a person other than the
// requester; a user is the same person through any client.
func TestRefundFourEyes(t *testing.T) {
	waiting := func(by recon.RefundActor) *recon.Refund {
		return &recon.Refund{ID: "r1", Status: recon.RefundPendingApproval, RequestedBy: by}
	}
	alice := recon.RefundActor{UserID: 1, Email: "alice@shop.vn", ClientID: "dashboard"}
	aliceOtherClient := recon.RefundActor{UserID: 1, Email: "alice@shop.vn", ClientID: "cli"}
	bob := recon.RefundActor{UserID: 2, Email: "bob@shop.vn", ClientID: "dashboard"}
	server := recon.RefundActor{ClientID: "shop-server"}
	for _, c := range []struct {
		name   string
		r      *recon.Refund
		by     recon.RefundActor
		wantOK bool
	}{
		{"another admin", waiting(alice), bob, true},
		{"the requester", waiting(alice), alice, false},
		{"the requester through another client", waiting(alice), aliceOtherClient, false},
		{"a client-credentials token", waiting(alice), server, false},
		{"requested by the shop's server, approved by a person", waiting(server), alice, true},
	} {
		for _, ev := range []recon.RefundEvent{recon.RefundApprove, recon.RefundReject} {
			_, err := recon.NextRefund(c.r, recon.RefundChange{Event: ev, By: c.by}, refundNow)
			if (err == nil) != c.wantOK {
				t.Errorf("%s %s: %v", c.name, ev, err)
			}
			if err != nil && recon.ErrorCode(err) != recon.EFORBIDDEN {
				t.Errorf("%s %s: code %s", c.name, ev, recon.ErrorCode(err))
			}
		}
	}
	// The caller's actor: the user when there is one, whatever the client.
	u := &recon.User{ID: 7, Email: "u@shop.vn", Role: recon.RoleAdmin}
	if got := recon.ActorOf(&recon.Caller{ClientID: "c1", User: u}); got != (recon.RefundActor{UserID: 7, Email: "u@shop.vn", ClientID: "c1"}) {
		t.Errorf("ActorOf user: %+v", got)
	}
	if got := recon.ActorOf(&recon.Caller{ClientID: "c2"}); got != (recon.RefundActor{ClientID: "c2"}) {
		t.Errorf("ActorOf client: %+v", got)
	}
}

func source(id int64, d int, in, refunded int64) recon.RefundSource {
	return recon.RefundSource{TransactionID: id, BankAccountID: 100 + id, TransactionDate: day(d), AmountIn: in, Refunded: refunded}
}

// TestNewRefund: every 422 rule with its message, the amounts, the
// allocation newest first, and four eyes at the threshold.
func TestNewRefund(t *testing.T) {
	order := func(paid, refunded int64) *recon.Order {
		return &recon.Order{ID: 5, CompanyID: 3, InvoiceNumber: "INV-5", PaidAmount: paid, RefundedAmount: refunded}
	}
	byOrder := func(amount int64) *recon.RefundRequest {
		return &recon.RefundRequest{OrderID: 5, Amount: amount, Reason: "returned", Receiver: receiver, By: recon.RefundActor{ClientID: "c"}}
	}
	byTx := func(amount int64) *recon.RefundRequest {
		return &recon.RefundRequest{TransactionID: 11, Amount: amount, Reason: "returned", Receiver: receiver, By: recon.RefundActor{ClientID: "c"}}
	}
	noReceiver := byOrder(0)
	noReceiver.Receiver = recon.RefundReceiver{}
	two := []recon.RefundSource{source(11, 1, 40_000, 0), source(12, 2, 60_000, 0)}
	for _, c := range []struct {
		name   string
		in     *recon.RefundRequest
		plan   recon.RefundPlan
		rule   string
		msg    string
		amount int64
		status string
		alloc  []recon.RefundAllocation
		acct   int64
	}{
		{name: "not paid", in: byOrder(0), plan: recon.RefundPlan{Order: order(0, 0)},
			rule: recon.RuleNothingToRefund, msg: "order INV-5 has received no money: there is nothing to refund"},
		{name: "outgoing transaction", in: byTx(0), plan: recon.RefundPlan{Sources: []recon.RefundSource{source(11, 1, 0, 0)}},
			rule: recon.RuleNothingToRefund, msg: "transaction 11 has received no money: there is nothing to refund"},
		{name: "all refunded", in: byOrder(0), plan: recon.RefundPlan{Order: order(100_000, 100_000), Sources: []recon.RefundSource{source(11, 1, 40_000, 40_000), source(12, 2, 60_000, 60_000)}},
			rule: recon.RuleAlreadyRefunded, msg: "order INV-5 is already refunded: refunds hold everything it received"},
		{name: "too much", in: byOrder(70_001), plan: recon.RefundPlan{Order: order(100_000, 30_000), Sources: []recon.RefundSource{source(11, 1, 40_000, 0), source(12, 2, 60_000, 30_000)}},
			rule: recon.RuleAmountExceedsRefundable, msg: "amount 70001 VND exceeds what order INV-5 has left to refund, 70000 VND"},
		{name: "too much of a transaction", in: byTx(40_001), plan: recon.RefundPlan{Sources: two[:1]},
			rule: recon.RuleAmountExceedsRefundable, msg: "amount 40001 VND exceeds what transaction 11 has left to refund, 40000 VND"},
		{name: "no receiver", in: noReceiver, plan: recon.RefundPlan{Order: order(100_000, 0), Sources: two},
			rule: recon.RuleReceiverRequired, msg: "receiver is required: the bank data of order INV-5 does not say whose account the money came from"},
		{name: "everything, newest first", in: byOrder(0), plan: recon.RefundPlan{Order: order(100_000, 0), Sources: two},
			amount: 100_000, status: recon.RefundPending, alloc: []recon.RefundAllocation{{12, 60_000}, {11, 40_000}}, acct: 112},
		{name: "partial, from the newest", in: byOrder(70_000), plan: recon.RefundPlan{Order: order(100_000, 0), Sources: two},
			amount: 70_000, status: recon.RefundPending, alloc: []recon.RefundAllocation{{12, 60_000}, {11, 10_000}}, acct: 112},
		{name: "what is left after refunds", in: byOrder(0), plan: recon.RefundPlan{Order: order(100_000, 65_000), Sources: []recon.RefundSource{source(11, 1, 40_000, 5_000), source(12, 2, 60_000, 60_000)}},
			amount: 35_000, status: recon.RefundPending, alloc: []recon.RefundAllocation{{11, 35_000}}, acct: 111},
		{name: "the order bounds its transactions", in: byOrder(0), plan: recon.RefundPlan{Order: order(50_000, 0), Sources: two},
			amount: 50_000, status: recon.RefundPending, alloc: []recon.RefundAllocation{{12, 50_000}}, acct: 112},
		{name: "below the threshold", in: byOrder(49_999), plan: recon.RefundPlan{Order: order(100_000, 0), Sources: two, Threshold: 50_000},
			amount: 49_999, status: recon.RefundPending, alloc: []recon.RefundAllocation{{12, 49_999}}, acct: 112},
		{name: "at the threshold", in: byOrder(50_000), plan: recon.RefundPlan{Order: order(100_000, 0), Sources: two, Threshold: 50_000},
			amount: 50_000, status: recon.RefundPendingApproval, alloc: []recon.RefundAllocation{{12, 50_000}}, acct: 112},
	} {
		r, err := recon.NewRefund(c.in, &c.plan)
		if c.rule != "" {
			if recon.RefundRule(err) != c.rule || recon.ErrorMessage(err) != c.msg {
				t.Errorf("%s: %v, want %s %q", c.name, err, c.rule, c.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Amount != c.amount || r.Status != c.status || !cmp.Equal(r.Allocations, c.alloc) || r.BankAccountID != c.acct {
			t.Errorf("%s: %d %s %v account %d, want %d %s %v %d", c.name, r.Amount, r.Status, r.Allocations, r.BankAccountID, c.amount, c.status, c.alloc, c.acct)
		}
	}
}

func TestRefundRequestValidate(t *testing.T) {
	ok := func() *recon.RefundRequest {
		return &recon.RefundRequest{OrderID: 1, Reason: " returned ", Receiver: receiver, By: recon.RefundActor{ClientID: "c"}}
	}
	in := ok()
	if err := in.Validate(); err != nil || in.Reason != "returned" {
		t.Fatalf("%v %q", err, in.Reason)
	}
	for _, c := range []struct {
		field string
		edit  func(*recon.RefundRequest)
	}{
		{"", func(r *recon.RefundRequest) { r.TransactionID = 2 }},
		{"", func(r *recon.RefundRequest) { r.OrderID = 0 }},
		{"amount", func(r *recon.RefundRequest) { r.Amount = -1 }},
		{"amount", func(r *recon.RefundRequest) { r.Amount = recon.MaxAmount + 1 }},
		{"reason", func(r *recon.RefundRequest) { r.Reason = "  " }},
		{"reason", func(r *recon.RefundRequest) { r.Reason = strings.Repeat("á", 256) }},
		{"reason", func(r *recon.RefundRequest) { r.Reason = "a\x00b" }},
		{"receiver.bank_bin", func(r *recon.RefundRequest) { r.Receiver.BankBIN = "97043" }},
		{"receiver.account_number", func(r *recon.RefundRequest) { r.Receiver.AccountNumber = "12-34" }},
		{"receiver.account_number", func(r *recon.RefundRequest) { r.Receiver.AccountNumber = strings.Repeat("1", 20) }},
		{"receiver.account_name", func(r *recon.RefundRequest) { r.Receiver.AccountName = "" }},
		{"", func(r *recon.RefundRequest) { r.By = recon.RefundActor{} }},
	} {
		in := ok()
		c.edit(in)
		err := in.Validate()
		var e *recon.Error
		if !errorsAs(err, &e) || e.Code != recon.EINVALID || (c.field != "" && len(e.Fields[c.field]) == 0) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	// An unknown receiver passes validation: NewRefund asks for it.
	in = ok()
	in.Receiver = recon.RefundReceiver{}
	if err := in.Validate(); err != nil {
		t.Errorf("no receiver: %v", err)
	}
}

func errorsAs(err error, e **recon.Error) bool {
	var ok bool
	if err != nil {
		*e, ok = err.(*recon.Error)
	}
	return ok
}

func TestRefundReferences(t *testing.T) {
	ref := recon.NewRefundReference(bytes.NewReader(bytes.Repeat([]byte{0, 1, 33, 255, 34, 250}, 20)))
	if len(ref) != 12 || !strings.HasPrefix(ref, "HT") || strings.Trim(ref[2:], recon.RefundReferenceAlphabet) != "" {
		t.Fatalf("reference %q", ref)
	}
	// 255 and 250 are past the last whole multiple of the alphabet: skipped.
	if ref != "HT01Z001Z001" {
		t.Fatalf("reference %q, want HT01Z001Z001", ref)
	}
	for memo, want := range map[string][]string{
		"HT7K2M9QX4PA":                           {"HT7K2M9QX4PA"},
		"hoan tien ht7k2m9qx4pa don 5":           {"HT7K2M9QX4PA"},
		"MBVCB.123.HT7K2M9QX4PA.CT tu 0071":      {"HT7K2M9QX4PA"},
		"HT7K2M9QX4P":                            nil, // too short
		"HT7K2M9QX4PI":                           {},  // I is not in the alphabet
		"THANHTOAN HOA DON":                      nil, // HTOAN HOA D: a space
		"HT7K2M9QX4PA HT7K2M9QX4PA HTAAAAAAAAAA": {"HT7K2M9QX4PA", "HTAAAAAAAAAA"},
		"HTHT7K2M9QX4PA":                         {"HTHT7K2M9QX4", "HT7K2M9QX4PA"},
		strings.Repeat("HTAAAAAAAAAAB", 2) + "HT0123456789 HT9876543210 HTZZZZZZZZZZ HTYYYYYYYYYY": {"HTAAAAAAAAAA", "HT0123456789", "HT9876543210", "HTZZZZZZZZZZ"}, // at most four
	} {
		got := recon.RefundReferences(memo)
		if !cmp.Equal(got, want, cmpEmpty) {
			t.Errorf("%q: %q, want %q", memo, got, want)
		}
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return strings.Join(a, ",") == strings.Join(b, ",")
})

// TestSettleRefund: what an outgoing transfer carrying a reference does.
func TestSettleRefund(t *testing.T) {
	r := func(status string) *recon.Refund {
		return &recon.Refund{Reference: "HT7K2M9QX4PA", Status: status, Amount: 50_000, BankAccountID: 4, SettledTransactionID: map[bool]int64{true: 77}[status == recon.RefundSucceeded]}
	}
	for _, c := range []struct {
		r                *recon.Refund
		tx, acct, amount int64
		outcome, reason  string
	}{
		{r(recon.RefundPending), 90, 4, 50_000, recon.RefundSettled, ""},
		{r(recon.RefundProcessing), 90, 4, 50_000, recon.RefundSettled, ""},
		{r(recon.RefundSucceeded), 77, 4, 50_000, "", ""},
		{r(recon.RefundSucceeded), 90, 4, 50_000, recon.RefundTransferException, "refund HT7K2M9QX4PA was already settled by transaction 77: this second transfer of 50000 VND went out too"},
		{r(recon.RefundCancelled), 90, 4, 50_000, recon.RefundTransferException, "refund HT7K2M9QX4PA is cancelled, yet 50000 VND went out with its reference"},
		{r(recon.RefundPendingApproval), 90, 4, 50_000, recon.RefundTransferException, "refund HT7K2M9QX4PA still waits for approval, yet 50000 VND went out with its reference"},
		{r(recon.RefundPending), 90, 4, 49_999, recon.RefundTransferException, "refund HT7K2M9QX4PA is 50000 VND, but the transfer with its reference sent 49999 VND"},
		{r(recon.RefundPending), 90, 5, 50_000, recon.RefundTransferException, "refund HT7K2M9QX4PA leaves from bank account 4, but the transfer with its reference left bank account 5"},
	} {
		outcome, reason := recon.SettleRefund(c.r, c.tx, c.acct, c.amount)
		if outcome != c.outcome || reason != c.reason {
			t.Errorf("%s tx %d: %q %q, want %q %q", c.r.Status, c.tx, outcome, reason, c.outcome, c.reason)
		}
	}
}

func TestRefundInstructions(t *testing.T) {
	r := &recon.Refund{Status: recon.RefundPending, BankAccountID: 4, Amount: 50_000, Reference: "HT7K2M9QX4PA", Receiver: receiver}
	got := recon.InstructionsOf(r)
	qr, _ := recon.VietQR{BIN: "970436", Account: "0071000123456", Amount: 50_000, Purpose: "HT7K2M9QX4PA"}.Payload()
	want := &recon.RefundInstructions{BankAccountID: 4, Receiver: receiver, Amount: 50_000, Memo: "HT7K2M9QX4PA", QR: qr}
	if !cmp.Equal(got, want) || qr == "" {
		t.Fatalf("%+v, want %+v", got, want)
	}
	r.Payout = "sandbox"
	if recon.InstructionsOf(r) != nil {
		t.Error("instructions for a refund a connector sends")
	}
	r.Payout, r.Status = "", recon.RefundPendingApproval
	if recon.InstructionsOf(r) != nil {
		t.Error("instructions for a refund waiting for approval")
	}
}

func TestRefundIPNDelivery(t *testing.T) {
	at := time.Date(2026, 11, 26, 17, 30, 0, 0, time.UTC)
	// The outgoing transfer's date, a wall clock (recon.WallClock), not the
	// moment the notification is made.
	date := time.Date(2026, 11, 26, 16, 5, 9, 0, time.UTC)
	r := &recon.Refund{ID: "0b6f3c1e-8d2a-4c55-9a1e-2f4d6b8c0a11", CompanyID: 3, OrderID: 5, Amount: 50_000, Reference: "HT7K2M9QX4PA"}
	o := &recon.Order{ID: 5, CompanyID: 3, InvoiceNumber: "INV-5", OrderID: "A-5", Status: recon.OrderCaptured, Amount: 100_000, Currency: "VND", CustomData: `[{"k":"v"}]`, CustomDataSigned: true, CustomerID: "cu1"}
	d, err := recon.RefundIPNDelivery(r, o, recon.IPNRefundSucceeded, date, at)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp":1795714200,"notification_type":"REFUND_SUCCEEDED","order":{"id":"5","order_id":"A-5","order_status":"CAPTURED","order_currency":"VND","order_amount":"100000.00","order_invoice_number":"INV-5","custom_data":[{"k":"v"}],"custom_data_signed":true,"user_agent":"","ip_address":"","order_description":""},"transaction":{"id":"0b6f3c1e-8d2a-4c55-9a1e-2f4d6b8c0a11","payment_method":"BANK_TRANSFER","transaction_id":"HT7K2M9QX4PA","transaction_type":"REFUND","transaction_date":"2026-11-26 16:05:09","transaction_status":"APPROVED","transaction_amount":"50000.00","transaction_currency":"VND","authentication_status":"AUTHENTICATION_NOT_NEEDED","card_number":"","card_holder_name":"","card_expiry":"","card_funding_method":"","card_brand":""},"customer":{"id":"cu1","customer_id":"cu1"}}`
	if string(d.Payload) != want || d.Event != recon.IPNRefundSucceeded || d.OrderID != 5 || d.CompanyID != 3 || d.Kind != recon.DeliveryIPN {
		t.Fatalf("%+v\n%s", d, d.Payload)
	}
	r.OrderID = 0
	d, err = recon.RefundIPNDelivery(r, nil, recon.IPNRefundFailed, at, at)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Order       map[string]any
		Transaction map[string]any
	}
	if err := json.Unmarshal(d.Payload, &body); err != nil || body.Transaction["transaction_status"] != "FAILED" || body.Order["id"] != "" || d.OrderID != 0 {
		t.Fatalf("%s %v", d.Payload, err)
	}
	if _, err := recon.RefundIPNDelivery(r, nil, recon.IPNOrderPaid, at, at); err == nil {
		t.Fatal("an ORDER_PAID refund IPN")
	}
}

// refundModel is the pure rules run over an order's life: payments come in,
// refunds are requested by order or by one of its transactions, approved,
// sent, settled, failed, cancelled. The store keeps the same sums under its
// locks; this checks the arithmetic they rely on.
type refundModel struct {
	order   recon.Order
	sources []recon.RefundSource
	refunds []*recon.Refund
}

func (m *refundModel) plan(byTx int64) *recon.RefundPlan {
	p := &recon.RefundPlan{Order: &m.order, Threshold: 70}
	for _, s := range m.sources {
		if byTx == 0 || s.TransactionID == byTx {
			p.Sources = append(p.Sources, s)
		}
	}
	return p
}

// apply records a refund's allocations (sign +1) or frees them (-1).
func (m *refundModel) apply(r *recon.Refund, sign int64) {
	for _, a := range r.Allocations {
		for i := range m.sources {
			if m.sources[i].TransactionID == a.TransactionID {
				m.sources[i].Refunded += sign * a.Amount
			}
		}
	}
	m.order.RefundedAmount += sign * r.Amount
}

func TestRefundProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &refundModel{order: recon.Order{ID: 1, InvoiceNumber: "INV-1"}}
		nextTx := int64(0)
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 5).Draw(t, "action") {
			case 0: // a payment
				nextTx++
				amount := rapid.Int64Range(1, 100).Draw(t, "paid")
				m.sources = append(m.sources, recon.RefundSource{TransactionID: nextTx, BankAccountID: 1 + nextTx%2,
					TransactionDate: day(1 + int(rapid.IntRange(0, 20).Draw(t, "day"))), AmountIn: amount})
				m.order.PaidAmount += amount
			case 1: // a refund, by order or by one transaction
				in := &recon.RefundRequest{OrderID: 1, Amount: rapid.Int64Range(0, 150).Draw(t, "amount"), Reason: "r", Receiver: receiver,
					By: recon.RefundActor{UserID: 1}}
				var byTx int64
				if len(m.sources) > 0 && rapid.Bool().Draw(t, "by transaction") {
					byTx = m.sources[rapid.IntRange(0, len(m.sources)-1).Draw(t, "tx")].TransactionID
					in.OrderID, in.TransactionID = 0, byTx
				}
				p := m.plan(byTx)
				refundable := p.Refundable()
				r, err := recon.NewRefund(in, p)
				if err != nil {
					rule := recon.RefundRule(err)
					switch {
					case rule == recon.RuleNothingToRefund && (m.order.PaidAmount == 0 || byTx != 0 && len(p.Sources) == 0):
					case rule == recon.RuleAlreadyRefunded && refundable == 0:
					case rule == recon.RuleAmountExceedsRefundable && in.Amount > refundable:
					default:
						t.Fatalf("refused %+v with %v; refundable %d", in, err, refundable)
					}
					continue
				}
				var sum int64
				for _, a := range r.Allocations {
					sum += a.Amount
				}
				if sum != r.Amount || r.Amount > refundable || (in.Amount == 0 && r.Amount != refundable) {
					t.Fatalf("refund %d allocated %d, refundable %d", r.Amount, sum, refundable)
				}
				r.ID = string(rune('a' + len(m.refunds)))
				m.refunds = append(m.refunds, r)
				m.apply(r, +1)
			default: // a change to some refund
				if len(m.refunds) == 0 {
					continue
				}
				r := m.refunds[rapid.IntRange(0, len(m.refunds)-1).Draw(t, "refund")]
				ev := rapid.SampledFrom([]recon.RefundEvent{recon.RefundApprove, recon.RefundReject, recon.RefundCancel,
					recon.RefundSend, recon.RefundSettle, recon.RefundFail}).Draw(t, "event")
				n, err := recon.NextRefund(r, recon.RefundChange{Event: ev, By: recon.RefundActor{UserID: 2}, SettledBy: 99}, refundNow)
				if err != nil {
					if recon.RefundAllows(r.Status, ev) {
						t.Fatalf("%s from %s: %v", ev, r.Status, err)
					}
					continue
				}
				if recon.RefundHolds(r.Status) && !recon.RefundHolds(n.Status) {
					m.apply(r, -1)
				}
				*r = *n
			}
			// Every VND accounted for: what came in is what is refundable
			// plus what refunds hold, per transaction and for the order;
			// refunded never exceeds paid.
			var held, paid int64
			for _, s := range m.sources {
				if s.Refunded < 0 || s.Refunded > s.AmountIn {
					t.Fatalf("transaction %d: %d refunded of %d", s.TransactionID, s.Refunded, s.AmountIn)
				}
				paid += s.AmountIn
			}
			for _, r := range m.refunds {
				if recon.RefundHolds(r.Status) {
					held += r.Amount
				}
			}
			if held != m.order.RefundedAmount || paid != m.order.PaidAmount || held > paid ||
				m.plan(0).Refundable()+held != paid {
				t.Fatalf("held %d, order refunded %d, paid %d (order %d), refundable %d", held, m.order.RefundedAmount, paid, m.order.PaidAmount, m.plan(0).Refundable())
			}
		}
	})
}

package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/checkout"
	"recon/linking"
	"recon/orders"
	"recon/sqlstore"
)

// triggerEvent is a notification `recon trigger` knows how to cause, and the
// steps that cause it. The steps are the production code paths: checkout
// through the gateway's service (checkout.Service.Create, what POST
// /v1/checkout/init calls), payment through recon.Ingest (what every bank
// feed and simulated transfer goes through), void through the same service
// (checkout.Service.Void); so the notifications they cause along the way
// fire too. A new event (the hub's LINK_* and BANK_ACCOUNT_* events) is one more
// row of triggerEvents.
type triggerEvent struct {
	Name  string
	About string
	Steps []func(tr *triggerRun, ctx context.Context) error
	// Also are the notification types the steps cause on the way.
	Also []string
}

var triggerEvents = []triggerEvent{
	{
		Name:  recon.IPNOrderPaid,
		About: "an order (checkout) paid in full by a simulated transfer",
		Steps: []func(*triggerRun, context.Context) error{(*triggerRun).checkout, (*triggerRun).pay},
	},
	{
		Name:  recon.IPNTransactionVoid,
		About: "an order paid by a simulated transfer (ORDER_PAID fires too), then voided",
		Steps: []func(*triggerRun, context.Context) error{(*triggerRun).checkout, (*triggerRun).pay, (*triggerRun).void},
		Also:  []string{recon.IPNOrderPaid},
	},
	{
		Name:  recon.IPNOrderPartiallyPaid,
		About: "an API v2 order (partial virtual account) paid in part by a simulated transfer to its account",
		Steps: []func(*triggerRun, context.Context) error{(*triggerRun).partialOrder, (*triggerRun).payPart},
	},
	{
		Name: recon.IPNOrderExpired,
		About: "an API v2 order that expires one second later, unpaid: a running\n" +
			"                        recon serve's sweep (every 15 seconds) expires it and sends ORDER_EXPIRED",
		Steps: []func(*triggerRun, context.Context) error{(*triggerRun).expiringOrder},
	},
}

func findTriggerEvent(name string) (*triggerEvent, error) {
	for i := range triggerEvents {
		if strings.EqualFold(triggerEvents[i].Name, name) {
			return &triggerEvents[i], nil
		}
	}
	names := make([]string, len(triggerEvents))
	for i, e := range triggerEvents {
		names[i] = e.Name
	}
	return nil, fmt.Errorf("unknown event %q: recon trigger knows %s", name, strings.Join(names, ", "))
}

func triggerHelp() string {
	var b strings.Builder
	for _, e := range triggerEvents {
		fmt.Fprintf(&b, "  %-21s %s\n", e.Name, e.About)
	}
	return b.String()
}

func newTriggerCmd(a *app) *cobra.Command {
	var (
		companyID, accountID, amount int64
	)
	cmd := &cobra.Command{
		Use:   "trigger EVENT",
		Short: "Cause a notification in a company's test mode, with the real objects behind it",
		Long: `Create, in the company's test mode, the real objects that make the notification
EVENT happen, through the code paths of production: an order through the
gateway's checkout, a simulated transfer through the ingestion pipeline that
pays it, a void through the gateway. Notifications the steps cause on the way
fire too (TRANSACTION_VOID pays the order first, so ORDER_PAID fires as well).
They go to the test-mode IPN URL, or, without one, wait in the test outbox for
recon listen. Live data is never touched: only test-mode bank accounts are used.
ORDER_PARTIALLY_PAID and ORDER_EXPIRED make an API v2 order with its virtual account
(orders.Service, what POST /v2/orders calls). A notification goes only to a target
that subscribes to its type (recon ipn set --notification-types): an event the active
test-mode IPN target does not subscribe to is refused before anything is made.

Events:
` + triggerHelp() + `
and the 13 hub events (` + strings.Join(recon.HubEvents, ", ") + `):
the hosted link page is driven in-process as a customer's browser drives it, for
the merchant's company "Recon trigger (sandbox)" with the sandbox banks, so the
events on the way fire too (BANK_ACCOUNT_LINKED with its state changes and
LINK_SESSION_COMPLETED; an unlink links an account first when none is linked).
LINK_TOKEN_EXPIRED and LINK_SESSION_EXPIRED come from a token that lives one
second: a running recon serve's sweep (every 15 seconds) ends it. A transfer to a
linked account (--bank-account) also sends the balance change to the hub IPN.

The transfer goes to --bank-account (a test-mode account of the company), by
default the test mode's first account; a company without one gets a sandbox
account. The company needs payment codes on with an active format (checkout
refuses orders it could never match otherwise).`,
		Example: `  recon trigger ORDER_PAID --company 1
  recon trigger TRANSACTION_VOID --company 1 --amount 250000 --json
  recon trigger ORDER_PARTIALLY_PAID --company 1
  recon trigger BANK_ACCOUNT_LINKED --company 1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name := strings.ToUpper(args[0]); slices.Contains(recon.HubEvents, name) || name == "BANK_ACCOUNT_INACTIVED" {
				return a.triggerHub(cmd.Context(), companyID, name)
			}
			ev, err := findTriggerEvent(args[0])
			if err != nil {
				return err
			}
			if amount < 1 || amount > recon.MaxAmount {
				return fmt.Errorf("--amount must be a whole number of VND from 1 to %d", int64(recon.MaxAmount))
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tr := &triggerRun{db: db, clock: a.clock, rand: a.rand, loc: loc, company: companyID, amount: amount}
				res, err := tr.run(cmd.Context(), ev, accountID)
				if err != nil {
					return err
				}
				return a.printTrigger(res)
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&companyID, "company", 0, "company id (required); the command acts on its test mode")
	f.Int64Var(&accountID, "bank-account", 0, "test-mode bank account that receives the transfer (default: the test mode's first, made when there is none)")
	f.Int64Var(&amount, "amount", 150000, "order amount in VND")
	_ = cmd.MarkFlagRequired("company")
	a.addJSONFlag(cmd)
	return cmd
}

// triggerRun is one `recon trigger`: the company's test tenant, its test
// merchant and bank account, and what the steps made.
type triggerRun struct {
	db      *sqlstore.DB
	clock   recon.Clock
	rand    io.Reader // merchant credentials, the order's invoice number, the transfer's reference
	loc     *time.Location
	company int64
	amount  int64

	tenant    *recon.Tenant
	merchant  *recon.Merchant
	account   *recon.BankAccount
	checkouts *checkout.Service
	orders    *orders.Service
	va        *recon.VirtualAccount // the API v2 order's account
	res       triggerResult
}

// triggerResult is what `recon trigger` prints.
type triggerResult struct {
	Event       string            `json:"event"`
	Company     int64             `json:"company"`
	Livemode    bool              `json:"livemode"`
	MerchantID  string            `json:"merchant_id"`
	BankAccount triggerAccount    `json:"bank_account"`
	Order       *triggerOrder     `json:"order,omitempty"`
	Transaction *triggerTransfer  `json:"transaction,omitempty"`
	Deliveries  []triggerDelivery `json:"deliveries"`
	Created     []string          `json:"created"` // what was made besides the objects above
	// Note says what happens next (ORDER_EXPIRED: the sweep of a running
	// server expires the order).
	Note string `json:"note,omitempty"`
	// NotSubscribed are the types the steps caused on the way that the
	// test-mode IPN target does not subscribe to, so not sent
	// (docs/api-v2.md, Notifications).
	NotSubscribed []string `json:"not_subscribed"`
}

type triggerAccount struct {
	ID            int64  `json:"id"`
	BankName      string `json:"bank_name"`
	AccountNumber string `json:"account_number"`
}

type triggerOrder struct {
	ID            int64  `json:"id"`
	InvoiceNumber string `json:"order_invoice_number"`
	PaymentCode   string `json:"payment_code"`
	Amount        int64  `json:"amount"`
	Status        string `json:"order_status"`
	// An API v2 order's: its id, v2 status, account and expiry.
	V2ID           string `json:"v2_id,omitempty"`
	V2Status       string `json:"v2_status,omitempty"`
	VirtualAccount string `json:"virtual_account,omitempty"`
	PaidAmount     int64  `json:"paid_amount,omitempty"`
	ExpiresAt      string `json:"expires_at,omitempty"`
}

type triggerTransfer struct {
	ID              int64  `json:"id"`
	ReferenceNumber string `json:"reference_number"`
	Amount          int64  `json:"amount"`
	Content         string `json:"transaction_content"`
}

type triggerDelivery struct {
	ID            int64  `json:"id"`
	Event         string `json:"event"`
	Status        string `json:"status"`
	NextAttemptAt string `json:"next_attempt_at"`
	// Held is true when the test mode has no active IPN URL: the
	// notification waits for recon listen until NextAttemptAt.
	Held bool `json:"held"`
}

func (tr *triggerRun) run(ctx context.Context, ev *triggerEvent, accountID int64) (*triggerResult, error) {
	tr.res = triggerResult{Event: ev.Name, Company: tr.company, Deliveries: []triggerDelivery{}, Created: []string{}, NotSubscribed: []string{}}
	live, err := tr.db.Tenant(ctx, tr.company)
	if err != nil {
		return nil, err
	}
	if !live.Live() {
		return nil, fmt.Errorf("%d is the test tenant of company %d: name the company (--company %d); recon trigger always acts on its test mode", tr.company, live.Company, live.Company)
	}
	if err := live.CheckActive(); err != nil {
		return nil, err
	}
	// Checkout would refuse the order (its transfers could never match it):
	// say so before making anything.
	co, err := tr.db.Company(ctx, tr.company)
	if err != nil {
		return nil, err
	}
	if !checkout.CanMatch(&co.Config) {
		return nil, fmt.Errorf("company %d cannot take bank-transfer payments yet: payment codes must be on (paycode) with an active payment-code format (PATCH /api/v1/company/configurations)", tr.company)
	}
	if tr.tenant, err = tr.db.TestTenant(ctx, tr.company); err != nil {
		return nil, err
	}
	if tr.tenant.Live() || tr.tenant.ID.ID() == tr.company { // never act on live data
		return nil, fmt.Errorf("company %d: the test tenant is not separate from the live data; refusing", tr.company)
	}
	if err := tr.subscribed(ctx, ev); err != nil {
		return nil, err
	}
	if err := tr.useAccount(ctx, accountID); err != nil {
		return nil, err
	}
	if err := tr.useMerchant(ctx); err != nil {
		return nil, err
	}
	tr.res.MerchantID = tr.merchant.MerchantID
	tr.res.BankAccount = triggerAccount{tr.account.ID, tr.account.BankName, tr.account.AccountNumber}
	tr.checkouts = &checkout.Service{Store: tr.db, Location: tr.loc, Clock: tr.clock}
	tr.orders = &orders.Service{Store: tr.db, Clock: tr.clock, Rand: tr.rand}
	before, err := tr.lastDelivery(ctx)
	if err != nil {
		return nil, err
	}
	for _, step := range ev.Steps {
		if err := step(tr, ctx); err != nil {
			return nil, err
		}
	}
	if tr.res.Order != nil {
		o, err := tr.db.Order(ctx, tr.tenant.ID, tr.res.Order.InvoiceNumber)
		if err != nil {
			return nil, err
		}
		tr.res.Order.Status = o.Status
		if tr.res.Order.V2ID != "" {
			tr.res.Order.V2Status, tr.res.Order.PaidAmount = o.V2Status(), o.PaidAmount
		}
		if err := tr.collectDeliveries(ctx, before); err != nil {
			return nil, err
		}
	}
	return &tr.res, nil
}

// subscribed refuses, before anything is made, an event the test mode's
// active IPN target does not subscribe to (its notification_types;
// docs/api-v2.md, Notifications): it would be made and never sent. The
// types the steps cause on the way that it does not subscribe to are noted
// in the result. Without an active target every notification is held for
// recon listen, whatever its type.
func (tr *triggerRun) subscribed(ctx context.Context, ev *triggerEvent) error {
	target, err := tr.db.DeliveryTarget(ctx, tr.tenant.ID.ID(), recon.DeliveryIPN)
	if recon.ErrorCode(err) == recon.ENOTFOUND || err == nil && !target.Active {
		return nil
	} else if err != nil {
		return err
	}
	st, err := recon.ParseIPNSettings(target.Settings)
	if err != nil {
		return err
	}
	types := st.Types()
	if !slices.Contains(types, ev.Name) {
		return fmt.Errorf("the test-mode IPN target %s does not subscribe to %s (it receives %s), so it would never be sent: nothing was made. "+
			"Subscribe it with recon ipn set --company %d --test --url %s --notification-types %s",
			target.URL, ev.Name, strings.Join(types, ", "), tr.company, target.URL, strings.Join(append(slices.Clone(types), ev.Name), ","))
	}
	for _, also := range ev.Also {
		if !slices.Contains(types, also) {
			tr.res.NotSubscribed = append(tr.res.NotSubscribed, also)
		}
	}
	return nil
}

// useAccount picks the test-mode bank account the transfer goes to. An
// account of another tenant (the company's live data, another company) is
// refused.
func (tr *triggerRun) useAccount(ctx context.Context, id int64) error {
	if id != 0 {
		b, err := tr.db.BankAccount(ctx, tr.tenant.ID, id)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return fmt.Errorf("bank account %d is not a test-mode account of company %d: recon trigger uses test-mode accounts only (recon bank-account list --company %d --test)", id, tr.company, tr.company)
		}
		tr.account = b
		return err
	}
	accounts, err := tr.db.BankAccounts(ctx, tr.tenant.ID)
	if err != nil {
		return err
	}
	if len(accounts) > 0 {
		tr.account = accounts[0]
		return nil
	}
	co, err := tr.db.Company(ctx, tr.company)
	if err != nil {
		return err
	}
	b := &recon.BankAccount{CompanyID: tr.tenant.ID.ID(), BankName: "Vietcombank", AccountNumber: "9999" + fmt.Sprintf("%08d", tr.company%100_000_000),
		HolderName: strings.ToUpper(co.ShortName) + " (SANDBOX)"}
	if err := tr.db.CreateBankAccount(ctx, b); err != nil {
		return err
	}
	tr.account = b
	tr.res.Created = append(tr.res.Created, fmt.Sprintf("sandbox bank account %d (%s %s)", b.ID, b.BankName, b.AccountNumber))
	return nil
}

// useMerchant takes the test mode's merchant credentials, making them as
// `recon merchant credentials --test` does when there are none.
func (tr *triggerRun) useMerchant(ctx context.Context) error {
	m, err := tr.db.MerchantOf(ctx, tr.tenant.ID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		m = recon.NewMerchant(tr.rand, tr.tenant.ID, tr.company)
		if err := tr.db.SetMerchant(ctx, m); err != nil {
			return err
		}
		if m, err = tr.db.MerchantOf(ctx, tr.tenant.ID); err != nil {
			return err
		}
		tr.res.Created = append(tr.res.Created, "test merchant credentials "+m.MerchantID+" (recon merchant credentials --test shows them)")
	} else if err != nil {
		return err
	}
	if m.Tenant.Live() || !strings.HasPrefix(m.MerchantID, recon.TestMerchantPrefix) {
		return fmt.Errorf("merchant %s is not a test-mode merchant; refusing", m.MerchantID)
	}
	tr.merchant = m
	return nil
}

// checkout creates the order as POST /v1/checkout/init does for a form
// signed with the test merchant's key: the test tenant must be active, then
// checkout.Service.Create.
func (tr *triggerRun) checkout(ctx context.Context) error {
	var b [5]byte
	if _, err := io.ReadFull(tr.rand, b[:]); err != nil {
		return err
	}
	invoice := "TRIGGER-" + strings.ToUpper(hex.EncodeToString(b[:]))
	if err := tr.active(ctx, "checkout"); err != nil {
		return err
	}
	o, err := tr.checkouts.Create(ctx, tr.tenant.ID, checkout.Input{InvoiceNumber: invoice, Amount: tr.amount,
		Description: "recon trigger " + tr.res.Event, CustomerID: "TRIGGER", CustomData: "[]",
		// No payer's browser: a documentation address (RFC 5737).
		UserAgent: "recon trigger", IPAddress: "192.0.2.1"})
	if err != nil {
		return stepError("checkout", err)
	}
	tr.res.Order = &triggerOrder{ID: o.ID, InvoiceNumber: o.InvoiceNumber, PaymentCode: o.PaymentCode, Amount: o.Amount, Status: o.Status}
	return nil
}

// active refuses a step, as the gateway refuses a merchant's request, when
// the test tenant is not active (read again: it may change during the run).
func (tr *triggerRun) active(ctx context.Context, what string) error {
	t, err := tr.db.Tenant(ctx, tr.tenant.ID.ID())
	if err == nil {
		err = t.CheckActive()
	}
	if err != nil {
		return stepError(what, err)
	}
	return nil
}

// stepError is a step's refusal as the gateway words it.
func stepError(what string, err error) error {
	var re *recon.Error
	if errors.As(err, &re) && re.Code != recon.EINTERNAL {
		return fmt.Errorf("%s: %s", what, recon.ErrorMessage(err))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// pay plays the payer: a simulated transfer of the order's amount with its
// payment code in the memo, through recon.Ingest.
func (tr *triggerRun) pay(ctx context.Context) error {
	o := tr.res.Order
	ref := recon.SimulatedReferenceFrom(tr.rand)
	content := "NGUYEN VAN A chuyen tien " + o.PaymentCode
	now := tr.clock.Now()
	res, err := recon.Ingest(ctx, tr.db, tr.tenant.ID, now, []recon.TransactionInput{{
		BankAccountID: tr.account.ID, TransactionDate: now.In(tr.loc), AmountIn: o.Amount,
		Content: content, ReferenceNumber: ref,
	}})
	if err != nil {
		return err
	}
	tr.res.Transaction = &triggerTransfer{ID: res[0].ID, ReferenceNumber: ref, Amount: o.Amount, Content: content}
	if now, err := tr.db.Order(ctx, tr.tenant.ID, o.InvoiceNumber); err != nil {
		return err
	} else if now.Status != recon.OrderCaptured {
		return fmt.Errorf("the transfer did not pay order %s (status %s): are the payment-code formats active?", o.InvoiceNumber, now.Status)
	}
	return nil
}

// v2Order creates an API v2 order with its first virtual account as POST
// /v2/orders does (orders.Service.Create: in test mode the sandbox bank
// issues the account).
func (tr *triggerRun) v2Order(ctx context.Context, in recon.OrderInput) error {
	var b [5]byte
	if _, err := io.ReadFull(tr.rand, b[:]); err != nil {
		return err
	}
	if err := tr.active(ctx, "order"); err != nil {
		return err
	}
	in.InvoiceNumber = "TRIGGER-" + strings.ToUpper(hex.EncodeToString(b[:]))
	in.Amount, in.BankAccountID, in.CustomerID, in.Description = tr.amount, tr.account.ID, "TRIGGER", "recon trigger "+tr.res.Event
	v, err := tr.orders.Create(ctx, tr.tenant.ID, in)
	if err != nil {
		return stepError("order", err)
	}
	o := v.Order
	tr.va = v.VAs[0]
	tr.res.Order = &triggerOrder{ID: o.ID, InvoiceNumber: o.InvoiceNumber, PaymentCode: o.PaymentCode, Amount: o.Amount, Status: o.Status,
		V2ID: o.PublicID, V2Status: o.V2Status(), VirtualAccount: tr.va.Number, ExpiresAt: o.ExpiresAt.In(tr.loc).Format(recon.DateTimeLayout)}
	return nil
}

// partialOrder is an API v2 order whose account takes any amount.
func (tr *triggerRun) partialOrder(ctx context.Context) error {
	if tr.amount < 2 {
		return fmt.Errorf("--amount must be at least 2 VND for %s: the transfer pays half of it", tr.res.Event)
	}
	return tr.v2Order(ctx, recon.OrderInput{VA: recon.VAInput{AmountMode: recon.VAPartial}})
}

// expiringOrder is an API v2 order that expires one second after it is
// made; the sweep of a running server expires it (docs/api-v2.md, Orders).
func (tr *triggerRun) expiringOrder(ctx context.Context) error {
	second := int64(1)
	if err := tr.v2Order(ctx, recon.OrderInput{ExpiresIn: &second}); err != nil {
		return err
	}
	tr.res.Note = fmt.Sprintf("the order expires at %s: a running recon serve's sweep (every 15 seconds) expires it then and sends %s",
		tr.res.Order.ExpiresAt, recon.IPNOrderExpired)
	return nil
}

// payPart plays the payer of an API v2 order: a simulated transfer of half
// its amount to its virtual account (the bank's number as the transfer's
// sub-account, or a memo code in the memo), through recon.Ingest.
func (tr *triggerRun) payPart(ctx context.Context) error {
	o := tr.res.Order
	part := o.Amount / 2
	ref := recon.SimulatedReferenceFrom(tr.rand)
	in := recon.TransactionInput{BankAccountID: tr.account.ID, AmountIn: part, Content: "NGUYEN VAN A chuyen tien", ReferenceNumber: ref}
	if tr.va.Kind == recon.VAKindMemo {
		in.Content += " " + tr.va.Number
	} else {
		in.SubAccount = tr.va.Number
	}
	now := tr.clock.Now()
	in.TransactionDate = now.In(tr.loc)
	res, err := recon.Ingest(ctx, tr.db, tr.tenant.ID, now, []recon.TransactionInput{in})
	if err != nil {
		return err
	}
	tr.res.Transaction = &triggerTransfer{ID: res[0].ID, ReferenceNumber: ref, Amount: part, Content: in.Content}
	if now, err := tr.db.Order(ctx, tr.tenant.ID, o.InvoiceNumber); err != nil {
		return err
	} else if now.V2Status() != recon.OrderPartiallyPaid || now.PaidAmount != part {
		return fmt.Errorf("the transfer did not pay part of order %s (status %s, paid %d)", o.InvoiceNumber, now.V2Status(), now.PaidAmount)
	}
	return nil
}

// void voids the paid order as the merchant does with POST
// /v1/order/voidTransaction: the test tenant must be active, then
// checkout.Service.Void.
func (tr *triggerRun) void(ctx context.Context) error {
	if err := tr.active(ctx, "void"); err != nil {
		return err
	}
	if _, err := tr.checkouts.Void(ctx, tr.tenant.ID, tr.res.Order.InvoiceNumber); err != nil {
		return stepError("void", err)
	}
	return nil
}

// lastDelivery is the id of the test tenant's newest delivery (0 for none).
func (tr *triggerRun) lastDelivery(ctx context.Context) (int64, error) {
	ds, err := tr.db.Deliveries(ctx, tr.tenant.ID, recon.DeliveryFilter{Limit: 1})
	if err != nil || len(ds) == 0 {
		return 0, err
	}
	return ds[0].ID, nil
}

// collectDeliveries lists the notifications about the order enqueued
// since the delivery before, oldest first.
func (tr *triggerRun) collectDeliveries(ctx context.Context, before int64) error {
	ds, err := tr.db.Deliveries(ctx, tr.tenant.ID, recon.DeliveryFilter{Limit: 100})
	if err != nil {
		return err
	}
	target, err := tr.db.DeliveryTarget(ctx, tr.tenant.ID.ID(), recon.DeliveryIPN)
	held := recon.ErrorCode(err) == recon.ENOTFOUND || err == nil && !target.Active
	if err != nil && !held {
		return err
	}
	for _, d := range slices.Backward(ds) {
		var body struct {
			Order struct {
				Invoice string `json:"order_invoice_number"`
			} `json:"order"`
		}
		if d.ID <= before || json.Unmarshal(d.Payload, &body) != nil || body.Order.Invoice != tr.res.Order.InvoiceNumber {
			continue
		}
		tr.res.Deliveries = append(tr.res.Deliveries, triggerDelivery{ID: d.ID, Event: d.Event, Status: d.Status,
			NextAttemptAt: d.NextAttemptAt.In(tr.loc).Format(recon.DateTimeLayout), Held: held && d.Status == recon.DeliveryPending})
	}
	return nil
}

func (a *app) printTrigger(res *triggerResult) error {
	if a.jsonOut {
		return a.print(res, "")
	}
	w := a.stdout
	fmt.Fprintf(w, "%s triggered in the test mode of company %d (merchant %s)\n", res.Event, res.Company, res.MerchantID)
	for _, c := range res.Created {
		fmt.Fprintf(w, "  made %s\n", c)
	}
	if o := res.Order; o != nil && o.V2ID != "" {
		fmt.Fprintf(w, "  order        %s (v2 id %s), %d VND, virtual account %s, now %s (paid %d VND), expires at %s\n",
			o.InvoiceNumber, o.V2ID, o.Amount, o.VirtualAccount, o.V2Status, o.PaidAmount, o.ExpiresAt)
	} else if o != nil {
		fmt.Fprintf(w, "  order        %s (id %d), %d VND, payment code %s, now %s\n", o.InvoiceNumber, o.ID, o.Amount, o.PaymentCode, o.Status)
	}
	if t := res.Transaction; t != nil {
		fmt.Fprintf(w, "  transaction  %d (reference %s) to bank account %d (%s %s): %q\n", t.ID, t.ReferenceNumber,
			res.BankAccount.ID, res.BankAccount.BankName, res.BankAccount.AccountNumber, t.Content)
	}
	if len(res.Deliveries) == 0 {
		fmt.Fprintln(w, "  no notification enqueued")
	}
	if res.Note != "" {
		fmt.Fprintf(w, "  %s\n", res.Note)
	}
	for _, n := range res.NotSubscribed {
		fmt.Fprintf(w, "  %s not sent: the test-mode IPN target does not subscribe to it (recon ipn set --test --notification-types)\n", n)
	}
	for _, d := range res.Deliveries {
		note := ""
		if d.Held {
			note = " — no test IPN URL: held for recon listen until " + d.NextAttemptAt
		}
		fmt.Fprintf(w, "  delivery     %d %s, %s%s\n", d.ID, d.Event, d.Status, note)
	}
	_, err := fmt.Fprintf(w, "See them with: recon deliveries list --company %d --test\n", res.Company)
	return err
}

// triggerHub makes a hub event happen in the company's test mode
// (linking.Service.Simulate) and prints the timeline of the link tokens it drove.
func (a *app) triggerHub(ctx context.Context, companyID int64, event string) error {
	loc, err := a.location()
	if err != nil {
		return err
	}
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		tenant, err := (&tenantFlags{company: companyID, test: true}).tenant(ctx, db)
		if err != nil {
			return err
		}
		sim, err := (&linking.Service{Store: db}).Simulate(ctx, tenant, true, event)
		if err != nil {
			return err
		}
		type line struct {
			LinkToken  string `json:"link_token_xid"`
			Event      string `json:"event"`
			Detail     string `json:"detail"`
			DeliveryID int64  `json:"delivery_id"`
		}
		res := struct {
			Event      string `json:"event"`
			Company    int64  `json:"company"`
			Livemode   bool   `json:"livemode"`
			Customer   string `json:"company_xid"`
			AccountXID string `json:"bank_account_xid,omitempty"`
			ExpiresAt  string `json:"expires_at,omitempty"`
			Events     []line `json:"events"`
		}{Event: sim.Event, Company: companyID, Customer: sim.Customer.XID, AccountXID: sim.AccountXID, Events: []line{}}
		if !sim.ExpiresAt.IsZero() {
			res.ExpiresAt = sim.ExpiresAt.In(loc).Format(recon.DateTimeLayout)
		}
		for _, xid := range sim.LinkTokens {
			log, err := db.HubEventLog(ctx, tenant, xid)
			if err != nil {
				return err
			}
			for _, e := range log {
				res.Events = append(res.Events, line{xid, e.Event, eventDetail(e.Metadata), e.DeliveryID})
			}
		}
		if a.jsonOut {
			return a.print(res, "")
		}
		fmt.Fprintf(a.stdout, "%s triggered in the test mode of company %d (hub company %s %q)\n", sim.Event, companyID, sim.Customer.XID, sim.Customer.FullName)
		for _, e := range res.Events {
			fmt.Fprintf(a.stdout, "  %-28s %-40s delivery %d\n", e.Event, e.Detail, e.DeliveryID)
		}
		if res.ExpiresAt != "" {
			fmt.Fprintf(a.stdout, "  the link token expires at %s: a running recon serve's sweep sends %s within 15 seconds after\n", res.ExpiresAt, sim.Event)
		}
		fmt.Fprintln(a.stdout, "  (hub events go to the test-mode webhook, or wait for recon listen; recon hub events LINK_TOKEN_XID --company N --test shows a timeline)")
		return nil
	})
}

// Package checkout is the service of the payment gateway's orders (docs/api.md,
// Payment gateway): creating an order with its payment code, cancelling and
// voiding it. POST /v1/checkout/init and the order API (gateway) call it, and
// so does `recon trigger`, which makes its orders and voids through the same
// rules without HTTP. It speaks no HTTP: its callers authenticate the
// merchant and check its company is active, decode their input and render
// what it returns (ARCHITECTURE.md, "The dependency rule": services).
package checkout

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"time"

	"recon"
)

// Store is the storage the service needs.
type Store interface {
	// recon.CompanyStore's:
	Company(ctx context.Context, id int64) (*recon.Company, error)
	// recon.BankAccountStore's:
	BankAccounts(ctx context.Context, tenant recon.TenantID) ([]*recon.BankAccount, error)
	// recon.OrderStore's:
	CreateOrder(ctx context.Context, o *recon.Order) error
	PaymentCodesInUse(ctx context.Context, tenant recon.TenantID, prefix string, n, list int) (int64, []string, error)
	Order(ctx context.Context, tenant recon.TenantID, invoiceNumber string) (*recon.Order, error)
	CancelOrder(ctx context.Context, tenant recon.TenantID, invoiceNumber string, now time.Time) (*recon.Order, error)
	VoidOrder(ctx context.Context, tenant recon.TenantID, invoiceNumber string, now time.Time, notify func(*recon.Order) (*recon.Delivery, error)) (*recon.Order, error)
}

// Service creates, cancels and voids orders.
type Service struct {
	Store Store
	Clock recon.Clock
	// Location is the business time zone of the IPNs' dates (default UTC).
	Location *time.Location
	// Rand is the randomness of payment codes (default crypto/rand).
	Rand io.Reader
	// NewCode, when set, makes payment codes (tests); otherwise they are
	// random digits fitting the company's default active format.
	NewCode func() string
	// Metrics, when set, records how full payment-code formats are.
	Metrics *Metrics
	// Logger warns when a format is nearly used up (default: discarded).
	Logger *slog.Logger
}

// Input is a new order: the fields of a validated checkout form, and what
// the request says of the payer.
type Input struct {
	InvoiceNumber, OrderID, CustomerID, Description string
	Amount                                          int64
	SuccessURL, ErrorURL, CancelURL                 string
	// CustomData is the JSON array stored with the order; CustomDataSigned
	// whether the merchant signed it.
	CustomData           string
	CustomDataSigned     bool
	UserAgent, IPAddress string
}

// Create creates the company's order of in, to its first bank account, with
// a payment code of its default format that no order of the company ever had
// (paycode.go). Nothing is created when a check fails: a company without a
// bank account, an invoice number already used, a company whose transfers'
// codes would never be extracted.
func (s *Service) Create(ctx context.Context, tenant recon.TenantID, in Input) (*recon.Order, error) {
	accounts, err := s.Store.BankAccounts(ctx, tenant)
	if err != nil {
		return nil, err
	}
	if len(accounts) == 0 {
		return nil, recon.Errorf(recon.EINVALID, "merchant has no bank account to receive the payment")
	}
	if _, err := s.Store.Order(ctx, tenant, in.InvoiceNumber); err == nil {
		return nil, duplicateInvoice(in.InvoiceNumber)
	} else if recon.ErrorCode(err) != recon.ENOTFOUND {
		return nil, err
	}
	company, err := s.Store.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	if !CanMatch(&company.Config) {
		// Its transfers' codes would never be extracted, so no order could be matched.
		return nil, recon.Errorf(recon.EINVALID, "the merchant cannot take bank-transfer payments yet: payment codes must be on (paycode) with an active payment-code format")
	}
	format := defaultCodeFormat(company.Config.PaymentCodeFormats)
	newCode := s.NewCode
	if newCode == nil {
		newCode = func() string { return format.random(s.random()) }
	}
	o := &recon.Order{
		CompanyID: tenant.ID(), InvoiceNumber: in.InvoiceNumber, OrderID: in.OrderID, CustomerID: in.CustomerID,
		Amount: in.Amount, Currency: "VND", Description: in.Description, BankAccountID: accounts[0].ID,
		CustomData: in.CustomData, CustomDataSigned: in.CustomDataSigned, UserAgent: in.UserAgent, IPAddress: in.IPAddress,
		SuccessURL: in.SuccessURL, ErrorURL: in.ErrorURL, CancelURL: in.CancelURL, PaymentMethod: "BANK_TRANSFER",
	}
	// A payment code is unique per company and never reused (paycode.go):
	// draw again when it is taken, then look for a free one.
	for i := 0; ; i++ {
		o.PaymentCode = newCode()
		if i == codeDraws {
			if o.PaymentCode, err = s.freeCode(ctx, tenant, format); err != nil {
				return nil, err
			}
		}
		err = s.Store.CreateOrder(ctx, o)
		if recon.ErrorCode(err) != recon.ECONFLICT {
			break
		}
		// The conflict may be the invoice number, created meanwhile.
		if _, e := s.Store.Order(ctx, tenant, in.InvoiceNumber); e == nil {
			return nil, duplicateInvoice(in.InvoiceNumber)
		}
		switch i {
		case 0: // see how full the format is (a warning from 80%)
			if used, _, err := s.Store.PaymentCodesInUse(ctx, tenant, format.Prefix, format.Digits, 0); err == nil {
				s.observeCodeUsage(tenant.ID(), format, used)
			}
		case codeDraws: // the free code was taken meanwhile
			return nil, recon.Errorf(recon.ECONFLICT, "payment code %s was taken by a concurrent checkout: retry", o.PaymentCode)
		}
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Cancel cancels an unpaid order: it becomes CANCELLED, no IPN. A paid or
// already cancelled order is ECONFLICT.
func (s *Service) Cancel(ctx context.Context, tenant recon.TenantID, invoice string) (*recon.Order, error) {
	return s.Store.CancelOrder(ctx, tenant, invoice, s.now())
}

// Void voids a paid order: it becomes CANCELLED and a TRANSACTION_VOID IPN
// is enqueued with the change. An unpaid or already cancelled order is
// ECONFLICT.
func (s *Service) Void(ctx context.Context, tenant recon.TenantID, invoice string) (*recon.Order, error) {
	now := s.now()
	notify := func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNTransactionVoid, now.In(s.location()))
	}
	return s.Store.VoidOrder(ctx, tenant, invoice, now, notify)
}

func duplicateInvoice(invoice string) error {
	msg := fmt.Sprintf("order_invoice_number %q already exists for this merchant", invoice)
	return &recon.Error{Code: recon.ECONFLICT, Message: msg, Fields: map[string][]string{"order_invoice_number": {msg}}}
}

// CanMatch reports whether transfers to the company can be matched by code:
// extraction is on and at least one format is active.
func CanMatch(c *recon.CompanyConfig) bool {
	if !c.Paycode {
		return false
	}
	for _, f := range c.PaymentCodeFormats {
		if f.IsActive {
			return true
		}
	}
	return false
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

func (s *Service) location() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}

func (s *Service) random() io.Reader {
	if s.Rand == nil {
		return rand.Reader
	}
	return s.Rand
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

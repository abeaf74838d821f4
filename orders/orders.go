// Package orders is the service of API v2's orders and their virtual
// accounts (docs/api-v2.md, Orders and Virtual accounts): creating an order
// with its first account, reading and listing orders (a v1 checkout order
// included: one order store), cancelling one, adding and cancelling
// accounts. API v2 (apiv2) calls it, and so can the dashboard and the CLI.
// It speaks no HTTP (ARCHITECTURE.md, "The dependency rule": services).
package orders

import (
	"context"
	"crypto/rand"
	"io"
	"slices"
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
	Order(ctx context.Context, tenant recon.TenantID, invoiceNumber string) (*recon.Order, error)
	Orders(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*recon.Order, int64, error)
	CancelOrder(ctx context.Context, tenant recon.TenantID, invoiceNumber string, now time.Time) (*recon.Order, error)
	// recon.VAStore's:
	CreateOrderWithVA(ctx context.Context, o *recon.Order, va *recon.VirtualAccount) error
	OrderByPublicID(ctx context.Context, tenant recon.TenantID, id string) (*recon.Order, error)
	OrderVAs(ctx context.Context, tenant recon.TenantID, orderIDs []int64) (map[int64][]*recon.VirtualAccount, error)
	AddVA(ctx context.Context, tenant recon.TenantID, orderID string, plan func(o *recon.Order) (*recon.VirtualAccount, error)) (*recon.VirtualAccount, error)
	CancelVA(ctx context.Context, tenant recon.TenantID, orderID, number string, now time.Time) (*recon.VirtualAccount, error)
	VirtualAccounts(ctx context.Context, tenant recon.TenantID, f recon.VAFilter) ([]*recon.VirtualAccount, int64, error)
}

// Service creates, reads and cancels v2 orders and their accounts.
type Service struct {
	Store Store
	Clock recon.Clock
	// Rand is the randomness of memo codes and of the sandbox bank's
	// numbers (default crypto/rand).
	Rand io.Reader
	// Connector returns the connector issuing bank virtual accounts of the
	// tenant's bank account, or nil when its bank has none: the account is
	// then a memo one. Default: the sandbox bank's (recon.SandboxVAs) for a
	// test tenant, none for a live one (no real bank's connector exists yet).
	Connector func(tenant recon.TenantID, account *recon.BankAccount) recon.VAConnector
}

// View is an order with its accounts and the bank account they are paid
// into, as every surface shows it.
type View struct {
	Order *recon.Order
	VAs   []*recon.VirtualAccount
	Bank  *recon.BankAccount // nil when the order names none
}

// numberDraws bounds how many numbers Create and AddVA draw when the one
// drawn is taken.
const numberDraws = 5

// Create creates the tenant's order of in with its first virtual account
// (in.VA): into in.BankAccountID, or the company's first bank account. The
// order's payment code is its v2 id, which no memo carries: a v2 order is
// paid through its accounts. Nothing is created when a check fails.
func (s *Service) Create(ctx context.Context, tenant recon.TenantID, in recon.OrderInput) (*View, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	bank, err := s.bankAccount(ctx, tenant, in.BankAccountID)
	if err != nil {
		return nil, err
	}
	company, err := s.Store.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	now := s.now()
	expiry, _ := recon.ExpiresIn("expires_in", in.ExpiresIn, recon.DefaultOrderExpiry) // Validate checked it
	if _, err := s.Store.Order(ctx, tenant, in.InvoiceNumber); err == nil {
		return nil, duplicateInvoice(in.InvoiceNumber)
	} else if recon.ErrorCode(err) != recon.ENOTFOUND {
		return nil, err
	}
	for i := 0; ; i++ {
		o := &recon.Order{CompanyID: tenant.ID(), PublicID: recon.NewXIDFrom(s.random()), InvoiceNumber: in.InvoiceNumber,
			CustomerID: in.CustomerID, Amount: in.Amount, Currency: "VND", Description: in.Description, BankAccountID: bank.ID,
			PaymentMethod: "BANK_TRANSFER", ExpiresAt: now.Add(expiry)}
		o.PaymentCode = o.PublicID
		if in.Buyer != nil {
			o.Buyer = *in.Buyer
		}
		va, err := recon.PlanVA(o, in.VA, holderOf(company, bank), now)
		if err != nil {
			return nil, recon.Nested("va", err) // its fields are va.amount_mode, va.holder_name
		}
		if err := s.issue(ctx, tenant, bank, o, va); err != nil {
			return nil, err
		}
		err = s.Store.CreateOrderWithVA(ctx, o, va)
		if err == nil {
			return &View{Order: o, VAs: []*recon.VirtualAccount{va}, Bank: bank}, nil
		}
		if recon.ErrorCode(err) != recon.ECONFLICT {
			return nil, err
		}
		if _, e := s.Store.Order(ctx, tenant, in.InvoiceNumber); e == nil {
			return nil, duplicateInvoice(in.InvoiceNumber)
		}
		if i == numberDraws { // the numbers drawn were all taken
			return nil, err
		}
	}
}

// Get returns the tenant's order with the v2 id (a v1 checkout order too).
func (s *Service) Get(ctx context.Context, tenant recon.TenantID, id string) (*View, error) {
	if !recon.ValidXID(id) {
		return nil, recon.Errorf(recon.ENOTFOUND, "order %s not found", id)
	}
	o, err := s.Store.OrderByPublicID(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, tenant, []*recon.Order{o})
	if err != nil {
		return nil, err
	}
	return views[0], nil
}

// List returns one page of the tenant's orders (f.V2Status filters by v2
// status), with their accounts, and the total.
func (s *Service) List(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*View, int64, error) {
	list, total, err := s.Store.Orders(ctx, tenant, f)
	if err != nil {
		return nil, 0, err
	}
	views, err := s.views(ctx, tenant, list)
	return views, total, err
}

// Cancel cancels the tenant's order: pending or partially paid (what was
// paid stays paid: refund it, docs/api-v2.md, Refunds), with its active
// accounts. Any other state is EUNPROCESSABLE invalid_state.
func (s *Service) Cancel(ctx context.Context, tenant recon.TenantID, id string) (*View, error) {
	v, err := s.Get(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.Store.CancelOrder(ctx, tenant, v.Order.InvoiceNumber, s.now()); err != nil {
		if recon.ErrorCode(err) == recon.ECONFLICT { // recon.NextOrder: not awaiting payment
			return nil, recon.RuleError(recon.ReasonInvalidState, "order %s is %s: only a pending or partially paid order can be cancelled", v.Order.PublicID, v.Order.V2Status())
		}
		return nil, err
	}
	return s.Get(ctx, tenant, id)
}

// AddVA adds a virtual account to the tenant's order (recon.PlanVA: only
// while it is pending or partially paid, else invalid_state).
func (s *Service) AddVA(ctx context.Context, tenant recon.TenantID, id string, in recon.VAInput) (*recon.VirtualAccount, error) {
	v, err := s.Get(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	company, err := s.Store.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	bank := v.Bank
	if bank == nil {
		if bank, err = s.bankAccount(ctx, tenant, 0); err != nil {
			return nil, err
		}
	}
	// The plan made now (the number needs the bank's connector, outside the
	// database transaction) is made again under the order's lock.
	first, err := recon.PlanVA(v.Order, in, holderOf(company, bank), s.now())
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if err := s.issue(ctx, tenant, bank, v.Order, first); err != nil {
			return nil, err
		}
		va, err := s.Store.AddVA(ctx, tenant, id, func(o *recon.Order) (*recon.VirtualAccount, error) {
			va, err := recon.PlanVA(o, in, holderOf(company, bank), s.now())
			if err != nil {
				return nil, err
			}
			va.Number, va.Kind, va.BankAccountID = first.Number, first.Kind, bank.ID
			return va, nil
		})
		if recon.ErrorCode(err) != recon.ECONFLICT || i == numberDraws {
			return va, err
		}
	}
}

// CancelVA cancels an active account of the tenant's order (recon.NextVA).
func (s *Service) CancelVA(ctx context.Context, tenant recon.TenantID, id, number string) (*recon.VirtualAccount, error) {
	if !recon.ValidXID(id) {
		return nil, recon.Errorf(recon.ENOTFOUND, "order %s not found", id)
	}
	return s.Store.CancelVA(ctx, tenant, id, number, s.now())
}

// VirtualAccounts lists one page of the tenant's accounts, newest first.
func (s *Service) VirtualAccounts(ctx context.Context, tenant recon.TenantID, f recon.VAFilter) ([]*recon.VirtualAccount, int64, error) {
	if f.Status != "" && !slices.Contains(recon.VAStatuses, f.Status) {
		return nil, 0, recon.FieldError("status", "status must be one of active, paid, expired, cancelled, not %q", f.Status)
	}
	return s.Store.VirtualAccounts(ctx, tenant, f)
}

// BankAccounts returns the tenant's bank accounts by id (what a surface
// needs to show accounts' QR codes).
func (s *Service) BankAccounts(ctx context.Context, tenant recon.TenantID) (map[int64]*recon.BankAccount, error) {
	list, err := s.Store.BankAccounts(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*recon.BankAccount, len(list))
	for _, b := range list {
		out[b.ID] = b
	}
	return out, nil
}

// issue gives va its number and kind: a bank one from the connector of the
// bank account when there is one, else a memo code.
func (s *Service) issue(ctx context.Context, tenant recon.TenantID, bank *recon.BankAccount, o *recon.Order, va *recon.VirtualAccount) error {
	if c := s.connector(tenant, bank); c != nil {
		n, err := c.IssueVA(ctx, recon.VARequest{Tenant: tenant, BankAccount: bank, Order: o, HolderName: va.HolderName, Amount: va.Amount, ExpiresAt: va.ExpiresAt})
		if err != nil {
			return err
		}
		va.Number, va.Kind = n, recon.VAKindBank
		return nil
	}
	va.Number, va.Kind = recon.NewMemoVANumberFrom(s.random()), recon.VAKindMemo
	return nil
}

func (s *Service) connector(tenant recon.TenantID, bank *recon.BankAccount) recon.VAConnector {
	if s.Connector != nil {
		return s.Connector(tenant, bank)
	}
	if !tenant.Live() {
		return recon.SandboxVAs{Rand: s.random()}
	}
	return nil
}

// bankAccount returns the tenant's account id, or its first when id is 0.
func (s *Service) bankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error) {
	accounts, err := s.Store.BankAccounts(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for _, b := range accounts {
		if id == 0 || b.ID == id {
			return b, nil
		}
	}
	if id == 0 {
		return nil, recon.RuleError("no_bank_account", "the company has no bank account to receive the payment: add one first")
	}
	return nil, recon.FieldError("bank_account_id", "bank_account_id %d is not a bank account of this company", id)
}

// views reads the orders' accounts and bank accounts.
func (s *Service) views(ctx context.Context, tenant recon.TenantID, list []*recon.Order) ([]*View, error) {
	ids := make([]int64, len(list))
	for i, o := range list {
		ids[i] = o.ID
	}
	vas, err := s.Store.OrderVAs(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	banks, err := s.BankAccounts(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]*View, len(list))
	for i, o := range list {
		out[i] = &View{Order: o, VAs: vas[o.ID], Bank: banks[o.BankAccountID]}
	}
	return out, nil
}

// holderOf is an account's default holder name: the bank account's holder,
// else the company's name.
func holderOf(c *recon.Company, bank *recon.BankAccount) string {
	if bank != nil && bank.HolderName != "" {
		return bank.HolderName
	}
	return c.FullName
}

func duplicateInvoice(invoice string) error {
	msg := "order_invoice_number \"" + invoice + "\" already exists for this company"
	return &recon.Error{Code: recon.ECONFLICT, Message: msg, Fields: map[string][]string{"order_invoice_number": {msg}}}
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

func (s *Service) random() io.Reader {
	if s.Rand == nil {
		return rand.Reader
	}
	return s.Rand
}

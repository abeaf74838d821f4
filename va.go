package recon

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Orders of API v2 and their virtual accounts (docs/api-v2.md, Orders and
// Virtual accounts). A v2 order is a gateway order (Order): one order store,
// one status column holding the v1 status; the v2 status is derived from the
// stored state by Order.V2Status.

// Order statuses of API v2 (docs/api-v2.md, Orders).
const (
	OrderPending       = "pending"
	OrderPartiallyPaid = "partially_paid"
	OrderPaid          = "paid"
	OrderV2Cancelled   = "cancelled"
	OrderExpired       = "expired"
)

// OrderV2Statuses lists every v2 order status.
var OrderV2Statuses = []string{OrderPending, OrderPartiallyPaid, OrderPaid, OrderV2Cancelled, OrderExpired}

// V2Status is the order's v2 status, a pure function of what is stored:
// CAPTURED is paid; CANCELLED is expired when the maintenance loop expired
// it (ExpiredAt set), else cancelled (a cancel or a void); an order awaiting
// payment is partially_paid once some money counts toward it, else pending.
func (o *Order) V2Status() string {
	switch o.Status {
	case OrderCaptured:
		return OrderPaid
	case OrderCancelled:
		if !o.ExpiredAt.IsZero() {
			return OrderExpired
		}
		return OrderV2Cancelled
	}
	if o.PaidAmount > 0 {
		return OrderPartiallyPaid
	}
	return OrderPending
}

// V1OrderStatus maps a v2 status to the v1 status GET /v1/order shows
// (docs/api-v2.md, Orders): AUTHENTICATION_NOT_NEEDED while pending or
// partially paid, CAPTURED when paid, CANCELLED when cancelled or expired.
// It returns "" for an unknown status.
func V1OrderStatus(v2 string) string {
	switch v2 {
	case OrderPending, OrderPartiallyPaid:
		return OrderAwaitingPayment
	case OrderPaid:
		return OrderCaptured
	case OrderV2Cancelled, OrderExpired:
		return OrderCancelled
	}
	return ""
}

// Buyer is who an order's invoice is for (docs/api-v2.md, Orders). Every
// field is optional; what is given is validated by Validate.
type Buyer struct {
	Name      string `json:"name"`
	LegalName string `json:"legal_name"`
	TaxCode   string `json:"tax_code"`
	Address   string `json:"address"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

// Limits of a buyer's fields, in bytes.
const (
	MaxBuyerName    = 255
	MaxBuyerAddress = 500
)

// IsZero reports whether no field is set.
func (b Buyer) IsZero() bool { return b == Buyer{} }

// Validate checks a buyer as POST /v2/orders gives it: each text field
// trimmed, of visible text within its limit; a tax code of Vietnam's forms
// (10 digits, or 10 digits, a dash and 3 for a branch); an email address;
// a phone of 8 to 15 digits, optionally after a +. Errors name the field
// (buyer.email, ...).
func (b *Buyer) Validate() error {
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{
		{"name", &b.Name, MaxBuyerName}, {"legal_name", &b.LegalName, MaxBuyerName}, {"tax_code", &b.TaxCode, 14},
		{"address", &b.Address, MaxBuyerAddress}, {"email", &b.Email, 254}, {"phone", &b.Phone, 16},
	} {
		*f.v = strings.TrimSpace(*f.v)
		field := "buyer." + f.name
		if len(*f.v) > f.max {
			return FieldError(field, "%s must be at most %d bytes, not %d", field, f.max, len(*f.v))
		}
		if bad := BadText(*f.v, false); bad != "" {
			return FieldError(field, "%s %s", field, bad)
		}
	}
	if t := b.TaxCode; t != "" {
		head, branch, hasBranch := strings.Cut(t, "-")
		if len(head) != 10 || !allDigits(head) || hasBranch && (len(branch) != 3 || !allDigits(branch)) {
			return FieldError("buyer.tax_code", "buyer.tax_code must be 10 digits, or 10 digits, a dash and 3 digits (a branch), not %q", t)
		}
	}
	if e := b.Email; e != "" {
		a, err := mail.ParseAddress(e)
		if err != nil || a.Address != e || a.Name != "" {
			return FieldError("buyer.email", "buyer.email must be an email address like name@example.com, not %q", e)
		}
	}
	if p := b.Phone; p != "" {
		digits := strings.TrimPrefix(p, "+")
		if len(digits) < 8 || len(digits) > 15 || !allDigits(digits) {
			return FieldError("buyer.phone", "buyer.phone must be 8 to 15 digits, optionally after a +, not %q", p)
		}
	}
	return nil
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// BuyerJSON is how an order stores its buyer (orders.buyer): "{}" when none.
func BuyerJSON(b Buyer) string {
	if b.IsZero() {
		return "{}"
	}
	out, _ := json.Marshal(b) // strings only: cannot fail
	return string(out)
}

// ParseBuyerJSON reads what BuyerJSON wrote.
func ParseBuyerJSON(s string) (Buyer, error) {
	var b Buyer
	if s == "" {
		return b, nil
	}
	err := json.Unmarshal([]byte(s), &b)
	return b, err
}

// OrderInput is a v2 order as POST /v2/orders gives it (docs/api-v2.md,
// Orders).
type OrderInput struct {
	InvoiceNumber string
	Amount        int64
	BankAccountID int64 // 0: the company's first account
	Description   string
	CustomerID    string
	Buyer         *Buyer
	ExpiresIn     *int64 // seconds
	VA            VAInput
}

// Limits of a v2 order's text fields, as the gateway's checkout has them.
const (
	MaxInvoiceNumber    = 100
	MaxOrderDescription = 1000
	MaxCustomerID       = 100
)

// Validate checks in: an invoice number of 1 to MaxInvoiceNumber letters,
// digits, _ or - (as checkout's); an amount from 1 to MaxAmount; texts
// within their limits; the buyer (Buyer.Validate); expires_in (ExpiresIn).
// Errors name the field.
func (in *OrderInput) Validate() error {
	inv := in.InvoiceNumber
	if inv == "" || len(inv) > MaxInvoiceNumber || strings.Trim(inv, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-") != "" {
		return FieldError("order_invoice_number", "order_invoice_number is required: 1 to %d letters, digits, _ or -", MaxInvoiceNumber)
	}
	if in.Amount < 1 || in.Amount > MaxAmount {
		return FieldError("amount", "amount must be a whole number of VND from 1 to %d, not %d", int64(MaxAmount), in.Amount)
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"description", in.Description, MaxOrderDescription}, {"customer_id", in.CustomerID, MaxCustomerID}} {
		if utf8.RuneCountInString(f.v) > f.max {
			return FieldError(f.name, "%s must be at most %d characters", f.name, f.max)
		}
		if bad := BadText(f.v, f.name == "description"); bad != "" {
			return FieldError(f.name, "%s %s", f.name, bad)
		}
	}
	if in.BankAccountID < 0 {
		return FieldError("bank_account_id", "bank_account_id must be a bank account's id")
	}
	if in.Buyer != nil {
		if err := in.Buyer.Validate(); err != nil {
			return err
		}
	}
	_, err := ExpiresIn("expires_in", in.ExpiresIn, DefaultOrderExpiry)
	return err
}

// Expiry of v2 orders and virtual accounts: expires_in seconds.
const (
	DefaultOrderExpiry = 24 * time.Hour
	MaxOrderExpiry     = 30 * 24 * time.Hour
)

// ExpiresIn checks an expires_in (seconds, named field) and returns the
// duration: def when nil, else 1 second to MaxOrderExpiry.
func ExpiresIn(field string, seconds *int64, def time.Duration) (time.Duration, error) {
	if seconds == nil {
		return def, nil
	}
	if *seconds < 1 || *seconds > int64(MaxOrderExpiry/time.Second) {
		return 0, FieldError(field, "%s must be from 1 to %d seconds (30 days), not %d", field, int64(MaxOrderExpiry/time.Second), *seconds)
	}
	return time.Duration(*seconds) * time.Second, nil
}

// ExpireOrder applies the order expiry of docs/api-v2.md, Orders, at now: a
// pending order (awaiting payment, nothing paid) whose ExpiresAt has passed
// becomes CANCELLED with ExpiredAt now (v2 status expired). It returns the
// new order and true, or o and false when it does not expire: a partially
// paid order keeps its status (its virtual accounts expire: see NextVA), and
// an order without ExpiresAt (a v1 checkout order) never expires. o is not
// changed.
func ExpireOrder(o *Order, now time.Time) (*Order, bool) {
	if o.V2Status() != OrderPending || o.ExpiresAt.IsZero() || now.Before(o.ExpiresAt) {
		return o, false
	}
	n := *o
	n.Status, n.ExpiredAt, n.UpdatedAt = OrderCancelled, now, now
	return &n, true
}

// Kinds of virtual account.
const (
	// VAKindBank is an account number the bank issued through its
	// VAConnector: the payer transfers to it (the transfer's sub_account).
	VAKindBank = "bank"
	// VAKindMemo is a code (MemoVAPrefix and digits) the payer writes in the
	// memo of a transfer to the order's bank account: always available.
	VAKindMemo = "memo"
)

// Amount modes of a virtual account (docs/api-v2.md, Virtual accounts).
const (
	// VAExact asks for the order's outstanding amount at once: a short
	// transfer is an underpaid exception (its money counts toward the
	// order, which waits for the rest), more is overpaid.
	VAExact = "exact"
	// VAPartial asks for Amount (at most what is outstanding) and takes any
	// transfer: each adds to the order's paid amount until it is reached.
	VAPartial = "partial"
	// VAOpen is VAPartial with no amount asked: the payer types it.
	VAOpen = "open"
)

// Statuses of a virtual account.
const (
	VAActive    = "active"
	VAPaid      = "paid"
	VAExpired   = "expired"
	VACancelled = "cancelled"
)

// VAKinds, VAModes and VAStatuses list every value.
var (
	VAKinds    = []string{VAKindBank, VAKindMemo}
	VAModes    = []string{VAExact, VAPartial, VAOpen}
	VAStatuses = []string{VAActive, VAPaid, VAExpired, VACancelled}
)

// VirtualAccount is an account number (bank) or memo code (memo) that
// names one order: a transfer to it pays the order (MatchPayments).
type VirtualAccount struct {
	ID        int64
	CompanyID int64
	OrderID   int64
	// OrderPublicID is the order's v2 id, read with the account.
	OrderPublicID string
	Number        string // unique per tenant
	Kind          string // VAKinds
	AmountMode    string // VAModes
	Amount        int64  // what the QR asks for; 0 for VAOpen
	Status        string // VAStatuses
	HolderName    string
	// BankAccountID is the company's account the VA's money arrives in.
	BankAccountID        int64
	ExpiresAt            time.Time
	CreatedAt, UpdatedAt time.Time
}

// ActiveAt reports whether the account takes money at now: active and not
// past ExpiresAt (which the maintenance loop may not have applied yet).
func (va *VirtualAccount) ActiveAt(now time.Time) bool {
	return va.Status == VAActive && (va.ExpiresAt.IsZero() || now.Before(va.ExpiresAt))
}

// VAEvent is what happens to a virtual account.
type VAEvent string

// Virtual-account events.
const (
	VAPay    VAEvent = "pay"    // its order was paid
	VACancel VAEvent = "cancel" // the merchant cancelled it, or its order
	VAExpire VAEvent = "expire" // its ExpiresAt passed, or its order expired
)

var vaEventTo = map[VAEvent]string{VAPay: VAPaid, VACancel: VACancelled, VAExpire: VAExpired}

// ReasonInvalidState is the error_code of API v2's 422 for an operation
// the order's or the account's state does not allow (recon.RuleError).
const ReasonInvalidState = "invalid_state"

// NextVA returns va after event at now. Only an active account moves: to
// paid, cancelled or expired; any other is EUNPROCESSABLE invalid_state
// naming its status
// (docs/api-v2.md, Virtual accounts, the state diagram). va is not changed.
func NextVA(va *VirtualAccount, event VAEvent, now time.Time) (*VirtualAccount, error) {
	to, ok := vaEventTo[event]
	if !ok {
		return nil, Errorf(EINVALID, "unknown virtual account event %q", event)
	}
	if va.Status != VAActive {
		return nil, RuleError(ReasonInvalidState, "virtual account %s is %s, not active", va.Number, va.Status)
	}
	n := *va
	n.Status, n.UpdatedAt = to, now
	return &n, nil
}

// VAInput is a virtual account as POST /v2/orders (va) or POST
// /v2/orders/{id}/virtual-accounts asks for it.
type VAInput struct {
	AmountMode string // "" is VAExact
	Amount     *int64
	ExpiresIn  *int64 // seconds
	HolderName string
}

// MaxHolderName bounds a virtual account's holder name, in bytes.
const MaxHolderName = 100

// PlanVA checks in against o, its order, at now, and returns the account
// to issue (without Number and Kind, which the issuer sets): the mode
// (default exact); the amount: exact asks for what is outstanding (an
// amount given must be that), partial for an amount from 1 to it (default
// it), open for none (an amount given is refused); the holder name
// (default the company's name, given as holder); the expiry: expires_in
// seconds, by default the order's expiry when that is still ahead, else
// DefaultOrderExpiry, never past the order's expiry while that is ahead.
// An order that is not pending or partially paid is EUNPROCESSABLE
// invalid_state.
func PlanVA(o *Order, in VAInput, holder string, now time.Time) (*VirtualAccount, error) {
	if st := o.V2Status(); st != OrderPending && st != OrderPartiallyPaid {
		return nil, RuleError(ReasonInvalidState, "order %s is %s: a virtual account can be added only while it is pending or partially paid", o.PublicID, st)
	}
	va := &VirtualAccount{CompanyID: o.CompanyID, OrderID: o.ID, OrderPublicID: o.PublicID, AmountMode: in.AmountMode,
		Status: VAActive, BankAccountID: o.BankAccountID, CreatedAt: now, UpdatedAt: now}
	if va.AmountMode == "" {
		va.AmountMode = VAExact
	}
	if !slices.Contains(VAModes, va.AmountMode) {
		return nil, FieldError("amount_mode", "amount_mode must be one of %s, not %q", strings.Join(VAModes, ", "), va.AmountMode)
	}
	due := o.Amount - o.PaidAmount
	switch va.AmountMode {
	case VAExact:
		if in.Amount != nil && *in.Amount != due {
			return nil, FieldError("amount", "an exact virtual account asks for the outstanding %d VND, not %d", due, *in.Amount)
		}
		va.Amount = due
	case VAPartial:
		va.Amount = due
		if in.Amount != nil {
			if *in.Amount < 1 || *in.Amount > due {
				return nil, FieldError("amount", "amount must be from 1 to the outstanding %d VND, not %d", due, *in.Amount)
			}
			va.Amount = *in.Amount
		}
	case VAOpen:
		if in.Amount != nil {
			return nil, FieldError("amount", "an open virtual account asks for no amount: the payer types it")
		}
	}
	va.HolderName = strings.TrimSpace(in.HolderName)
	if va.HolderName == "" {
		va.HolderName = holder
	}
	if len(va.HolderName) > MaxHolderName {
		return nil, FieldError("holder_name", "holder_name must be at most %d bytes, not %d", MaxHolderName, len(va.HolderName))
	}
	if bad := BadText(va.HolderName, false); bad != "" {
		return nil, FieldError("holder_name", "holder_name %s", bad)
	}
	orderAhead := !o.ExpiresAt.IsZero() && now.Before(o.ExpiresAt)
	def := DefaultOrderExpiry
	if orderAhead {
		def = o.ExpiresAt.Sub(now)
	}
	d, err := ExpiresIn("expires_in", in.ExpiresIn, def)
	if err != nil {
		return nil, err
	}
	va.ExpiresAt = now.Add(d)
	if orderAhead && va.ExpiresAt.After(o.ExpiresAt) {
		va.ExpiresAt = o.ExpiresAt
	}
	return va, nil
}

// MemoVAPrefix starts every memo virtual account's code, followed by
// MemoVADigits digits: "RECOVA12345678". It is six letters, longer than any
// payment-code prefix may be (PrefixMaxLenCeiling), so the extractor, which
// tries the longest prefix first at a position, reads a memo code as one
// whatever the company's formats; and a company's payment code could equal
// a memo code only by having drawn those very 14 characters, which the
// store refuses (docs/api-v2.md, Virtual accounts).
const (
	MemoVAPrefix = "RECOVA"
	MemoVADigits = 8
)

// MemoVAFormat is the format every extraction also applies (Ingest), so a
// memo code is found in any company's memos, with payment codes on or off.
var MemoVAFormat = PaymentCodeFormat{Prefix: MemoVAPrefix, SuffixFrom: MemoVADigits, SuffixTo: MemoVADigits, CharacterType: NumberOnly, IsActive: true}

// IsMemoVANumber reports whether s has the form of a memo code.
func IsMemoVANumber(s string) bool {
	d, ok := strings.CutPrefix(s, MemoVAPrefix)
	return ok && len(d) == MemoVADigits && allDigits(d)
}

// NewMemoVANumberFrom draws a memo code from random (the injected source).
func NewMemoVANumberFrom(random io.Reader) string {
	return MemoVAPrefix + randomDigits(random, MemoVADigits)
}

// SandboxVAPrefix starts the bank virtual accounts the sandbox connector
// issues: "SBR" and 13 digits.
const (
	SandboxVAPrefix = "SBR"
	SandboxVADigits = 13
)

// randomDigits draws n decimal digits from random without bias.
func randomDigits(random io.Reader, n int) string {
	out := make([]byte, 0, n)
	var b [1]byte
	for len(out) < n {
		if _, err := io.ReadFull(random, b[:]); err != nil {
			panic(err) // crypto/rand never fails; injected sources must not
		}
		if b[0] < 250 { // 250 = 25 * 10: no bias
			out = append(out, '0'+b[0]%10)
		}
	}
	return string(out)
}

// VARequest is what a bank's connector is asked for: a virtual account of
// the company's bank account for an order.
type VARequest struct {
	Tenant      TenantID
	BankAccount *BankAccount
	Order       *Order
	HolderName  string
	Amount      int64 // 0: open
	ExpiresAt   time.Time
}

// VAConnector issues bank virtual accounts: one per bank (docs/api-v2.md,
// Virtual accounts). A bank without one gives memo accounts only.
type VAConnector interface {
	// IssueVA returns a new account number at the bank. A number the tenant
	// already holds is refused by the store and asked again.
	IssueVA(ctx context.Context, req VARequest) (string, error)
}

// SandboxVAs is the sandbox bank's connector: numbers SandboxVAPrefix and
// SandboxVADigits random digits from Rand (crypto/rand when nil).
type SandboxVAs struct{ Rand io.Reader }

// IssueVA implements VAConnector.
func (s SandboxVAs) IssueVA(_ context.Context, _ VARequest) (string, error) {
	r := s.Rand
	if r == nil {
		r = rand.Reader
	}
	return SandboxVAPrefix + randomDigits(r, SandboxVADigits), nil
}

// VAFilter selects a tenant's virtual accounts (GET /v2/virtual-accounts).
type VAFilter struct {
	OrderID       int64
	Status        string
	Page, PerPage int
}

// VAStore stores the virtual accounts of API v2 and the v2 side of orders
// (docs/api-v2.md, Orders and Virtual accounts). Every tenant-scoped method
// is scoped to one tenant: another tenant's order or account is ENOTFOUND.
type VAStore interface {
	// CreateOrderWithVA stores o as CreateOrder does and, in the same
	// database transaction, its first account va (OrderID set). A number the
	// tenant already holds is ECONFLICT naming "number" (draw another).
	CreateOrderWithVA(ctx context.Context, o *Order, va *VirtualAccount) error
	// OrderByPublicID returns the tenant's order with the v2 id.
	OrderByPublicID(ctx context.Context, tenant TenantID, id string) (*Order, error)
	// OrderVAs returns the accounts of the tenant's orders (by order id),
	// oldest first.
	OrderVAs(ctx context.Context, tenant TenantID, orderIDs []int64) (map[int64][]*VirtualAccount, error)
	// AddVA locks the tenant's order with the v2 id and stores the account
	// plan makes of it (which checks its state: PlanVA) in one database
	// transaction. A number the tenant already holds is ECONFLICT naming
	// "number".
	AddVA(ctx context.Context, tenant TenantID, orderID string, plan func(o *Order) (*VirtualAccount, error)) (*VirtualAccount, error)
	// CancelVA cancels the active account number of the tenant's order (NextVA).
	CancelVA(ctx context.Context, tenant TenantID, orderID, number string, now time.Time) (*VirtualAccount, error)
	// VirtualAccounts lists one page of the tenant's accounts, newest first,
	// and the total.
	VirtualAccounts(ctx context.Context, tenant TenantID, f VAFilter) ([]*VirtualAccount, int64, error)
	// ExpireOrders, for every tenant, expires the active accounts past
	// their expiry and the pending orders past theirs with their accounts
	// (ExpireOrder), each order once however many nodes run it at the same
	// time, enqueuing notify's ORDER_EXPIRED to subscribers in the order's
	// database transaction. It returns how many orders expired.
	ExpireOrders(ctx context.Context, now time.Time, notify func(*Order) (*Delivery, error)) (int, error)
}

// AskedAmount is what a transfer to va should bring now, o being its order
// as it stands (nil: as when the account was made): exact, what the order
// still owes; partial, the account's amount, at most that; open, 0 (the
// payer types it). A paid account asks nothing more.
func (va *VirtualAccount) AskedAmount(o *Order) int64 {
	if va.AmountMode == VAOpen {
		return 0
	}
	if o == nil {
		return va.Amount
	}
	due := max(o.Amount-o.PaidAmount, 0)
	if va.AmountMode == VAExact {
		return due
	}
	return min(va.Amount, due)
}

// VAQRText is the VietQR payload (VietQR) of a transfer to a virtual account
// (docs/api-v2.md, Virtual accounts): for a bank one, to the account number
// itself at the bank of the company's account, no memo needed; for a memo
// one, to the company's account with the code as the memo. The amount is
// va.AskedAmount(o) (none for an open one: the payer types it). "" when the
// bank has no known BIN or the details do not fit a VietQR.
func VAQRText(va *VirtualAccount, bank *BankAccount, o *Order) string {
	if va == nil || bank == nil {
		return ""
	}
	bin := BankBIN(bank.BankName)
	if bin == "" {
		return ""
	}
	q := VietQR{BIN: bin, Account: bank.AccountNumber, Purpose: va.Number}
	if va.Kind == VAKindBank {
		q.Account, q.Purpose = va.Number, ""
	}
	q.Amount = va.AskedAmount(o)
	p, err := q.Payload()
	if err != nil {
		return ""
	}
	return p
}

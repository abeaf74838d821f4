package recon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// BankAccount is a company's account at a bank. Transactions arrive per account.
type BankAccount struct {
	ID            int64
	CompanyID     int64
	BankName      string // brand name: Vietcombank, MBBank, ...
	AccountNumber string
	HolderName    string
	// SubAccounts are virtual account numbers that route to this account.
	SubAccounts []string
	CreatedAt   time.Time
}

// TransactionInput is one bank transaction as it arrives, from a bank feed,
// a statement file or a sandbox transfer, before it is stored.
type TransactionInput struct {
	BankAccountID int64
	// TransactionDate is the wall-clock time in the business time zone.
	TransactionDate time.Time
	// Amounts are whole VND (VND has no minor unit); one of them is zero.
	AmountIn  int64
	AmountOut int64
	// Accumulated is the balance after the transaction as the bank reports
	// it, or nil when the source does not say.
	Accumulated     *int64
	Content         string
	ReferenceNumber string
	SubAccount      string
	// References are the other references the source gave for the same
	// transfer (a statement's end-to-end id, account-servicer reference,
	// transaction id ...; docs/statements.md, References), beside
	// ReferenceNumber, which stays the idempotency key. They are stored
	// (transaction_refs) and compared when looking for possible duplicates;
	// Ingest cleans them (CleanReferences).
	References []string
}

// Transaction is a stored bank transaction (spec §2.4; docs/api.md,
// Transactions).
type Transaction struct {
	ID              int64
	CompanyID       int64
	BankAccountID   int64
	BankName        string
	AccountNumber   string
	TransactionDate time.Time
	AmountIn        int64
	AmountOut       int64
	Accumulated     int64
	Content         string
	ReferenceNumber string
	// Code is the payment code extracted from Content, "" when none.
	Code       string
	SubAccount string
	CreatedAt  time.Time
	// References are its other references (TransactionInput.References),
	// read by TransactionStore.Transaction only.
	References []string
	// DupState is "" for an ordinary row, else its duplicate state
	// (DupPossible, DupConfirmed, DupDistinct), and DupOf the row it was
	// stored as a possible duplicate of (docs/statements.md, Possible
	// duplicates).
	DupState string
	DupOf    int64
}

// MaxAmount bounds every amount and every balance (10^15 VND), far above
// any real transfer or account: a transaction's amount_in and amount_out, a
// balance a feed reports, and the running balance Recon computes all stay
// within ±MaxAmount, so that a balance plus an amount can never overflow
// int64. Sums over many transactions (reports) are computed with AddAmounts
// and refused when they would not fit.
const MaxAmount = 1_000_000_000_000_000

// AddAmounts returns a+b and true, or 0 and false when the sum does not fit
// in an int64: checked addition for money.
func AddAmounts(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// MaxIngestBatch is the largest batch of transactions one push may carry.
const MaxIngestBatch = 1000

// Validate checks a bank account before it is stored.
func (b *BankAccount) Validate() error {
	switch {
	case strings.TrimSpace(b.BankName) == "" || len(b.BankName) > 64:
		return FieldError("bank", "bank name is required and must be at most 64 characters")
	case !validAccountNumber(b.AccountNumber):
		return FieldError("number", "account number must be 1 to 34 letters or digits")
	case len(b.HolderName) > 255:
		return FieldError("holder", "holder name must be at most 255 characters")
	}
	for _, s := range b.SubAccounts {
		if !validAccountNumber(s) {
			return FieldError("sub_account", "sub-account %q must be 1 to 34 letters or digits", s)
		}
	}
	return nil
}

func validAccountNumber(s string) bool {
	if len(s) == 0 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// EarliestTransactionYear and MaxTransactionDateAhead bound a transaction's
// date (docs/api.md, Transactions): from 2000-01-01 (in the business time
// zone) to a day after now. A date far ahead would stay on top of every
// list, newest first, and escape retention; one before 2000 is a typo.
const (
	EarliestTransactionYear = 2000
	MaxTransactionDateAhead = 24 * time.Hour
)

// Validate checks one incoming transaction; now is the business time (the
// injected Clock's), which bounds its date. field prefixes the names in the
// error (e.g. "transactions[3]").
func (t *TransactionInput) Validate(field string, now time.Time) error {
	f := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	switch {
	case t.BankAccountID <= 0:
		return FieldError(f("bank_account_id"), "%s is required", f("bank_account_id"))
	case t.TransactionDate.IsZero():
		return FieldError(f("transaction_date"), "%s is required", f("transaction_date"))
	case t.TransactionDate.Year() < EarliestTransactionYear:
		return FieldError(f("transaction_date"), "%s %s is before %d-01-01: a transaction cannot be that old",
			f("transaction_date"), t.TransactionDate.Format(DateTimeLayout), EarliestTransactionYear)
	case t.TransactionDate.After(now.Add(MaxTransactionDateAhead)):
		return FieldError(f("transaction_date"), "%s %s is more than a day in the future (now is %s)",
			f("transaction_date"), t.TransactionDate.Format(DateTimeLayout), now.In(t.TransactionDate.Location()).Format(DateTimeLayout))
	case t.AmountIn < 0 || t.AmountIn > MaxAmount:
		return FieldError(f("amount_in"), "%s must be a whole number of VND from 0 to %d", f("amount_in"), int64(MaxAmount))
	case t.AmountOut < 0 || t.AmountOut > MaxAmount:
		return FieldError(f("amount_out"), "%s must be a whole number of VND from 0 to %d", f("amount_out"), int64(MaxAmount))
	case (t.AmountIn == 0) == (t.AmountOut == 0):
		return FieldError(f("amount_in"), "%s: exactly one of amount_in and amount_out must be positive", field)
	case t.Accumulated != nil && (*t.Accumulated < -MaxAmount || *t.Accumulated > MaxAmount):
		return FieldError(f("accumulated"), "%s must be from %d to %d", f("accumulated"), -int64(MaxAmount), int64(MaxAmount))
	case strings.TrimSpace(t.ReferenceNumber) == "" || len(t.ReferenceNumber) > 128:
		return FieldError(f("reference_number"), "%s is required and must be at most 128 characters", f("reference_number"))
	case len(t.Content) > 2000:
		return FieldError(f("transaction_content"), "%s must be at most 2000 bytes", f("transaction_content"))
	case len(t.SubAccount) > 34:
		return FieldError(f("sub_account"), "%s must be at most 34 characters", f("sub_account"))
	case len(t.References) > MaxOtherReferences:
		return FieldError(f("references"), "%s holds at most %d references, not %d", f("references"), MaxOtherReferences, len(t.References))
	}
	for _, r := range t.References {
		if len(r) > 128 {
			return FieldError(f("references"), "%s: each reference must be at most 128 characters", f("references"))
		}
		if bad := BadText(r, false); bad != "" {
			return FieldError(f("references"), "%s %s", f("references"), bad)
		}
	}
	for _, c := range []struct {
		name, value string
		lines       bool
	}{{"transaction_content", t.Content, true}, {"reference_number", t.ReferenceNumber, false}, {"sub_account", t.SubAccount, false}} {
		if bad := BadText(c.value, c.lines); bad != "" {
			return FieldError(f(c.name), "%s %s", f(c.name), bad)
		}
	}
	return nil
}

// BadText says what makes s unfit to store as text, or "" when nothing
// does: bytes that are not UTF-8, or a control character (C0 or DEL; tab,
// line feed and carriage return are allowed when lines is true). PostgreSQL
// cannot store a NUL in text and refuses invalid UTF-8, and neither has a
// meaning in a memo, a reference or a name.
func BadText(s string, lines bool) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(lines && (c == '\t' || c == '\n' || c == '\r')) {
				return fmt.Sprintf("holds the control character U+%04X", c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return "holds bytes that are not UTF-8"
		}
		i += n
	}
	return ""
}

// IngestResult is what storing one TransactionInput did.
type IngestResult struct {
	ID   int64
	Code string
	// Duplicate is true when the (bank account, reference number) was
	// already stored: nothing was written and ID and Code are the stored ones.
	Duplicate bool
	// PaidOrder is true when the transaction paid an order in full (its
	// match decision is captured or overpaid); Exception when it opened an
	// exception (docs/statements.md, The result of an import).
	PaidOrder, Exception bool
}

// TransactionFilter selects a company's transactions (spec §4.3; docs/api.md,
// Transactions). Zero values mean "no filter".
type TransactionFilter struct {
	BankAccountID   int64
	AccountNumber   string
	ReferenceNumber string
	// FromDate and ToDate are whole days, inclusive, as YYYY-MM-DD.
	FromDate, ToDate string
	AmountIn         *int64
	AmountOut        *int64
	Page, Limit      int
}

// BalanceDiscontinuity records a bank's balance that does not follow from
// the previous row's balance (in bank order) and the amounts: a sign of
// missed transactions. A late row that re-derives the balance updates it.
type BalanceDiscontinuity struct {
	ID            int64
	CompanyID     int64
	BankAccountID int64
	TransactionID int64
	// Expected is the previous balance plus the transaction's amounts;
	// Reported is the balance the feed gave. Gap = Reported - Expected.
	Expected  int64
	Reported  int64
	CreatedAt time.Time
}

// BankAccountStore stores bank accounts.
type BankAccountStore interface {
	// CreateBankAccount stores b and sets b.ID and b.CreatedAt. The same
	// bank and number twice in one company is ECONFLICT.
	CreateBankAccount(ctx context.Context, b *BankAccount) error
	// BankAccount returns the company's bank account, or ENOTFOUND (also
	// when it belongs to another company).
	BankAccount(ctx context.Context, tenant TenantID, id int64) (*BankAccount, error)
	// BankAccounts lists the company's bank accounts by id.
	BankAccounts(ctx context.Context, tenant TenantID) ([]*BankAccount, error)
	// BankAccountByID returns any company's bank account, for operator tools.
	BankAccountByID(ctx context.Context, id int64) (*BankAccount, error)
}

// TransactionStore stores bank transactions.
type TransactionStore interface {
	// IngestTransactions stores a batch of one company's transactions in one
	// database transaction, in order, with codes[i] as the payment code of
	// in[i] ("" for none). A (bank account, reference number) already
	// stored, or earlier in the batch, is reported Duplicate and not stored
	// again, also under concurrent calls. Accumulated is taken from the input
	// when given, else computed as the running balance of the account in
	// bank order (transaction_date, then batch and arrival order), whatever
	// the order rows arrive in: a row dated before stored rows re-derives
	// theirs (docs/api.md, Balances); a batch that would re-derive too many
	// is ECONFLICT. A given balance that does not follow from the previous
	// row's, when that is known (it follows from an earlier given balance),
	// is recorded as a BalanceDiscontinuity. A bank account of another
	// company is ENOTFOUND and nothing is stored.
	IngestTransactions(ctx context.Context, tenant TenantID, in []TransactionInput, codes []string) ([]IngestResult, error)
	// IngestAtomically stores every batch fill passes to ingest (each as
	// IngestTransactions would) in one database transaction: all of them
	// when fill returns nil, none when fill or a batch fails.
	IngestAtomically(ctx context.Context, tenant TenantID, fill func(ingest func(in []TransactionInput, codes []string) ([]IngestResult, error)) error) error
	// Transactions returns one page of the company's transactions, newest
	// first (transaction_date desc, id desc), and the total that match.
	Transactions(ctx context.Context, tenant TenantID, f TransactionFilter) ([]*Transaction, int64, error)
	// TransactionsIfChanged is Transactions for a cache of pages: it reads
	// the tenant's version, a number that moves with every committed change
	// of a listed field of the tenant's transactions and never moves back,
	// and then, unless it equals known, the page as Transactions does. When
	// version == known, list is nil and the caller's copy is current.
	TransactionsIfChanged(ctx context.Context, tenant TenantID, f TransactionFilter, known int64) (list []*Transaction, total, version int64, err error)
	// Transaction returns one of the company's transactions, or ENOTFOUND.
	Transaction(ctx context.Context, tenant TenantID, id int64) (*Transaction, error)
	// BalanceDiscontinuities lists the company's discontinuities, newest first.
	BalanceDiscontinuities(ctx context.Context, tenant TenantID) ([]*BalanceDiscontinuity, error)
	// RecodeTransactions recomputes the code of the company's transactions
	// dated on or after from (all when zero) with extract, and reports how
	// many codes changed.
	RecodeTransactions(ctx context.Context, tenant TenantID, from time.Time, extract func(memo string) string) (int64, error)
}

// WallClock returns the wall-clock reading of t (its fields in its own
// location) as a UTC time. Transaction dates are wall-clock times in the
// business time zone and are stored and compared in this form.
func WallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// SimulatedReference returns a new random bank reference for a sandbox
// transfer: "SIM" and 16 hex digits.
func SimulatedReference() string { return SimulatedReferenceFrom(rand.Reader) }

// SimulatedReferenceFrom is SimulatedReference reading its randomness from
// random (tests pass a fixed one). random must not fail: crypto/rand.Reader
// never does.
func SimulatedReferenceFrom(random io.Reader) string {
	var b [8]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		panic(err) // crypto/rand.Read never returns an error (Go 1.24)
	}
	return "SIM" + strings.ToUpper(hex.EncodeToString(b[:]))
}

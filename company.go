package recon

import (
	"context"
	"fmt"
	"time"
)

// Company statuses.
const (
	CompanyActive   = "active"
	CompanyInactive = "inactive"
)

// DateLayout is the layout of calendar dates in the API (YYYY-MM-DD).
const DateLayout = "2006-01-02"

// DateTimeLayout is the layout of wall-clock times in the API (YYYY-MM-DD HH:MM:SS).
const DateTimeLayout = "2006-01-02 15:04:05"

// Company is a tenant. Every row of tenant data carries its company id.
type Company struct {
	// ID is the tenant's id: the company's own, or for a test tenant's view
	// (Company of a test tenant id) the twin's, with TestOf the company's.
	ID           int64
	TestOf       int64
	FullName     string
	ShortName    string
	Status       string
	Subscription string
	// BeginDate and EndDate are calendar dates, YYYY-MM-DD, or "" when unset.
	BeginDate string
	EndDate   string
	Config    CompanyConfig
	CreatedAt time.Time
}

// CompanyConfig is the company's configuration (spec §2.2; docs/api.md, Company
// API).
type CompanyConfig struct {
	BankSubAccount bool
	Paycode        bool
	// DataStorageDays is the data retention in days (rendered as a string):
	// transactions (with their match decisions and discontinuities) and
	// finished delivery logs older than this are deleted by the server's
	// maintenance job (see RetentionStore). 0 keeps them forever.
	DataStorageDays    int
	PaymentCodeFormats []PaymentCodeFormat
	// Seller is the company's legal details as its invoices name them, and
	// Invoicing how it issues them (docs/invoices.md, The seller). Shared by
	// the company's live and test modes, like every setting.
	Seller    Seller
	Invoicing InvoiceSettings
	// DuplicateWindowDays is how many days apart two transfers may be dated
	// and still be possible duplicates of each other (0: the same day;
	// CheckDuplicateWindow; docs/statements.md, Possible duplicates).
	DuplicateWindowDays int
}

// Validate checks the fields a company must have, new or updated.
func (c *Company) Validate() error {
	switch {
	case c.FullName == "":
		return FieldError("full_name", "full_name is required")
	case len(c.FullName) > 255:
		return FieldError("full_name", "full_name must be at most 255 characters")
	case c.ShortName == "":
		return FieldError("short_name", "short_name is required")
	case len(c.ShortName) > 64:
		return FieldError("short_name", "short_name must be at most 64 characters")
	case c.Status != CompanyActive && c.Status != CompanyInactive:
		return FieldError("status", "status must be %q or %q", CompanyActive, CompanyInactive)
	case c.Config.DataStorageDays < 0 || c.Config.DataStorageDays > MaxDataStorageDays:
		return FieldError("data_storage_time", "data_storage_time must be a number of days from 0 (keep forever) to %d", MaxDataStorageDays)
	}
	for _, d := range []struct{ name, v string }{{"begin_date", c.BeginDate}, {"end_date", c.EndDate}} {
		if d.v == "" {
			continue
		}
		if _, err := time.Parse(DateLayout, d.v); err != nil {
			return FieldError(d.name, "%s must be a date in the form YYYY-MM-DD", d.name)
		}
	}
	if c.BeginDate != "" && c.EndDate != "" && c.EndDate < c.BeginDate {
		return FieldError("end_date", "end_date must not be before begin_date")
	}
	return nil
}

// Active reports whether the company may use the APIs and receive
// deliveries (status active).
func (c *Company) Active() bool { return c.Status == CompanyActive }

// ErrCompanyInactive is the EFORBIDDEN error every surface answers for a
// company whose status is inactive: its credentials authenticate nothing,
// its data is kept and its deliveries wait until it is active again.
func ErrCompanyInactive(id int64) error {
	return Errorf(EFORBIDDEN, "company %d is inactive: its API access and notifications are suspended until an operator activates it", id)
}

// RetentionCutoffs returns, for a retention of days (> 0) and now (in the
// business time zone), the times before which data is deleted:
// transactions dated (wall clock, see WallClock) before the start of the day
// `days` calendar days before now's day, and delivery logs created before
// now minus days×24h. A retention of 0 keeps everything: callers skip it.
func RetentionCutoffs(now time.Time, days int) (transactionsBefore, deliveriesBefore time.Time) {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -days), now.Add(-time.Duration(days) * 24 * time.Hour)
}

// MaxDataStorageDays bounds data_storage_time (100 years).
const MaxDataStorageDays = 36500

// CompanyStore stores companies and their configuration.
type CompanyStore interface {
	// CreateCompany stores c and sets c.ID and c.CreatedAt.
	CreateCompany(ctx context.Context, c *Company) error
	// Company returns the company with the given id, or ENOTFOUND. For a
	// test tenant's id it returns the live company's record and formats with
	// ID the test tenant's and TestOf the company's.
	Company(ctx context.Context, id int64) (*Company, error)
	// CompanyAtEpoch is Company and the authentication epoch
	// (TokenStore.AuthEpoch) read in the same snapshot (Extractors).
	CompanyAtEpoch(ctx context.Context, id int64) (*Company, int64, error)
	// Companies lists every (live) company in id order, without their
	// payment-code formats (an operator's view: it is not tenant data).
	Companies(ctx context.Context) ([]*Company, error)
	// UpdateCompany reads the company (ENOTFOUND when there is none), calls
	// update on it and stores the fields update changed, all in one
	// transaction that holds the company's row, so that concurrent updates
	// of different fields do not undo each other. An error from update is
	// returned as is and nothing is stored. Payment-code formats, ID and
	// CreatedAt are not written (ReplacePaymentCodeFormats changes formats).
	// It returns the company as stored, with its formats. A test tenant's id
	// is EINVALID here and in ReplacePaymentCodeFormats: settings are the
	// live company's.
	UpdateCompany(ctx context.Context, id int64, update func(c *Company) error) (*Company, error)
	// ReplacePaymentCodeFormats replaces the company's whole list of formats
	// in one transaction and returns the configuration as stored.
	ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []PaymentCodeFormat) (*CompanyConfig, error)
}

// String renders a company for logs.
func (c *Company) String() string { return fmt.Sprintf("company %d (%s)", c.ID, c.ShortName) }

// RetentionResult counts what one retention pass deleted.
type RetentionResult struct {
	Transactions int64
	Deliveries   int64
	HubEvents    int64 // lines of link tokens' timelines (recon hub events)
}

// RetentionStore enforces each company's data_storage_time.
type RetentionStore interface {
	// ApplyRetention deletes, for every company with a retention (see
	// RetentionCutoffs; now is in the business time zone), its transactions
	// dated before the cutoff with their match decisions, balance
	// discontinuities and per-day counts, and its finished (delivered or
	// dead) deliveries with their attempts, and the lines of its link
	// tokens' timelines (hub events) older than the deliveries' cutoff;
	// pending deliveries are kept
	// however old. It deletes in small transactions so that ingestion is
	// never held up for long, and may be run by several nodes at once.
	ApplyRetention(ctx context.Context, now time.Time) (RetentionResult, error)
}

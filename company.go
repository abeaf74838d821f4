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
	ID           int64
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

// CompanyConfig is the company's configuration (spec §2.2).
type CompanyConfig struct {
	BankSubAccount bool
	Paycode        bool
	// DataStorageDays is the data retention in days (rendered as a string).
	DataStorageDays    int
	PaymentCodeFormats []PaymentCodeFormat
}

// Validate checks the fields a new company must have.
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
	case c.Config.DataStorageDays < 0:
		return FieldError("data_storage_time", "data_storage_time must not be negative")
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

// CompanyStore stores companies and their configuration.
type CompanyStore interface {
	// CreateCompany stores c and sets c.ID and c.CreatedAt.
	CreateCompany(ctx context.Context, c *Company) error
	// Company returns the company with the given id, or ENOTFOUND.
	Company(ctx context.Context, id int64) (*Company, error)
	// ReplacePaymentCodeFormats replaces the company's whole list of formats
	// in one transaction and returns the configuration as stored.
	ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []PaymentCodeFormat) (*CompanyConfig, error)
}

// String renders a company for logs.
func (c *Company) String() string { return fmt.Sprintf("company %d (%s)", c.ID, c.ShortName) }

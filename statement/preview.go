package statement

import (
	"bufio"
	"context"
	"io"

	"recon"
)

// PreviewRows is how many rows a preview shows.
const PreviewRows = 10

// Preview is what an import of a file would read, before anything is
// stored (docs/statements.md, Preview): the first rows as Recon would store
// them (with the payment code the company's formats find in the memo), the
// count of rows, and the bad rows.
type Preview struct {
	Format Format
	Lines  []Line
	// Codes[i] is the payment code found in Lines[i]'s memo ("" if none).
	Codes []string
	// Rows counts the good rows of the whole file.
	Rows int
	// Bad lists the first MaxSkippedListed bad rows; BadCount counts them.
	Bad      []RowError
	BadCount int
	// Mapped is true when the bank account's saved mapping was used.
	Mapped bool
}

// PreviewStore is what a preview reads: the bank account and its company
// (for the payment code formats), never a write.
type PreviewStore interface {
	BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error)
	Company(ctx context.Context, id int64) (*recon.Company, error)
}

// PreviewFile reads a whole uploaded file as ImportFile would, storing
// nothing: the first n good rows (checked as an import checks them), the
// count of good rows, and the bad ones. A file-level problem is an error.
func PreviewFile(ctx context.Context, s PreviewStore, tenant recon.TenantID, accountID int64, name string, file io.Reader, f Format, opts Options, n int) (*Preview, error) {
	acct, err := s.BankAccount(ctx, tenant, accountID)
	if err != nil {
		return nil, err
	}
	co, err := s.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	if opts.AccountNumber == "" {
		opts.AccountNumber = acct.AccountNumber
	}
	if err := loadMapping(ctx, s, tenant, acct.ID, &opts); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(file, 64<<10)
	switch f {
	case "", "auto":
		head, _ := br.Peek(4096)
		if len(head) == 0 {
			return nil, recon.Errorf(recon.EINVALID, "the statement file is empty")
		}
		if f, err = DetectFormat(name, head); err != nil {
			return nil, err
		}
	case CSV, XLSX, CAMT053, MT940:
	default:
		return nil, recon.FieldError("format", "format must be one of auto, csv, xlsx, camt053, mt940")
	}
	ext := recon.CompanyExtractor(&co.Config)
	now := opts.now()
	pv := &Preview{Format: f, Mapped: opts.Mapping != nil}
	bad := func(e RowError) {
		pv.BadCount++
		if len(pv.Bad) < MaxSkippedListed {
			pv.Bad = append(pv.Bad, e)
		}
	}
	err = ParseFunc(br, f, opts, true, func(l Line) error {
		l.Tx.BankAccountID = acct.ID
		if verr := l.Tx.Validate("", now); verr != nil {
			bad(RowError{Row: l.Row, Err: verr})
			return nil
		}
		pv.Rows++
		if len(pv.Lines) < n {
			pv.Lines = append(pv.Lines, l)
			pv.Codes = append(pv.Codes, ext.Extract(l.Tx.Content))
		}
		return nil
	}, bad)
	if err != nil {
		return nil, err
	}
	return pv, nil
}

package statement

import (
	"context"
	"fmt"
	"io"

	"recon"
)

// Report is what an import did.
type Report struct {
	Format     Format
	Imported   int
	Duplicates int
	// Skipped lists the rows left out with skipInvalid; empty otherwise.
	Skipped []RowError
}

// Import parses a statement of the company's bank account and stores its
// transactions through the ingestion pipeline (payment codes, duplicates,
// balances), 1000 at a time. The bank account must belong to the company.
//
// All or nothing: without skipInvalid, a bad row fails the import with a
// *RowError naming the row, and nothing is stored. With skipInvalid, bad rows
// are skipped and reported. Every row is checked, by the parser and by the
// domain's rules, before the first is stored; were storage to fail part way,
// importing the same file again stores only what is missing, as references
// already stored are duplicates.
func Import(ctx context.Context, s interface {
	recon.IngestStore
	BankAccount(ctx context.Context, companyID, id int64) (*recon.BankAccount, error)
}, companyID, accountID int64, r io.Reader, f Format, opts Options, skipInvalid bool) (*Report, error) {
	acct, err := s.BankAccount(ctx, companyID, accountID)
	if err != nil {
		return nil, err
	}
	if opts.AccountNumber == "" {
		opts.AccountNumber = acct.AccountNumber
	}
	lines, skipped, err := Parse(r, f, opts, skipInvalid)
	if err != nil {
		return nil, err
	}
	rep := &Report{Format: f, Skipped: skipped}
	in := make([]recon.TransactionInput, 0, len(lines))
	for _, l := range lines {
		l.Tx.BankAccountID = acct.ID
		if err := l.Tx.Validate(""); err != nil {
			re := RowError{Row: l.Row, Err: err}
			if !skipInvalid {
				return nil, &re
			}
			rep.Skipped = append(rep.Skipped, re)
			continue
		}
		in = append(in, l.Tx)
	}
	for start := 0; start < len(in); start += recon.MaxIngestBatch {
		res, err := recon.Ingest(ctx, s, companyID, in[start:min(start+recon.MaxIngestBatch, len(in))])
		if err != nil {
			return rep, fmt.Errorf("storing rows %d..: %w", start+1, err)
		}
		for _, x := range res {
			if x.Duplicate {
				rep.Duplicates++
			} else {
				rep.Imported++
			}
		}
	}
	return rep, nil
}

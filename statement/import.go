package statement

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"recon"
)

// MaxSkippedListed bounds Report.Skipped: a file of a million bad rows
// reports the first ones and counts the rest.
const MaxSkippedListed = 1000

// Report is what an import did.
type Report struct {
	Format     Format
	Imported   int
	Duplicates int
	// OrdersPaid counts the new rows that paid an order in full;
	// ExceptionsOpened the new rows that opened an exception (docs/statements.md,
	// The result of an import). From and To are the first and last dates of
	// the new rows (zero when none).
	OrdersPaid, ExceptionsOpened int
	From, To                     time.Time
	// Skipped lists the first MaxSkippedListed rows left out with
	// skipInvalid; SkippedCount counts them all. Both are empty otherwise.
	Skipped      []RowError
	SkippedCount int
}

// MappingStore is the bank accounts' saved column mappings: a Store that
// has it gives Import the account's mapping when Options.Mapping is nil.
type MappingStore interface {
	StatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64) (*recon.StatementMapping, error)
}

// Store is the storage Import needs: the bank account, and the batches
// stored in one database transaction.
type Store interface {
	recon.AtomicIngestStore
	// BankAccount is recon.BankAccountStore's.
	BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error)
}

// Import parses a statement of the company's bank account and stores its
// transactions through the ingestion pipeline (payment codes, duplicates,
// balances). The bank account must belong to the company.
//
// All or nothing: every row is stored in one database transaction, which
// commits only when the whole file has been read and checked and every row
// stored. Whatever fails and wherever (a bad row without skipInvalid, a
// closing balance that does not add up, a running balance out of range, the
// reader, storage), nothing is stored. A bad row fails the import with a
// *RowError naming the row; with skipInvalid, bad rows are skipped and
// reported instead.
//
// One streaming pass: rows are parsed, checked and stored a batch of
// recon.MaxIngestBatch at a time, so memory does not grow with the file. The
// database transaction lasts as long as the pass: give Import a reader that
// does not wait on a slow client (the API spools uploads to a file first).
func Import(ctx context.Context, s Store, tenant recon.TenantID, accountID int64, r io.Reader, f Format, opts Options, skipInvalid bool) (*Report, error) {
	acct, err := s.BankAccount(ctx, tenant, accountID)
	if err != nil {
		return nil, err
	}
	if opts.AccountNumber == "" {
		opts.AccountNumber = acct.AccountNumber
	}
	if err := loadMapping(ctx, s, tenant, acct.ID, &opts); err != nil {
		return nil, err
	}
	now := opts.now()
	rep := &Report{Format: f}
	skipped := func(e RowError) {
		rep.SkippedCount++
		if len(rep.Skipped) < MaxSkippedListed {
			rep.Skipped = append(rep.Skipped, e)
		}
	}
	err = recon.IngestAll(ctx, s, tenant, now, func(add func([]recon.TransactionInput) ([]recon.IngestResult, error)) error {
		batch := make([]recon.TransactionInput, 0, recon.MaxIngestBatch)
		rows := make([]int, 0, recon.MaxIngestBatch)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			res, err := add(batch)
			if err != nil {
				return rowOf(err, rows)
			}
			for i, x := range res {
				if x.Duplicate {
					rep.Duplicates++
					continue
				}
				rep.Imported++
				if x.PaidOrder {
					rep.OrdersPaid++
				}
				if x.Exception {
					rep.ExceptionsOpened++
				}
				d := batch[i].TransactionDate
				if rep.From.IsZero() || d.Before(rep.From) {
					rep.From = d
				}
				if d.After(rep.To) {
					rep.To = d
				}
			}
			batch, rows = batch[:0], rows[:0]
			return nil
		}
		err := ParseFunc(r, f, opts, skipInvalid, func(l Line) error {
			l.Tx.BankAccountID = acct.ID
			if err := l.Tx.Validate("", now); err != nil {
				re := RowError{Row: l.Row, Err: err}
				if !skipInvalid {
					return &re
				}
				skipped(re)
				return nil
			}
			batch, rows = append(batch, l.Tx), append(rows, l.Row)
			if len(batch) == recon.MaxIngestBatch {
				return flush()
			}
			return nil
		}, skipped)
		if err != nil {
			return err
		}
		return flush()
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// loadMapping sets opts.Mapping to the bank account's saved mapping when
// the caller gave none and the store keeps them.
func loadMapping(ctx context.Context, s any, tenant recon.TenantID, accountID int64, opts *Options) error {
	ms, ok := s.(MappingStore)
	if !ok || opts.Mapping != nil {
		return nil
	}
	m, err := ms.StatementMapping(ctx, tenant, accountID)
	if err != nil {
		return err
	}
	opts.Mapping = m
	return nil
}

// rowOf turns a batch error naming an item ("transactions[3]", such as a
// running balance out of range) into a RowError naming the file's row.
func rowOf(err error, rows []int) error {
	var re *recon.Error
	if !errors.As(err, &re) || re.Code != recon.EINVALID {
		return err
	}
	for field := range re.Fields {
		i, ok := strings.CutPrefix(field, "transactions[")
		if !ok {
			continue
		}
		n, err2 := strconv.Atoi(strings.TrimSuffix(i, "]"))
		if err2 != nil || n < 0 || n >= len(rows) {
			continue
		}
		msg := strings.TrimPrefix(re.Message, field+": ")
		return &RowError{Row: rows[n], Err: &recon.Error{Code: recon.EINVALID, Message: msg, Fields: map[string][]string{"row": {msg}}, Err: re.Err}}
	}
	return err
}

// ImportFile is Import of an uploaded file named name (the API's and the
// dashboard's uploads): f "" or "auto" detects the format from the name and
// the first bytes, as DetectFormat. Give it a file, not a reader that waits
// on a slow client. When the import fails on a row (without skipInvalid,
// nothing stored), the report that comes with the error lists every bad row
// of the file in Skipped (read again, storing nothing), so that the uploader
// can fix them all at once.
func ImportFile(ctx context.Context, s Store, tenant recon.TenantID, accountID int64, name string, file io.ReadSeeker, f Format, opts Options, skipInvalid bool) (*Report, error) {
	if err := loadMapping(ctx, s, tenant, accountID, &opts); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(file, 64<<10)
	switch f {
	case "", "auto":
		head, _ := br.Peek(4096)
		if len(head) == 0 {
			return nil, recon.Errorf(recon.EINVALID, "the statement file is empty").Saying("st_empty")
		}
		var err error
		if f, err = DetectFormat(name, head); err != nil {
			return nil, err
		}
	case CSV, XLSX, CAMT053, MT940:
	default:
		return nil, recon.FieldError("format", "format must be one of auto, csv, xlsx, camt053, mt940")
	}
	rep, err := Import(ctx, s, tenant, accountID, br, f, opts, skipInvalid)
	var rowErr *RowError
	if err == nil || !errors.As(err, &rowErr) {
		return rep, err
	}
	rep = &Report{Format: f}
	now := opts.now()
	if _, serr := file.Seek(0, io.SeekStart); serr != nil {
		return nil, err
	}
	bad := func(e RowError) {
		rep.SkippedCount++
		if len(rep.Skipped) < MaxSkippedListed {
			rep.Skipped = append(rep.Skipped, e)
		}
	}
	perr := ParseFunc(file, f, opts, true, func(l Line) error {
		if verr := l.Tx.Validate("", now); verr != nil {
			bad(RowError{Row: l.Row, Err: verr})
		}
		return nil
	}, bad)
	if perr != nil || rep.SkippedCount == 0 { // a file-level problem, or a row bad only in storage
		rep.Skipped, rep.SkippedCount = []RowError{*rowErr}, 1
	}
	return rep, err
}

// now is the business time of an import: Options.Clock's, else the system's.
func (o *Options) now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

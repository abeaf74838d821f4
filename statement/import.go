package statement

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// ImportID is the statement's import record (docs/statements.md,
	// Balance proof), 0 when the store keeps none; Repeated when the same
	// file was imported into the account before (ImportID is that import).
	ImportID int64
	Repeated bool
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
	rec := &recon.StatementRecord{Import: recon.StatementImport{BankAccountID: acct.ID, Format: string(f), FileName: opts.FileName}}
	sum := newStatementSum(&opts)
	hash := sha256.New()
	r = io.TeeReader(r, hash)
	skipped := func(e RowError) {
		rep.SkippedCount++
		if len(rep.Skipped) < MaxSkippedListed {
			rep.Skipped = append(rep.Skipped, e)
		}
		rec.Add(recon.StatementEntry{Row: e.Row, Note: truncNote(e.Error())})
	}
	err = recon.IngestAll(recon.RecordingStatement(ctx, rec), s, tenant, now, func(add func([]recon.TransactionInput) ([]recon.IngestResult, error)) error {
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
				amount := batch[i].AmountIn - batch[i].AmountOut
				rec.Add(recon.StatementEntry{Row: rows[i], TransactionID: x.ID, New: !x.Duplicate, Amount: &amount})
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
			if err := sum.add(l); err != nil {
				return err
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
		if err := flush(); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, r); err != nil { // the rest of the file, for its hash
			return fmt.Errorf("statement: reading the file: %w", err)
		}
		imp := &rec.Import
		imp.FileSHA256 = hex.EncodeToString(hash.Sum(nil))
		sum.fill(imp, now)
		imp.Imported, imp.Duplicates, imp.Skipped = int64(rep.Imported), int64(rep.Duplicates), int64(rep.SkippedCount)
		imp.Entries = imp.Imported + imp.Duplicates + imp.Skipped
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.ImportID, rep.Repeated = rec.Import.ID, rec.Import.Repeated
	return rep, nil
}

// maxNote bounds the problem recorded with a skipped entry.
const maxNote = 500

func truncNote(s string) string {
	if len(s) <= maxNote {
		return s
	}
	s = s[:maxNote]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// statementSum follows a file's stored lines for its import record: the
// sums in and out, the first and last dates, and, for a file stating no
// balances (CSV, a workbook), its first and last lines' balances.
type statementSum struct {
	opts        *Options
	in, out     int64
	from, to    string
	first, last Line
	n           int
	allBalances bool
}

func newStatementSum(opts *Options) *statementSum {
	if opts.Balances == nil {
		opts.Balances = &Balances{}
	}
	return &statementSum{opts: opts, allBalances: true}
}

func (s *statementSum) add(l Line) error {
	var ok bool
	if s.in, ok = recon.AddAmounts(s.in, l.Tx.AmountIn); !ok {
		return fileErr("the statement's money in adds up to more than %d VND", int64(math.MaxInt64))
	}
	if s.out, ok = recon.AddAmounts(s.out, l.Tx.AmountOut); !ok {
		return fileErr("the statement's money out adds up to more than %d VND", int64(math.MaxInt64))
	}
	d := l.Tx.TransactionDate.Format(recon.DateLayout)
	if s.from == "" || d < s.from {
		s.from = d
	}
	if d > s.to {
		s.to = d
	}
	if s.n == 0 {
		s.first = l
	}
	s.last = l
	s.n++
	s.allBalances = s.allBalances && l.Tx.Accumulated != nil
	return nil
}

// fill sets the import's period and balances (docs/statements.md, Balance
// proof): the period runs from the first entry's day to the last one's or
// the closing balance's, whichever is later (the import's day when the file
// has neither); the balances are those the file states or, without any,
// those of a balance column on every row: the first row's balance before
// it and the last row's after it, in the order of their dates (a file
// listing its rows newest first is read backwards).
func (s *statementSum) fill(imp *recon.StatementImport, now time.Time) {
	b := s.opts.Balances
	imp.In, imp.Out = s.in, s.out
	imp.From, imp.To = s.from, s.to
	if !b.ClosingDate.IsZero() {
		if d := b.ClosingDate.Format(recon.DateLayout); d > imp.To {
			imp.To = d
		}
	}
	if imp.To == "" {
		loc := s.opts.Location
		if loc == nil {
			loc = defaultLocation()
		}
		imp.To = now.In(loc).Format(recon.DateLayout)
	}
	if imp.From == "" {
		imp.From = imp.To
	}
	imp.Opening, imp.Closing = b.Opening, b.Closing
	if b.Statements > 0 || s.n == 0 || !s.allBalances {
		return
	}
	first, last := s.first.Tx, s.last.Tx
	if first.TransactionDate.After(last.TransactionDate) {
		first, last = last, first
	}
	opening, ok := recon.AddAmounts(*first.Accumulated, first.AmountOut-first.AmountIn)
	if !ok {
		return
	}
	closing := *last.Accumulated
	imp.Opening, imp.Closing = &opening, &closing
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
	if opts.FileName == "" {
		opts.FileName = name
	}
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

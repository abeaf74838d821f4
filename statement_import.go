package recon

import (
	"context"
	"time"
)

// StatementImport is the record of one statement file imported into a bank
// account (docs/statements.md, Balance proof): its period (inclusive days in
// the business time zone), the balances it stated (nil when it gave none),
// its entries and their sums in and out (exact VND), and what the import
// did with them.
type StatementImport struct {
	ID, CompanyID, BankAccountID int64
	Format, FileName             string
	// FileSHA256 identifies the file: the same bytes imported again into
	// the account keep the first record (Repeated).
	FileSHA256 string
	From, To   string // YYYY-MM-DD
	// Opening and Closing are the statement's balances: camt.053 OPBD and
	// CLBD, MT940 :60F: and :62F:, or what a balance column gives.
	Opening, Closing              *int64
	Entries, In, Out              int64
	Imported, Duplicates, Skipped int64
	CreatedAt                     time.Time
	// Repeated is set by the store when the file was imported before: ID
	// is then the first import's, and nothing new was recorded.
	Repeated bool
}

// StatementEntry is one entry of an imported statement: the file's row, the
// transaction it became (New) or was recognised as, and its signed amount
// (in minus out). A row skipped as invalid has no transaction, no amount and
// its problem in Note.
type StatementEntry struct {
	Row           int
	TransactionID int64
	New           bool
	Amount        *int64
	Note          string
}

// StatementRecord is what an import records of its statement, carried by the
// context of the import's recon.IngestAll (RecordingStatement): the store
// writes Import and the entries added in the database transaction that
// stores the rows, so that they commit together.
type StatementRecord struct {
	Import  StatementImport
	pending []StatementEntry
}

// Add queues entries for the store to write.
func (r *StatementRecord) Add(e ...StatementEntry) { r.pending = append(r.pending, e...) }

// Take returns the queued entries and empties the queue.
func (r *StatementRecord) Take() []StatementEntry {
	p := r.pending
	r.pending = nil
	return p
}

type statementRecordKey struct{}

// RecordingStatement returns a context carrying rec: a store's
// IngestAtomically under it records the statement (StatementRecordOf).
func RecordingStatement(ctx context.Context, rec *StatementRecord) context.Context {
	return context.WithValue(ctx, statementRecordKey{}, rec)
}

// StatementRecordOf is the record ctx carries, nil when none.
func StatementRecordOf(ctx context.Context) *StatementRecord {
	rec, _ := ctx.Value(statementRecordKey{}).(*StatementRecord)
	return rec
}

// The causes of a difference between a statement's closing balance and
// Recon's balance over its period (docs/statements.md, Balance proof). The
// list of causes is one table, sqlstore's proofCauses: a new cause is one
// line there and one constant here.
const (
	// CauseOnlyInRecon: a row Recon counts in the period that is none of
	// the statement's entries (a feed's row the bank did not book).
	CauseOnlyInRecon = "only_in_recon"
	// CauseMissingInRecon: an entry of the statement whose row Recon does
	// not hold in the period (skipped as invalid, deleted, dated outside
	// the period, or an entry sharing another's reference).
	CauseMissingInRecon = "missing_in_recon"
	// CauseAmountDiffers: an entry recognised as a stored row (the same
	// reference) whose amount differs from the entry's.
	CauseAmountDiffers = "amount_differs"
	// CausePossibleDuplicate: an entry stored as a possible duplicate of a
	// row Recon counts (docs/statements.md, Possible duplicates); its effect
	// is zero: it waits for someone to say duplicate or distinct.
	CausePossibleDuplicate = "possible_duplicate"
)

// ProofCause is one kind of difference: how many rows, their effect on the
// difference (the closing balance minus Recon's; Unknown counts the rows
// whose amount is unknown, skipped as invalid, left out of it), and the
// first rows.
type ProofCause struct {
	Kind    string
	Count   int64
	Effect  int64
	Unknown int64
	Rows    []ProofRow
}

// ProofRow is a row explaining a difference: a Recon transaction
// (TransactionID, its date, reference and amounts) and, for an entry of the
// statement, its Row, Amount and Note. Effect is what it adds to the
// difference (nil when its amount is unknown: a skipped row).
type ProofRow struct {
	TransactionID       int64
	Row                 int
	TransactionDate     time.Time
	ReferenceNumber     string
	AmountIn, AmountOut int64
	Amount              *int64
	Effect              *int64
	Note                string
}

// StatementDiscontinuity is an opening balance that does not join the
// closing balance of the account's previous statement (the latest import
// whose period ends before this one starts): Gap = Opening - PreviousClosing.
type StatementDiscontinuity struct {
	PreviousImportID int64
	PreviousTo       string
	PreviousClosing  int64
	Opening          int64
	Gap              int64
}

// StatementProof proves an imported statement's balances against the rows
// Recon holds (docs/statements.md, Balance proof): ReconIn and ReconOut sum
// the rows Recon counts on the account in the statement's period;
// ReconClosing is the statement's opening plus them, Difference the
// statement's closing minus ReconClosing (both nil without the balances);
// Proved when the difference is zero. Unexplained is the part of the
// difference the causes' effects do not account for.
type StatementProof struct {
	Import                   *StatementImport
	ReconIn, ReconOut        int64
	ReconRows                int64
	ReconClosing, Difference *int64
	Unexplained              *int64
	Proved                   bool
	Causes                   []ProofCause
	Discontinuity            *StatementDiscontinuity
}

// MaxReportDays bounds the days of the reconciliation report, whose
// balances are computed for each account and day (docs/dashboard.md,
// Report).
const MaxReportDays = 366

// DayBalance is a line of the reconciliation report's balances
// (docs/dashboard.md, Report): for a bank account and a day, the bank's
// balance (the closing of a statement ending that day, nil when none),
// Recon's balance at the end of the day and the difference, with its causes
// (those of that statement's proof, rows left out) and the statement.
// Basis says what Recon's balance runs from: "statement" (the opening of
// the account's latest statement started on or before the day, plus the
// rows counted since) or "running" (no statement yet: the balance of the
// day's last row, docs/api.md, Balances); nil when the account has no row
// by then.
type DayBalance struct {
	BankAccountID int64
	AccountNumber string
	Date          string
	BankBalance   *int64
	ReconBalance  *int64
	Basis         string
	Difference    *int64
	ImportID      int64
	Causes        []ProofCause
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"time"

	"recon"
)

// This file keeps the imported statements and proves their balances
// (docs/statements.md, Balance proof; migration 00045).

// statementWriter writes a statement's import record within the database
// transaction of IngestAtomically: the statement_imports row first (to
// hold the entries), the entries as the import queues them, the row's
// figures last.
type statementWriter struct {
	db        *DB
	companyID int64
	rec       *recon.StatementRecord
	seq       int64
}

// entryChunk is how many entries one INSERT writes (7 parameters each).
const entryChunk = 1000

func (db *DB) startStatement(ctx context.Context, tx *sql.Tx, companyID int64, rec *recon.StatementRecord) (*statementWriter, error) {
	imp := &rec.Import
	imp.CompanyID, imp.CreatedAt = companyID, db.now()
	err := tx.QueryRowContext(ctx, `INSERT INTO statement_imports (company_id, bank_account_id, format, file_name, period_from, period_to,
			entries, sum_in, sum_out, imported, duplicates, skipped, created_at)
		VALUES ($1, $2, $3, $4, '', '', 0, 0, 0, 0, 0, 0, $5) RETURNING id`,
		companyID, imp.BankAccountID, imp.Format, imp.FileName, imp.CreatedAt).Scan(&imp.ID)
	if db.d.violation(err) == foreignKeyViolation {
		return nil, notFound(err, "bank account %d not found", imp.BankAccountID)
	}
	if err != nil {
		return nil, internal(err, "record statement import")
	}
	return &statementWriter{db: db, companyID: companyID, rec: rec}, nil
}

// flush writes the entries queued so far. A nil writer writes nothing.
func (w *statementWriter) flush(ctx context.Context, tx *sql.Tx) error {
	if w == nil {
		return nil
	}
	entries := w.rec.Take()
	for len(entries) > 0 {
		n := min(len(entries), entryChunk)
		var q strings.Builder
		q.WriteString(`INSERT INTO statement_import_entries (import_id, seq, file_row, transaction_id, is_new, amount, note) VALUES `)
		args := make([]any, 0, 7*n)
		for i, e := range entries[:n] {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(" + w.db.params(len(args)+1, 7) + ")")
			w.seq++
			var note sql.NullString
			if e.Note != "" {
				note = sql.NullString{String: e.Note, Valid: true}
			}
			var amount sql.NullInt64
			if e.Amount != nil {
				amount = sql.NullInt64{Int64: *e.Amount, Valid: true}
			}
			args = append(args, w.rec.Import.ID, w.seq, e.Row, idArg(e.TransactionID), e.New, amount, note)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return internal(err, "record statement entries")
		}
		entries = entries[n:]
	}
	return nil
}

// finish writes the last entries and the import's figures. A file imported
// into the account before (the same SHA-256) that stored nothing new keeps
// its first record: this one is removed and the record says Repeated, with
// the first one's id. One that stored rows again (retention had deleted
// them) replaces the first record, whose entries lost their rows.
func (w *statementWriter) finish(ctx context.Context, tx *sql.Tx) error {
	if w == nil {
		return nil
	}
	if err := w.flush(ctx, tx); err != nil {
		return err
	}
	imp := &w.rec.Import
	var first int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM statement_imports WHERE company_id = $1 AND bank_account_id = $2 AND file_sha256 = $3`,
		w.companyID, imp.BankAccountID, imp.FileSHA256).Scan(&first)
	switch {
	case err == nil && imp.Imported == 0:
		if _, err := tx.ExecContext(ctx, `DELETE FROM statement_imports WHERE id = $1`, imp.ID); err != nil {
			return internal(err, "record statement import")
		}
		imp.ID, imp.Repeated = first, true
		return nil
	case err == nil:
		if _, err := tx.ExecContext(ctx, `DELETE FROM statement_imports WHERE id = $1`, first); err != nil {
			return internal(err, "record statement import")
		}
	case !errors.Is(err, sql.ErrNoRows):
		return internal(err, "record statement import")
	}
	_, err = tx.ExecContext(ctx, `UPDATE statement_imports SET file_sha256 = $1, period_from = $2, period_to = $3, opening = $4, closing = $5,
			entries = $6, sum_in = $7, sum_out = $8, imported = $9, duplicates = $10, skipped = $11
		WHERE id = $12`,
		imp.FileSHA256, imp.From, imp.To, nullAmount(imp.Opening), nullAmount(imp.Closing),
		imp.Entries, imp.In, imp.Out, imp.Imported, imp.Duplicates, imp.Skipped, imp.ID)
	if db := w.db; db.d.violation(err) == uniqueViolation {
		return conflict(err, "the same statement file is being imported into bank account %d at the same time: retry", imp.BankAccountID)
	}
	if err != nil {
		return internal(err, "record statement import")
	}
	return nil
}

func nullAmount(v *int64) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *v, Valid: true}
}

func amountOf(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

const statementImportColumns = `id, company_id, bank_account_id, format, file_name, COALESCE(file_sha256, ''), period_from, period_to,
	opening, closing, entries, sum_in, sum_out, imported, duplicates, skipped, created_at`

func scanStatementImport(row interface{ Scan(...any) error }) (*recon.StatementImport, error) {
	var imp recon.StatementImport
	var opening, closing sql.NullInt64
	err := row.Scan(&imp.ID, &imp.CompanyID, &imp.BankAccountID, &imp.Format, &imp.FileName, &imp.FileSHA256, &imp.From, &imp.To,
		&opening, &closing, &imp.Entries, &imp.In, &imp.Out, &imp.Imported, &imp.Duplicates, &imp.Skipped, &imp.CreatedAt)
	if err != nil {
		return nil, err
	}
	imp.Opening, imp.Closing = amountOf(opening), amountOf(closing)
	imp.CreatedAt = imp.CreatedAt.UTC()
	return &imp, nil
}

// StatementImports lists the statements imported into one of the tenant's
// bank accounts, the latest period first, a page at a time (page from 1),
// and their total. ENOTFOUND when the account is not the tenant's.
func (db *DB) StatementImports(ctx context.Context, tenant recon.TenantID, bankAccountID int64, page, limit int) ([]*recon.StatementImport, int64, error) {
	if _, err := db.BankAccount(ctx, tenant, bankAccountID); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM statement_imports WHERE company_id = $1 AND bank_account_id = $2`,
		tenant.ID(), bankAccountID).Scan(&total); err != nil {
		return nil, 0, internal(err, "count statement imports")
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+statementImportColumns+` FROM statement_imports
		WHERE company_id = $1 AND bank_account_id = $2 ORDER BY period_to DESC, id DESC LIMIT $3 OFFSET $4`,
		tenant.ID(), bankAccountID, limit, (page-1)*limit)
	if err != nil {
		return nil, 0, internal(err, "list statement imports")
	}
	defer rows.Close()
	out := []*recon.StatementImport{}
	for rows.Next() {
		imp, err := scanStatementImport(rows)
		if err != nil {
			return nil, 0, internal(err, "list statement imports")
		}
		out = append(out, imp)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, internal(err, "list statement imports")
	}
	return out, total, nil
}

// StatementImport returns one import of the tenant's bank account, or
// ENOTFOUND (another company's, another account's, or none).
func (db *DB) StatementImport(ctx context.Context, tenant recon.TenantID, bankAccountID, id int64) (*recon.StatementImport, error) {
	imp, err := scanStatementImport(db.db.QueryRowContext(ctx, `SELECT `+statementImportColumns+` FROM statement_imports
		WHERE company_id = $1 AND bank_account_id = $2 AND id = $3`, tenant.ID(), bankAccountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "statement import %d of bank account %d not found", id, bankAccountID)
	}
	if err != nil {
		return nil, internal(err, "read statement import")
	}
	return imp, nil
}

// countedRow is the condition on a transaction t for Recon to count it in
// an account's balance: every stored row but a possible duplicate awaiting
// its decision and one confirmed a duplicate (dupOut; docs/statements.md,
// Possible duplicates).
const countedRow = `NOT (` + dupOut + `)`

// asDuplicateOf holds when one of the statement's entries was stored as a
// possible or confirmed duplicate of t: the statement's transfer is then
// the one Recon counts as t, which is no row "only in Recon".
const asDuplicateOf = `EXISTS (SELECT 1 FROM statement_import_entries e JOIN transactions d ON d.id = e.transaction_id
		WHERE e.import_id = $1 AND d.company_id = $2 AND d.dup_of = t.id
			AND d.dup_state IN ('` + recon.DupPossible + `', '` + recon.DupConfirmed + `'))`

// firstEntry holds for the first of an import's entries recognised as one
// transaction (a later one is missing in Recon: the bank listed it twice).
const firstEntry = `NOT EXISTS (SELECT 1 FROM statement_import_entries e2 WHERE e2.transaction_id = e.transaction_id AND e2.import_id = e.import_id AND e2.seq < e.seq)`

// proofCause is one kind of difference between a statement and Recon's
// rows: the query of its rows and what each adds to the difference (the
// statement's closing balance minus Recon's). Each query takes $1 the
// import, $2 the company, $3 the bank account, $4 and $5 the period's
// bounds, and selects the transaction's id, the entry's row, the
// transaction's date, reference and amounts, the entry's amount and note.
type proofCause struct {
	kind   string
	query  string
	effect func(r *recon.ProofRow) *int64
}

// proofCauses is the one table of the causes (docs/statements.md, Balance
// proof): a new cause is one more line. An entry counts under one cause at
// most.
var proofCauses = []proofCause{
	{recon.CauseOnlyInRecon, `SELECT t.id, 0, t.transaction_date, t.reference_number, t.amount_in, t.amount_out, NULL, ''
		FROM transactions t
		WHERE t.company_id = $2 AND t.bank_account_id = $3 AND t.transaction_date >= $4 AND t.transaction_date < $5 AND ` + countedRow + `
		  AND NOT EXISTS (SELECT 1 FROM statement_import_entries e WHERE e.transaction_id = t.id AND e.import_id = $1)
		  AND NOT ` + asDuplicateOf + `
		ORDER BY t.transaction_date, t.id`,
		func(r *recon.ProofRow) *int64 { v := r.AmountOut - r.AmountIn; return &v }},
	{recon.CauseMissingInRecon, `SELECT COALESCE(t.id, 0), e.file_row, t.transaction_date, COALESCE(t.reference_number, ''), COALESCE(t.amount_in, 0), COALESCE(t.amount_out, 0), e.amount, COALESCE(e.note, '')
		FROM statement_import_entries e LEFT JOIN transactions t ON t.id = e.transaction_id AND t.company_id = $2 AND t.bank_account_id = $3
		WHERE e.import_id = $1 AND (t.id IS NULL OR t.transaction_date < $4 OR t.transaction_date >= $5 OR NOT ` + firstEntry + `)
		ORDER BY e.seq`,
		func(r *recon.ProofRow) *int64 { return r.Amount }},
	// An entry stored as a possible duplicate of a row Recon counts (the
	// feed's, under another reference): Recon's balance holds the transfer
	// once, through that row, so it changes nothing while it waits; listed
	// so that someone resolves it. Resolved a duplicate, it is that row;
	// distinct, it counts and the other row is only in Recon.
	{recon.CausePossibleDuplicate, `SELECT t.id, e.file_row, t.transaction_date, t.reference_number, t.amount_in, t.amount_out, e.amount, ''
		FROM statement_import_entries e JOIN transactions t ON t.id = e.transaction_id
		WHERE e.import_id = $1 AND t.company_id = $2 AND t.bank_account_id = $3 AND t.transaction_date >= $4 AND t.transaction_date < $5
		  AND t.dup_state = '` + recon.DupPossible + `' AND ` + firstEntry + `
		ORDER BY e.seq`,
		func(*recon.ProofRow) *int64 { var none int64; return &none }},
	{recon.CauseAmountDiffers, `SELECT t.id, e.file_row, t.transaction_date, t.reference_number, t.amount_in, t.amount_out, e.amount, ''
		FROM statement_import_entries e JOIN transactions t ON t.id = e.transaction_id
		WHERE e.import_id = $1 AND t.company_id = $2 AND t.bank_account_id = $3 AND t.transaction_date >= $4 AND t.transaction_date < $5 AND ` + countedRow + `
		  AND e.amount <> t.amount_in - t.amount_out AND ` + firstEntry + `
		ORDER BY e.seq`,
		func(r *recon.ProofRow) *int64 {
			if r.Amount == nil {
				return nil
			}
			v := *r.Amount - (r.AmountIn - r.AmountOut)
			return &v
		}},
}

// proofListLimit bounds the rows listed under each cause; all are counted.
const proofListLimit = 500

// periodBounds returns the wall-clock bounds of inclusive days from..to.
func periodBounds(from, to string) (time.Time, time.Time, error) {
	f, err := time.Parse(recon.DateLayout, from)
	if err != nil {
		return time.Time{}, time.Time{}, recon.FieldError("from", "from must be a date in the form YYYY-MM-DD")
	}
	t, err := time.Parse(recon.DateLayout, to)
	if err != nil {
		return time.Time{}, time.Time{}, recon.FieldError("to", "to must be a date in the form YYYY-MM-DD")
	}
	return f, t.AddDate(0, 0, 1), nil
}

// StatementProof proves one imported statement of the tenant's bank
// account against the rows Recon holds now (docs/statements.md, Balance
// proof). ENOTFOUND when the import is not the tenant's account's.
func (db *DB) StatementProof(ctx context.Context, tenant recon.TenantID, bankAccountID, id int64) (*recon.StatementProof, error) {
	imp, err := db.StatementImport(ctx, tenant, bankAccountID, id)
	if err != nil {
		return nil, err
	}
	return db.prove(ctx, imp, proofListLimit)
}

// prove computes imp's proof, listing at most list rows per cause.
func (db *DB) prove(ctx context.Context, imp *recon.StatementImport, list int) (*recon.StatementProof, error) {
	from, to, err := periodBounds(imp.From, imp.To)
	if err != nil {
		return nil, internal(err, "statement period")
	}
	p := &recon.StatementProof{Import: imp}
	if p.ReconRows, p.ReconIn, p.ReconOut, err = db.countedSums(ctx, imp.CompanyID, imp.BankAccountID, from, to); err != nil {
		return nil, err
	}
	explained, known := int64(0), true
	for _, c := range proofCauses {
		cause, err := db.proofCause(ctx, c, imp, from, to, list)
		if err != nil {
			return nil, err
		}
		if cause.Count == 0 {
			continue
		}
		p.Causes = append(p.Causes, *cause)
		var ok bool
		if explained, ok = recon.AddAmounts(explained, cause.Effect); !ok {
			known = false
		}
		known = known && cause.Unknown == 0
	}
	if imp.Opening != nil {
		closing, ok := recon.AddAmounts(*imp.Opening, p.ReconIn)
		if ok {
			closing, ok = recon.AddAmounts(closing, -p.ReconOut)
		}
		if ok {
			p.ReconClosing = &closing
		}
	}
	if imp.Closing != nil && p.ReconClosing != nil {
		if d, ok := recon.AddAmounts(*imp.Closing, -*p.ReconClosing); ok {
			p.Difference = &d
			p.Proved = d == 0
			if u, ok := recon.AddAmounts(d, -explained); ok && known {
				p.Unexplained = &u
			}
		}
	}
	p.Discontinuity, err = db.statementDiscontinuity(ctx, imp)
	return p, err
}

// countedSums counts and sums the rows Recon counts on the account in
// [from, to): the amounts in halves, as the reconciliation report does, so
// that no SQL sum overflows.
func (db *DB) countedSums(ctx context.Context, companyID, bankAccountID int64, from, to time.Time) (n, in, out int64, err error) {
	var inHi, inLo, outHi, outLo int64
	err = db.db.QueryRowContext(ctx, `SELECT COUNT(*),
			COALESCE(SUM(amount_in / `+sumSplit+`), 0), COALESCE(SUM(amount_in % `+sumSplit+`), 0),
			COALESCE(SUM(amount_out / `+sumSplit+`), 0), COALESCE(SUM(amount_out % `+sumSplit+`), 0)
		FROM transactions t WHERE t.company_id = $1 AND t.bank_account_id = $2 AND t.transaction_date >= $3 AND t.transaction_date < $4 AND `+countedRow,
		companyID, bankAccountID, from, to).Scan(&n, &inHi, &inLo, &outHi, &outLo)
	if err != nil {
		return 0, 0, 0, internal(err, "statement proof sums")
	}
	in, ok1 := joinSum(inHi, inLo)
	out, ok2 := joinSum(outHi, outLo)
	if !ok1 || !ok2 {
		return 0, 0, 0, recon.Errorf(recon.EINVALID, "the amounts of bank account %d add up to more than %d VND", bankAccountID, int64(math.MaxInt64))
	}
	return n, in, out, nil
}

func (db *DB) proofCause(ctx context.Context, c proofCause, imp *recon.StatementImport, from, to time.Time, list int) (*recon.ProofCause, error) {
	rows, err := db.db.QueryContext(ctx, c.query, imp.ID, imp.CompanyID, imp.BankAccountID, from, to)
	if err != nil {
		return nil, internal(err, "statement proof "+c.kind)
	}
	defer rows.Close()
	cause := &recon.ProofCause{Kind: c.kind}
	for rows.Next() {
		var r recon.ProofRow
		var date sql.NullTime
		var amount sql.NullInt64
		if err := rows.Scan(&r.TransactionID, &r.Row, &date, &r.ReferenceNumber, &r.AmountIn, &r.AmountOut, &amount, &r.Note); err != nil {
			return nil, internal(err, "statement proof "+c.kind)
		}
		r.TransactionDate, r.Amount = date.Time.UTC(), amountOf(amount)
		r.Effect = c.effect(&r)
		cause.Count++
		if r.Effect == nil {
			cause.Unknown++
		} else {
			var ok bool
			if cause.Effect, ok = recon.AddAmounts(cause.Effect, *r.Effect); !ok {
				return nil, recon.Errorf(recon.EINVALID, "the %s rows of statement import %d add up to more than %d VND", c.kind, imp.ID, int64(math.MaxInt64))
			}
		}
		if len(cause.Rows) < list {
			cause.Rows = append(cause.Rows, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "statement proof "+c.kind)
	}
	return cause, nil
}

// statementDiscontinuity compares imp's opening balance with the closing
// balance of the account's previous statement: the latest import with a
// closing balance whose period ends before imp's starts.
func (db *DB) statementDiscontinuity(ctx context.Context, imp *recon.StatementImport) (*recon.StatementDiscontinuity, error) {
	if imp.Opening == nil {
		return nil, nil
	}
	var d recon.StatementDiscontinuity
	err := db.db.QueryRowContext(ctx, `SELECT id, period_to, closing FROM statement_imports
		WHERE company_id = $1 AND bank_account_id = $2 AND period_to < $3 AND closing IS NOT NULL
		ORDER BY period_to DESC, id DESC LIMIT 1`, imp.CompanyID, imp.BankAccountID, imp.From).Scan(&d.PreviousImportID, &d.PreviousTo, &d.PreviousClosing)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal(err, "statement discontinuity")
	}
	gap, ok := recon.AddAmounts(*imp.Opening, -d.PreviousClosing)
	if ok && gap == 0 {
		return nil, nil
	}
	d.Opening, d.Gap = *imp.Opening, gap
	return &d, nil
}

// DayBalances is the reconciliation report's balances (docs/dashboard.md,
// Report): for each of the tenant's bank accounts (or the one given) and
// each day from..to, the bank's balance, Recon's and the difference with
// its causes (recon.DayBalance). ENOTFOUND for an account not the tenant's.
func (db *DB) DayBalances(ctx context.Context, tenant recon.TenantID, bankAccountID int64, from, to string) ([]recon.DayBalance, error) {
	first, end, err := periodBounds(from, to)
	if err != nil {
		return nil, err
	}
	if !first.Before(end) {
		return nil, recon.FieldError("from", "from must not be after to")
	}
	if first.AddDate(0, 0, recon.MaxReportDays).Before(end) {
		return nil, recon.FieldError("from", "the balances cover at most %d days", recon.MaxReportDays)
	}
	var accounts []*recon.BankAccount
	if bankAccountID != 0 {
		a, err := db.BankAccount(ctx, tenant, bankAccountID)
		if err != nil {
			return nil, err
		}
		accounts = []*recon.BankAccount{a}
	} else if accounts, err = db.BankAccounts(ctx, tenant); err != nil {
		return nil, err
	}
	out := []recon.DayBalance{}
	for _, a := range accounts {
		lines, err := db.accountDays(ctx, tenant.ID(), a, first, end)
		if err != nil {
			return nil, err
		}
		out = append(out, lines...)
	}
	return out, nil
}

// accountDays is DayBalances of one account over the days [first, end).
func (db *DB) accountDays(ctx context.Context, companyID int64, a *recon.BankAccount, first, end time.Time) ([]recon.DayBalance, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+statementImportColumns+` FROM statement_imports
		WHERE company_id = $1 AND bank_account_id = $2 AND period_from <= $3 ORDER BY period_from, id`,
		companyID, a.ID, end.AddDate(0, 0, -1).Format(recon.DateLayout))
	if err != nil {
		return nil, internal(err, "report statement imports")
	}
	var imports []*recon.StatementImport
	for rows.Next() {
		imp, err := scanStatementImport(rows)
		if err != nil {
			rows.Close()
			return nil, internal(err, "report statement imports")
		}
		imports = append(imports, imp)
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "report statement imports")
	}
	var out []recon.DayBalance
	for day := first; day.Before(end); day = day.AddDate(0, 0, 1) {
		date := day.Format(recon.DateLayout)
		line := recon.DayBalance{BankAccountID: a.ID, AccountNumber: a.AccountNumber, Date: date}
		var ending, anchor *recon.StatementImport
		for _, imp := range imports { // the latest of each wins
			if imp.To == date && imp.Closing != nil {
				ending = imp
			}
			if imp.From <= date && imp.Opening != nil {
				anchor = imp
			}
		}
		if ending != nil && ending.Opening != nil {
			anchor = ending
		}
		next := day.AddDate(0, 0, 1)
		if anchor != nil {
			from, _, err := periodBounds(anchor.From, anchor.To)
			if err != nil {
				return nil, internal(err, "statement period")
			}
			_, in, outSum, err := db.countedSums(ctx, companyID, a.ID, from, next)
			if err != nil {
				return nil, err
			}
			b, ok := recon.AddAmounts(*anchor.Opening, in)
			if ok {
				b, ok = recon.AddAmounts(b, -outSum)
			}
			if ok {
				line.ReconBalance, line.Basis = &b, "statement"
			}
		} else {
			var b int64
			err := db.db.QueryRowContext(ctx, `SELECT accumulated FROM transactions
				WHERE company_id = $1 AND bank_account_id = $2 AND transaction_date < $3 ORDER BY transaction_date DESC, id DESC LIMIT 1`,
				companyID, a.ID, next).Scan(&b)
			switch {
			case err == nil:
				line.ReconBalance, line.Basis = &b, "running"
			case !errors.Is(err, sql.ErrNoRows):
				return nil, internal(err, "report running balance")
			}
		}
		if ending != nil {
			line.BankBalance, line.ImportID = ending.Closing, ending.ID
			if line.ReconBalance != nil {
				if d, ok := recon.AddAmounts(*ending.Closing, -*line.ReconBalance); ok {
					line.Difference = &d
				}
			}
			if anchor == ending {
				p, err := db.prove(ctx, ending, 0)
				if err != nil {
					return nil, err
				}
				line.Causes = p.Causes
			}
		}
		out = append(out, line)
	}
	return out, nil
}

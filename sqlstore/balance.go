package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"recon"
)

// Running balances in the bank's order (docs/api.md, Balances).
//
// A row's accumulated is the bank's balance when the row carried one
// (transactions.bank_balance), else the previous row's plus its amounts,
// the rows of an account taken in bank order: transaction_date, then id
// (ids follow the batch's order, and batches their arrival). The account's
// balance is the one after its latest row. A batch dated on or after the
// account's last row (bank_accounts.last_date) is appended without reading
// a row. A batch dated before it re-derives, in the same database
// transaction: the stored rows from its earliest date to its latest are
// read and recomputed with it (loadHistories, planIngest's merge), and the
// stored rows dated after it move by the difference the batch made, up to
// the first that carries the bank's balance, whose balance is the bank's
// and so stops the change (rederive). Discontinuities of the re-derived
// rows are recomputed: added, updated or dropped. A balance is known when
// it follows from a bank's (from bank_accounts.known_from_* on, the first
// row that carried one) or from a known opening balance; only a known
// balance can disagree with the bank's.

// position is a row's place in bank order.
type position struct {
	date time.Time
	id   int64
}

func (p position) before(q position) bool {
	return p.date.Before(q.date) || (p.date.Equal(q.date) && p.id < q.id)
}

// knownAt says whether the balance after the stored row at pos is known:
// the account's opening balance is, or a row at or before pos carried the
// bank's balance.
func (a *accountState) knownAt(pos position) bool {
	return a.openingKnown || (a.knownFrom.id != 0 && !pos.before(a.knownFrom))
}

// maxRederive bounds the stored rows one batch may re-derive per account;
// a batch that would re-derive more is ECONFLICT and stores nothing.
const maxRederive = 100_000

// accountHistory is what a batch dated before an account's last row needs
// of its stored rows: the balance before the batch's earliest date (the
// last row dated on or before it, else the opening balance), the rows dated
// after it up to the batch's latest date, in bank order, and whether rows
// are dated later still.
type accountHistory struct {
	from, to  time.Time
	base      int64
	baseKnown bool
	rows      []*storedRow
	tail      bool
	// limit is how many stored rows the batch may re-derive (maxRederive).
	limit int
}

// storedRow is a stored transaction a batch may re-derive.
type storedRow struct {
	id    int64
	date  time.Time
	delta int64
	acc   int64
	bank  *int64
	disc  *discontinuityRow
}

// storedRowColumns are what scanStoredRow reads, of transactions t and
// their discontinuity d. A possible (or confirmed) duplicate moves no
// balance and carries no bank's balance (docs/statements.md, Possible
// duplicates).
const storedRowColumns = `t.id, t.transaction_date, CASE WHEN ` + dupOut + ` THEN 0 ELSE t.amount_in - t.amount_out END, t.accumulated,
	CASE WHEN ` + dupOut + ` THEN NULL ELSE t.bank_balance END, d.id, d.expected`

// dupOut is true of a row of transactions t that does not count: a
// possible or confirmed duplicate.
const dupOut = `COALESCE(t.dup_state, '') IN ('` + recon.DupPossible + `', '` + recon.DupConfirmed + `')`

func scanStoredRow(s scanner) (*storedRow, error) {
	var r storedRow
	var date anyTime
	var bank, discID, discExpected sql.NullInt64
	if err := s.Scan(&r.id, &date, &r.delta, &r.acc, &bank, &discID, &discExpected); err != nil {
		return nil, err
	}
	r.date = date.t
	if bank.Valid {
		r.bank = &bank.Int64
	}
	if discID.Valid {
		r.disc = &discontinuityRow{discID.Int64, discExpected.Int64}
	}
	return &r, nil
}

// discontinuityRow is a stored row's recorded discontinuity.
type discontinuityRow struct{ id, expected int64 }

// restatedRow is a stored row whose balance or discontinuity changes.
type restatedRow struct {
	storedRow
	account  int64
	newAcc   int64
	expected int64
	gap      bool
}

// tailShift moves the balances of an account's rows dated after after by
// shift, up to the first carrying the bank's balance; prev is the balance
// of the batch's last row (the one before the tail), prevKnown whether it
// is known; limit bounds the rows.
type tailShift struct {
	account   int64
	after     time.Time
	shift     int64
	prev      int64
	prevKnown bool
	limit     int // the rows the tail may hold before its first bank balance
	// afterID, when not 0, also takes the rows dated at after with a
	// larger id (a possible duplicate resolved distinct moves the rows
	// after its own place, enterDistinct).
	afterID int64
}

// loadHistories reads the history of every account the batch reaches
// before its last row. An account appended to costs nothing.
func (db *DB) loadHistories(ctx context.Context, tx *sql.Tx, in []recon.TransactionInput, accounts map[int64]*accountState) (map[int64]*accountHistory, error) {
	var hist map[int64]*accountHistory
	for i := range in {
		a := accounts[in[i].BankAccountID]
		d := recon.WallClock(in[i].TransactionDate)
		h := hist[in[i].BankAccountID]
		if h == nil {
			if a.lastDate.IsZero() || !d.Before(a.lastDate) {
				continue
			}
			if hist == nil {
				hist = map[int64]*accountHistory{}
			}
			h = &accountHistory{from: d, to: d}
			hist[in[i].BankAccountID] = h
		}
		h.from, h.to = minTime(h.from, d), maxTime(h.to, d)
	}
	limit := maxRederive
	if db.rederiveLimit > 0 {
		limit = db.rederiveLimit
	}
	for id, h := range hist {
		h.limit = limit
		// The batch's rows of this account dated on or after its last row
		// count too: the history's span is the batch's.
		for i := range in {
			if in[i].BankAccountID == id {
				h.to = maxTime(h.to, recon.WallClock(in[i].TransactionDate))
			}
		}
		a := accounts[id]
		h.tail = a.lastDate.After(h.to)
		var baseAt position
		var baseDate anyTime
		err := tx.QueryRowContext(ctx, `SELECT accumulated, transaction_date, id FROM transactions WHERE bank_account_id = $1 AND transaction_date <= $2
			ORDER BY transaction_date DESC, id DESC LIMIT 1`, id, h.from).Scan(&h.base, &baseDate, &baseAt.id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			h.base, h.baseKnown = a.opening, a.openingKnown
		case err != nil:
			return nil, internal(err, "read the balance before a batch")
		default:
			baseAt.date = baseDate.t
			h.baseKnown = a.knownAt(baseAt)
		}
		rows, err := tx.QueryContext(ctx, `
			SELECT `+storedRowColumns+`
			FROM transactions t LEFT JOIN balance_discontinuities d ON d.transaction_id = t.id
			WHERE t.bank_account_id = $1 AND t.transaction_date > $2 AND t.transaction_date <= $3
			ORDER BY t.transaction_date, t.id LIMIT $4`, id, h.from, h.to, limit+1)
		h.rows, err = collect(rows, err, "read the rows a batch re-derives", scanStoredRow)
		if err != nil {
			return nil, err
		}
		if len(h.rows) > limit {
			return nil, tooManyRederived(id, limit)
		}
	}
	return hist, nil
}

func tooManyRederived(account int64, limit int) error {
	return conflict(nil, "bank account %d: this batch is dated before more than %d stored transactions whose balances it would re-derive; nothing was stored (send older transactions before newer ones)", account, limit)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// rederive writes what the plan changes of stored rows: the balances and
// discontinuities of the rows it re-derived, then each tail's shift up to
// its first row carrying the bank's balance, whose discontinuity is
// recomputed; the account's balance moves with a tail that has no such row.
func (db *DB) rederive(ctx context.Context, tx *sql.Tx, companyID int64, p *ingestPlan, now time.Time) error {
	var moved []restatedRow
	for _, r := range p.restated {
		if r.newAcc != r.acc {
			moved = append(moved, r)
		}
		if err := db.syncDiscontinuity(ctx, tx, companyID, r.account, r.id, r.disc, r.gap, r.expected, r.bank, now); err != nil {
			return err
		}
	}
	for start := 0; start < len(moved); start += insertChunk {
		chunk := moved[start:min(start+insertChunk, len(moved))]
		var sb strings.Builder
		args := make([]any, 0, 3*len(chunk))
		sb.WriteString(`UPDATE transactions SET accumulated = CASE id`)
		for _, r := range chunk {
			sb.WriteString(` WHEN ` + db.d.param(len(args)+1) + ` THEN CAST(` + db.d.param(len(args)+2) + ` AS BIGINT)`)
			args = append(args, r.id, r.newAcc)
		}
		sb.WriteString(` END WHERE id IN (` + db.params(len(args)+1, len(chunk)) + `)`)
		for _, r := range chunk {
			args = append(args, r.id)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return internal(err, "re-derive balances")
		}
	}
	for _, t := range p.tails {
		if err := db.shiftTail(ctx, tx, companyID, p.accounts[t.account], t, now); err != nil {
			return err
		}
	}
	return nil
}

// shiftTail moves an account's rows dated after a batch (see tailShift).
func (db *DB) shiftTail(ctx context.Context, tx *sql.Tx, companyID int64, a *accountState, t tailShift, now time.Time) error {
	after, args := `t.transaction_date > $2`, []any{t.account, t.after, t.limit + 1}
	if t.afterID != 0 {
		after, args = `(t.transaction_date > $2 OR (t.transaction_date = $2 AND t.id > $4))`, append(args, t.afterID)
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT `+storedRowColumns+`
		FROM transactions t LEFT JOIN balance_discontinuities d ON d.transaction_id = t.id
		WHERE t.bank_account_id = $1 AND `+after+`
		ORDER BY t.transaction_date, t.id LIMIT $3`, args...)
	if err != nil {
		return internal(err, "read the rows a batch re-derives")
	}
	var anchor *storedRow
	n := 0
	var last int64 // the balance of the last row before the anchor, as stored
	for rows.Next() {
		r, err := scanStoredRow(rows)
		if err != nil {
			rows.Close()
			return internal(err, "read the rows a batch re-derives")
		}
		if r.bank != nil {
			anchor = r
			break
		}
		n++
		last = r.acc
	}
	if err := rows.Close(); err != nil {
		return internal(err, "read the rows a batch re-derives")
	}
	if anchor == nil && n > t.limit {
		return tooManyRederived(t.account, t.limit)
	}
	if n > 0 && t.shift != 0 {
		newLast, ok := recon.AddAmounts(last, t.shift)
		if !ok || newLast > recon.MaxAmount || newLast < -recon.MaxAmount {
			return recon.FieldError("transactions", "re-deriving the later balances of bank account %d after this batch would leave the range of ±%d VND: nothing was stored", t.account, int64(recon.MaxAmount))
		}
		q := `UPDATE transactions SET accumulated = accumulated + $1 WHERE bank_account_id = $2 AND transaction_date > $3`
		args := []any{t.shift, t.account, t.after}
		if t.afterID != 0 {
			q = `UPDATE transactions SET accumulated = accumulated + $1 WHERE bank_account_id = $2 AND (transaction_date > $3 OR (transaction_date = $3 AND id > $4))`
			args = append(args, t.afterID)
		}
		if anchor != nil {
			d, id := "$"+strconv.Itoa(len(args)+1), "$"+strconv.Itoa(len(args)+2)
			q += ` AND (transaction_date < ` + d + ` OR (transaction_date = ` + d + ` AND id < ` + id + `))`
			args = append(args, anchor.date, anchor.id)
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return internal(err, "re-derive balances")
		}
	}
	prev := t.prev // the balance before the anchor, re-derived
	if n > 0 {
		prev = last + t.shift
	}
	if anchor == nil {
		// No row carries the bank's balance: the account's balance is
		// the last row's (the batch's own when nothing is dated later).
		a.balance = prev
		return nil
	}
	run := running{prev, t.prevKnown}
	_, expected, gap, ok := run.next(anchor.delta, anchor.bank)
	if !ok {
		return recon.FieldError("transactions", "re-deriving the later balances of bank account %d after this batch would leave the range of ±%d VND: nothing was stored", t.account, int64(recon.MaxAmount))
	}
	return db.syncDiscontinuity(ctx, tx, companyID, t.account, anchor.id, anchor.disc, gap, expected, anchor.bank, now)
}

// syncDiscontinuity makes a stored row's discontinuity what re-derivation
// found: recorded when gap (expected against the bank's balance), gone
// when not; an existing one keeps its id and time.
func (db *DB) syncDiscontinuity(ctx context.Context, tx *sql.Tx, companyID, account, txID int64, old *discontinuityRow, gap bool, expected int64, bank *int64, now time.Time) error {
	var err error
	switch {
	case old != nil && !gap:
		_, err = tx.ExecContext(ctx, `DELETE FROM balance_discontinuities WHERE id = $1`, old.id)
	case old != nil && old.expected != expected:
		_, err = tx.ExecContext(ctx, `UPDATE balance_discontinuities SET expected = $1 WHERE id = $2`, expected, old.id)
	case old == nil && gap:
		_, err = tx.ExecContext(ctx, `
			INSERT INTO balance_discontinuities (company_id, bank_account_id, transaction_id, expected, reported, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, companyID, account, txID, expected, *bank, now)
	}
	if err != nil {
		return internal(err, "record balance discontinuity")
	}
	return nil
}

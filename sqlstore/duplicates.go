package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"recon"
)

// Other references and possible duplicates (docs/statements.md, References
// and Possible duplicates). Kept apart from the bulk insert path
// (sqlstore/transaction.go): ingestTx calls these steps in its database
// transaction, and a batch without other references or possible
// duplicates costs one indexed lookup per new row and nothing more.

// storeOtherRefs writes the other references of the new rows
// (transaction_refs, migration 00042). A push carries none: no statement.
func (db *DB) storeOtherRefs(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64) error {
	type refRow struct {
		id, account int64
		ref         string
	}
	var all []refRow
	for _, r := range rows {
		for _, ref := range r.References {
			all = append(all, refRow{ids[r.key()], r.BankAccountID, ref})
		}
	}
	for start := 0; start < len(all); start += insertChunk {
		chunk := all[start:min(start+insertChunk, len(all))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO transaction_refs (transaction_id, ref, company_id, bank_account_id) VALUES `)
		args := make([]any, 0, 4*len(chunk))
		for n, r := range chunk {
			if n > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(" + db.params(len(args)+1, 4) + ")")
			args = append(args, r.id, r.ref, companyID, r.account)
		}
		sb.WriteString(` ON CONFLICT DO NOTHING`)
		if _, err := tx.ExecContext(deferrable(ctx), sb.String(), args...); err != nil {
			return internal(err, "store other references")
		}
	}
	return nil
}

// otherRefs returns the other references of the given transactions of the
// company, by transaction.
func (db *DB) otherRefs(ctx context.Context, q querier, companyID int64, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	for start := 0; start < len(ids); start += insertChunk {
		chunk := ids[start:min(start+insertChunk, len(ids))]
		args := []any{companyID}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := q.QueryContext(ctx, `SELECT transaction_id, ref FROM transaction_refs
			WHERE company_id = `+db.d.param(1)+` AND transaction_id IN (`+db.params(2, len(chunk))+`) ORDER BY transaction_id, ref`, args...)
		if err != nil {
			return nil, internal(err, "read other references")
		}
		for rows.Next() {
			var id int64
			var ref string
			if err := rows.Scan(&id, &ref); err != nil {
				rows.Close()
				return nil, internal(err, "read other references")
			}
			out[id] = append(out[id], ref)
		}
		if err := rows.Close(); err != nil {
			return nil, internal(err, "read other references")
		}
	}
	return out, nil
}

// dupHit is what findDuplicates found of one input: the stored row it is a
// possible duplicate of (of), or the earlier row of its batch (batch: that
// row's index plus one); byRef when only a shared reference told it.
type dupHit struct {
	of    int64
	batch int
	byRef bool
}

// dupCand is a stored row a look-up found.
type dupCand struct {
	id, account, key, dupOf, in, out int64
	date                             time.Time
	ref, state, memo                 string // memo: the content, as DupMemo once collected
}

// first is the row a possible duplicate of c names: c's own first row when
// c is itself a possible (or confirmed) duplicate.
func (c dupCand) first() int64 {
	if !recon.DupCounts(c.state) && c.dupOf != 0 {
		return c.dupOf
	}
	return c.id
}

// dupLookup is what the look-ups of dupReads found: the stored rows a
// batch may duplicate, by account and the key's hash (its key on day 0),
// for a window of days.
type dupLookup struct {
	window int64
	stored map[accountKeyDup][]*dupCand
}

// dupReads are the look-ups of findDuplicates for window, read into found.
// Each key is asked on every day of its window, plus its account
// (dupProbe); a row found of another account whose sum is one asked is
// kept under its own account, where it is compared in full too.
func (db *DB) dupReads(in []recon.TransactionInput, keys []int64, window int64, found *dupLookup) []batchRead {
	found.window, found.stored = window, map[accountKeyDup][]*dupCand{}
	asked := map[int64]map[int64]bool{}
	var accounts []int64
	for i := range in {
		a, d := in[i].BankAccountID, dayNumber(in[i].TransactionDate)
		if asked[a] == nil {
			asked[a] = map[int64]bool{}
			accounts = append(accounts, a)
		}
		for day := d - window; day <= d+window; day++ {
			asked[a][recon.DupKeyOn(keys[i], day)] = true
		}
	}
	slices.Sort(accounts)
	sums := make([][]int64, len(accounts))
	for i, a := range accounts {
		sums[i] = make([]int64, 0, len(asked[a]))
		for k := range asked[a] {
			sums[i] = append(sums[i], k+a)
		}
	}
	var reads []batchRead
	for _, q := range db.d.dupProbes(accounts, sums) {
		reads = append(reads, batchRead{what: "look for possible duplicates", query: q.query, args: q.args, prepared: true, scan: func(rows rowScanner) error {
			for rows.Next() {
				c, err := scanDupCand(rows)
				if err != nil {
					return err
				}
				k := accountKeyDup{c.account, recon.DupKeyOn(c.key, 0)}
				c.memo = recon.DupMemo(c.memo)
				found.stored[k] = append(found.stored[k], c)
			}
			return nil
		}})
	}
	return reads
}

// findDuplicates finds the possible duplicates of a batch (docs/statements.md,
// Possible duplicates) before it is planned: each input whose account holds
// a row of another reference with the same direction, amount and memo
// (recon.DupMemo) dated within the window (the tenant's, in days, read with
// the accounts' lock: accountsRead), or an earlier row of the batch like
// it; and each input carrying other references (a statement's) whose
// account holds a row of the same amounts in the window sharing a
// reference key (recon.ReferenceKeys). dups holds each input's
// recon.DupKey and memo. The look-up is one query a batch on PostgreSQL,
// one per account and chunk of keys on SQLite (dialect.dupProbes), each
// key asked on every day of its window (recon.DupKeyOn) on
// transactions_dup_key (migrations 00044, 00052): equality probes, which
// find nothing for an ordinary batch; what they find is compared in full.
// The reference rule costs one probe of transactions_company_amounts per
// input that carries other references. The accounts are locked: no writer
// adds rows meanwhile. found, when not nil, is what dupReads read for the
// batch after the lock, used when read for window (ingestTx reads it with
// the accounts, for the window the tenant had last).
//
// repeats reports that a row found is one the batch repeats (its account
// and reference): a feed pushing again what it pushed, whose stored
// references the caller then reads before the insert instead of after
// the insert fails on them (ingestTx).
func (db *DB) findDuplicates(ctx context.Context, tx *sql.Tx, companyID int64, in []recon.TransactionInput, dups *batchDups, window int64, found *dupLookup) (hits map[int]dupHit, repeats bool, err error) {
	keys := dups.keys
	if found == nil || found.window != window {
		found = &dupLookup{}
		if err := db.d.readTogether(ctx, db, tx, db.dupReads(in, keys, window, found)); err != nil {
			return nil, false, err
		}
	}
	stored := found.stored
	// Each memo is normalized once (newBatchDups): a batch of rows alike (a
	// fee repeated through a statement) compares each with every earlier one.
	memos := dups.memos
	hits = map[int]dupHit{}
	earlier := map[accountKeyDup][]int{}
	for i := range in {
		t := &in[i]
		k, d := accountKeyDup{t.BankAccountID, recon.DupKeyOn(keys[i], 0)}, dayNumber(t.TransactionDate)
		like := func(ref string, date time.Time, amountIn, amountOut int64, memo string) bool {
			day := dayNumber(date)
			return ref != t.ReferenceNumber && day >= d-window && day <= d+window &&
				amountIn == t.AmountIn && amountOut == t.AmountOut && memo == memos[i]
		}
		var best int64
		for _, c := range stored[k] {
			if like(c.ref, c.date, c.in, c.out, c.memo) && (best == 0 || c.first() < best) {
				best = c.first()
			}
			repeats = repeats || c.ref == t.ReferenceNumber
		}
		if best != 0 {
			hits[i] = dupHit{of: best}
		} else {
			for _, j := range earlier[k] {
				if e := &in[j]; like(e.ReferenceNumber, e.TransactionDate, e.AmountIn, e.AmountOut, memos[j]) {
					hits[i] = dupHit{batch: j + 1}
					if h, ok := hits[j]; ok {
						hits[i] = h // j is one itself: i names j's first row
					}
					break
				}
			}
		}
		earlier[k] = append(earlier[k], i)
		if _, ok := hits[i]; ok || len(t.References) == 0 {
			continue
		}
		of, err := db.sharedReference(ctx, tx, companyID, t, window)
		if err != nil {
			return nil, false, err
		}
		if of != 0 {
			hits[i] = dupHit{of: of, byRef: true}
		}
	}
	return hits, repeats, nil
}

// dupProbe is the look-up of keys, each plus its account
// (dialect.dupProbes): the index is on dup_key + bank_account_id, and the
// accounts' own condition is one no index serves (+), so the planner
// cannot read an account whole instead of probing, as it did for an
// account its statistics took for empty (migration 00052). accounts and
// sums are the conditions on the two.
func dupProbe(accounts, sums string) string {
	return `SELECT ` + dupCandColumns + ` FROM transactions WHERE +bank_account_id ` + accounts + ` AND (dup_key + bank_account_id) ` + sums
}

// probe is one statement and its arguments.
type probe struct {
	query string
	args  []any
}

// accountKeyDup is an account and a duplicate key.
type accountKeyDup struct{ account, key int64 }

// dupCandColumns are what scanDupCand reads of transactions.
const dupCandColumns = `id, bank_account_id, dup_key, transaction_date, reference_number, COALESCE(dup_of, 0), COALESCE(dup_state, ''), amount_in, amount_out, content`

func scanDupCand(s scanner) (*dupCand, error) {
	var c dupCand
	var date anyTime
	var key sql.NullInt64
	err := s.Scan(&c.id, &c.account, &key, &date, &c.ref, &c.dupOf, &c.state, &c.in, &c.out, &c.memo)
	c.key, c.date = key.Int64, date.t
	return &c, err
}

// sharedReference returns the first stored row (by id) of t's account and
// amounts, dated within the window, of another reference, that shares a
// reference key with t (its reference and its other references), or 0.
func (db *DB) sharedReference(ctx context.Context, tx *sql.Tx, companyID int64, t *recon.TransactionInput, window int64) (int64, error) {
	mine := recon.ReferenceKeys(append([]string{t.ReferenceNumber}, t.References...)...)
	if len(mine) == 0 {
		return 0, nil
	}
	d := dayNumber(t.TransactionDate)
	rows, err := tx.QueryContext(ctx, `SELECT `+dupCandColumns+`
		FROM transactions WHERE company_id = $1 AND amount_in = $2 AND amount_out = $3
		AND transaction_date >= $4 AND transaction_date < $5 AND bank_account_id = $6 AND reference_number <> $7 ORDER BY id`,
		companyID, t.AmountIn, t.AmountOut, dayStart(d-window), dayStart(d+window+1), t.BankAccountID, t.ReferenceNumber)
	list, err := collect(rows, err, "look for possible duplicates", scanDupCand)
	if err != nil || len(list) == 0 {
		return 0, err
	}
	ids := make([]int64, len(list))
	for i, c := range list {
		ids[i] = c.id
	}
	refs, err := db.otherRefs(ctx, tx, companyID, ids)
	if err != nil {
		return 0, err
	}
	for _, c := range list {
		if recon.SharesReference(mine, recon.ReferenceKeys(append([]string{c.ref}, refs[c.id]...)...)) {
			return c.first(), nil
		}
	}
	return 0, nil
}

// markDuplicates records the batch's possible duplicates once its rows are
// stored: their state and first row, and each one's exception (kind
// possible_duplicate, naming the first row), insertChunk rows a statement.
// It returns the rows (indexes into rows) it queued.
func (db *DB) markDuplicates(ctx context.Context, tx *sql.Tx, companyID int64, p *ingestPlan, ids map[accountKey]int64) ([]int, error) {
	var out []int
	var ofs []int64
	for i := range p.rows {
		r := &p.rows[i]
		if r.dup == nil {
			continue
		}
		of := r.dup.of
		if r.dup.batch != 0 {
			j := r.dup.batch - 1
			if s, ok := p.dupOf[j]; ok {
				of = s.ID
			} else {
				of = ids[accountKey{p.in[j].BankAccountID, p.in[j].ReferenceNumber}]
			}
		}
		out, ofs = append(out, i), append(ofs, of)
	}
	for start := 0; start < len(out); start += insertChunk {
		chunk := out[start:min(start+insertChunk, len(out))]
		var up, ins strings.Builder
		upArgs := []any{recon.DupPossible}
		up.WriteString(`UPDATE transactions SET dup_state = $1, dup_of = CASE id`)
		ins.WriteString(`INSERT INTO exceptions (transaction_id, company_id, bank_account_id, transaction_date, kind, order_id, reason) VALUES `)
		insArgs := make([]any, 0, 6*len(chunk))
		for n, i := range chunk {
			r, of := &p.rows[i], ofs[start+n]
			id := ids[r.key()]
			up.WriteString(` WHEN ` + db.d.param(len(upArgs)+1) + ` THEN CAST(` + db.d.param(len(upArgs)+2) + ` AS BIGINT)`)
			upArgs = append(upArgs, id, of)
			if n > 0 {
				ins.WriteByte(',')
			}
			ins.WriteString("(" + db.params(len(insArgs)+1, 5) + ", NULL, " + db.d.param(len(insArgs)+6) + ")")
			insArgs = append(insArgs, id, companyID, r.BankAccountID, recon.WallClock(r.TransactionDate), recon.ExceptionPossibleDuplicate, recon.DupReason(of, r.dup.byRef))
		}
		up.WriteString(` END WHERE id IN (` + db.params(len(upArgs)+1, len(chunk)) + `)`)
		for _, i := range chunk {
			upArgs = append(upArgs, ids[p.rows[i].key()])
		}
		if _, err := tx.ExecContext(ctx, up.String(), upArgs...); err != nil {
			return nil, internal(err, "mark possible duplicates")
		}
		if _, err := tx.ExecContext(ctx, ins.String(), insArgs...); err != nil {
			return nil, internal(err, "queue possible duplicates")
		}
	}
	return out, nil
}

// enterDistinct makes the possible duplicate t, resolved distinct, count
// as if it had just arrived in its place (docs/statements.md, Possible
// duplicates): its state distinct, its balance and the later rows' of its
// account re-derived (up to the first carrying the bank's balance), its
// money added to its day's sums, then matched, its exception queued when
// matching leaves one, refunds settled and linked balances notified (enter).
// Its possible_duplicate exception is replaced by the new one, if any:
// reopened says so. It returns the deliveries enqueued.
func (db *DB) enterDistinct(ctx context.Context, tx *sql.Tx, companyID int64, e *recon.Exception, now time.Time) (enqueued int, reopened bool, err error) {
	t := e.Transaction
	in := recon.TransactionInput{BankAccountID: t.BankAccountID, TransactionDate: t.TransactionDate, AmountIn: t.AmountIn, AmountOut: t.AmountOut,
		Content: t.Content, ReferenceNumber: t.ReferenceNumber, SubAccount: t.SubAccount}
	accounts, _, err := db.lockAccounts(ctx, tx, companyID, []recon.TransactionInput{in})
	if err != nil {
		return 0, false, err
	}
	a := accounts[t.BankAccountID]
	var bank sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT bank_balance FROM transactions WHERE id = $1`, t.ID).Scan(&bank); err != nil {
		return 0, false, internal(err, "read a possible duplicate")
	}
	if bank.Valid {
		in.Accumulated = &bank.Int64
	}
	if _, err := tx.ExecContext(ctx, `UPDATE transactions SET dup_state = $1 WHERE id = $2`, recon.DupDistinct, t.ID); err != nil {
		return 0, false, internal(err, "resolve a possible duplicate")
	}
	// Its balance was the previous row's: it now moves it.
	pos := position{recon.WallClock(t.TransactionDate), t.ID}
	run := running{t.Accumulated, a.knownAt(pos)}
	row := insertRow{TransactionInput: &in, code: t.Code, date: pos.date}
	if err := row.set(&run); err != nil {
		return 0, false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE transactions SET accumulated = $1 WHERE id = $2`, row.accumulated, t.ID); err != nil {
		return 0, false, internal(err, "re-derive balances")
	}
	if row.reported != nil {
		if err := db.syncDiscontinuity(ctx, tx, companyID, t.BankAccountID, t.ID, nil, true, row.expected, row.reported, now); err != nil {
			return 0, false, err
		}
	}
	if in.Accumulated != nil && (a.knownFrom.id == 0 || pos.before(a.knownFrom)) {
		a.knownFrom = pos
	}
	a.changed = true
	limit := maxRederive
	if db.rederiveLimit > 0 {
		limit = db.rederiveLimit
	}
	if err := db.shiftTail(ctx, tx, companyID, a, tailShift{account: t.BankAccountID, after: pos.date, afterID: t.ID, shift: row.accumulated - t.Accumulated,
		prev: run.balance, prevKnown: run.known, limit: limit}, now); err != nil {
		return 0, false, err
	}
	if err := updateBalances(ctx, tx, accounts); err != nil {
		return 0, false, err
	}
	inN, outN := min(t.AmountIn, 1), min(t.AmountOut, 1)
	if _, err := tx.ExecContext(ctx, `UPDATE transaction_day_counts SET in_sum = `+saturatingAdd("in_sum", "$1")+`, out_sum = `+saturatingAdd("out_sum", "$2")+`,
		in_n = in_n + $3, out_n = out_n + $4 WHERE company_id = $5 AND bank_account_id = $6 AND day = $7`,
		t.AmountIn, t.AmountOut, inN, outN, companyID, t.BankAccountID, dayNumber(t.TransactionDate)); err != nil {
		return 0, false, internal(err, "count transactions per day")
	}
	// The possible_duplicate exception gives way to what matching decides.
	if _, err := tx.ExecContext(ctx, `DELETE FROM exceptions WHERE transaction_id = $1 AND company_id = $2`, t.ID, companyID); err != nil {
		return 0, false, internal(err, "resolve a possible duplicate")
	}
	results := make([]recon.IngestResult, 1)
	if enqueued, err = db.enter(ctx, tx, companyID, []insertRow{row}, map[accountKey]int64{row.key(): t.ID}, accounts, now, results, nil); err != nil {
		return 0, false, err
	}
	if results[0].Exception {
		return enqueued, true, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO exceptions (transaction_id, company_id, bank_account_id, transaction_date, kind, order_id, reason, resolved) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)`,
		t.ID, companyID, t.BankAccountID, pos.date, e.Kind, e.Reason, true); err != nil {
		return 0, false, internal(err, "resolve a possible duplicate")
	}
	return enqueued, false, nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"recon"
)

// insertChunk bounds the rows of one multi-row INSERT (10 parameters a row,
// under SQLite's 32766 and PostgreSQL's 65535 parameter limits).
const insertChunk = 500

type accountKey struct {
	account int64
	ref     string
}

type accountState struct {
	balance int64
	known   bool
	changed bool
}

// IngestTransactions implements recon.TransactionStore. Within one database
// transaction it locks the batch's bank accounts (in id order, so batches
// never deadlock), looks up the references already stored, computes each new
// row's balance in batch order, inserts the new rows with multi-row INSERTs,
// and updates the accounts' balances, the day counts and the discontinuities.
// Because every writer of an account holds its lock, a reference is never
// stored twice; the unique index is the last guard.
func (db *DB) IngestTransactions(ctx context.Context, companyID int64, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error) {
	if len(codes) != len(in) {
		return nil, fmt.Errorf("sqlstore: %d codes for %d transactions", len(codes), len(in))
	}
	results := make([]recon.IngestResult, len(in))
	if len(in) == 0 {
		return results, nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		accounts, err := db.lockAccounts(ctx, tx, companyID, in)
		if err != nil {
			return err
		}
		stored, err := db.storedRefs(ctx, tx, in)
		if err != nil {
			return err
		}
		now := db.now()
		type newRow struct {
			i           int
			accumulated int64
			reported    *int64
			expected    int64
		}
		var rows []newRow
		firstInBatch := map[accountKey]int{}
		for i := range in {
			t := &in[i]
			k := accountKey{t.BankAccountID, t.ReferenceNumber}
			if r, ok := stored[k]; ok {
				results[i] = recon.IngestResult{ID: r.ID, Code: r.Code, Duplicate: true}
				continue
			}
			if j, ok := firstInBatch[k]; ok {
				results[i] = recon.IngestResult{ID: -1 - int64(j), Duplicate: true} // resolved after insert
				continue
			}
			firstInBatch[k] = i
			a := accounts[t.BankAccountID]
			expected := a.balance + t.AmountIn - t.AmountOut
			row := newRow{i: i, accumulated: expected, expected: expected}
			if t.Accumulated != nil {
				row.accumulated = *t.Accumulated
				if a.known && *t.Accumulated != expected {
					row.reported = t.Accumulated
				}
			}
			a.balance, a.known, a.changed = row.accumulated, true, true
			rows = append(rows, row)
		}
		// Insert the new rows.
		ids := map[accountKey]int64{}
		for start := 0; start < len(rows); start += insertChunk {
			chunk := rows[start:min(start+insertChunk, len(rows))]
			var sb strings.Builder
			sb.WriteString(`INSERT INTO transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, code, sub_account, created_at) VALUES `)
			args := make([]any, 0, len(chunk)*11)
			for n, r := range chunk {
				t := &in[r.i]
				if n > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString("(" + db.params(len(args)+1, 11) + ")")
				args = append(args, companyID, t.BankAccountID, recon.WallClock(t.TransactionDate), t.AmountIn, t.AmountOut,
					r.accumulated, t.Content, t.ReferenceNumber, nullString(codes[r.i]), nullString(t.SubAccount), now)
			}
			sb.WriteString(` RETURNING id, bank_account_id, reference_number`)
			res, err := tx.QueryContext(ctx, sb.String(), args...)
			if err != nil {
				if db.d.violation(err) == uniqueViolation {
					return conflict(err, "a transaction of this batch was stored concurrently; retry the batch")
				}
				return internal(err, "insert transactions")
			}
			for res.Next() {
				var id int64
				var k accountKey
				if err := res.Scan(&id, &k.account, &k.ref); err != nil {
					res.Close()
					return internal(err, "insert transactions")
				}
				ids[k] = id
			}
			if err := res.Close(); err != nil {
				return internal(err, "insert transactions")
			}
		}
		for _, r := range rows {
			t := &in[r.i]
			results[r.i] = recon.IngestResult{ID: ids[accountKey{t.BankAccountID, t.ReferenceNumber}], Code: codes[r.i]}
		}
		for i := range results {
			if results[i].ID < 0 {
				results[i] = results[-1-results[i].ID]
				results[i].Duplicate = true
			}
		}
		if err := updateBalances(ctx, tx, accounts); err != nil {
			return err
		}
		added := make([]int, len(rows))
		for n, r := range rows {
			added[n] = r.i
		}
		if err := db.addDayCounts(ctx, tx, companyID, in, added); err != nil {
			return err
		}
		for _, r := range rows {
			if r.reported == nil {
				continue
			}
			t := &in[r.i]
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO balance_discontinuities (company_id, bank_account_id, transaction_id, expected, reported, created_at)
				VALUES ($1, $2, $3, $4, $5, $6)`,
				companyID, t.BankAccountID, results[r.i].ID, r.expected, *r.reported, now); err != nil {
				return internal(err, "record balance discontinuity")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// lockAccounts locks and reads the batch's bank accounts, which must all
// belong to the company.
func (db *DB) lockAccounts(ctx context.Context, tx *sql.Tx, companyID int64, in []recon.TransactionInput) (map[int64]*accountState, error) {
	var ids []int64
	for i := range in {
		ids = append(ids, in[i].BankAccountID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	args := []any{companyID}
	q := `SELECT id, balance, balance_known FROM bank_accounts WHERE company_id = $1 AND id IN (` + db.params(2, len(ids)) + `) ORDER BY id` + db.d.forUpdate()
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, internal(err, "lock bank accounts")
	}
	defer rows.Close()
	accounts := make(map[int64]*accountState, len(ids))
	for rows.Next() {
		var id int64
		a := &accountState{}
		if err := rows.Scan(&id, &a.balance, &a.known); err != nil {
			return nil, internal(err, "lock bank accounts")
		}
		accounts[id] = a
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "lock bank accounts")
	}
	for _, id := range ids {
		if accounts[id] == nil {
			return nil, notFound(nil, "bank account %d not found in company %d", id, companyID)
		}
	}
	return accounts, nil
}

type storedRef struct {
	ID   int64
	Code string
}

// storedRefs returns the batch's (account, reference) pairs already stored.
func (db *DB) storedRefs(ctx context.Context, tx *sql.Tx, in []recon.TransactionInput) (map[accountKey]storedRef, error) {
	byAccount := map[int64][]string{}
	for i := range in {
		byAccount[in[i].BankAccountID] = append(byAccount[in[i].BankAccountID], in[i].ReferenceNumber)
	}
	out := map[accountKey]storedRef{}
	for account, refs := range byAccount {
		slices.Sort(refs)
		refs = slices.Compact(refs)
		for start := 0; start < len(refs); start += insertChunk {
			chunk := refs[start:min(start+insertChunk, len(refs))]
			args := []any{account}
			for _, r := range chunk {
				args = append(args, r)
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, reference_number, code FROM transactions
				WHERE bank_account_id = `+db.d.param(1)+` AND reference_number IN (`+db.params(2, len(chunk))+`)`, args...)
			if err != nil {
				return nil, internal(err, "find duplicate references")
			}
			for rows.Next() {
				var r storedRef
				var ref string
				var code sql.NullString
				if err := rows.Scan(&r.ID, &ref, &code); err != nil {
					rows.Close()
					return nil, internal(err, "find duplicate references")
				}
				r.Code = code.String
				out[accountKey{account, ref}] = r
			}
			if err := rows.Close(); err != nil {
				return nil, internal(err, "find duplicate references")
			}
		}
	}
	return out, nil
}

func updateBalances(ctx context.Context, tx *sql.Tx, accounts map[int64]*accountState) error {
	for id, a := range accounts {
		if !a.changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bank_accounts SET balance = $1, balance_known = $2 WHERE id = $3`, a.balance, a.known, id); err != nil {
			return internal(err, "update balance")
		}
	}
	return nil
}

// dayNumber is the day of a wall-clock time, as counted in transaction_day_counts.
func dayNumber(t time.Time) int64 { return recon.WallClock(t).Unix() / 86400 }

func (db *DB) addDayCounts(ctx context.Context, tx *sql.Tx, companyID int64, in []recon.TransactionInput, idx []int) error {
	type key struct{ account, day int64 }
	counts := map[key]int64{}
	for _, i := range idx {
		counts[key{in[i].BankAccountID, dayNumber(in[i].TransactionDate)}]++
	}
	if len(counts) == 0 {
		return nil
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	// A stable order, so that concurrent batches lock the rows alike.
	slices.SortFunc(keys, func(a, b key) int {
		if a.account != b.account {
			return int(a.account - b.account)
		}
		return int(a.day - b.day)
	})
	for start := 0; start < len(keys); start += insertChunk {
		chunk := keys[start:min(start+insertChunk, len(keys))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n) VALUES `)
		args := make([]any, 0, 4*len(chunk))
		for n, k := range chunk {
			if n > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(" + db.params(len(args)+1, 4) + ")")
			args = append(args, companyID, k.account, k.day, counts[k])
		}
		sb.WriteString(` ON CONFLICT (company_id, bank_account_id, day) DO UPDATE SET n = transaction_day_counts.n + excluded.n`)
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return internal(err, "count transactions per day")
		}
	}
	return nil
}

// params returns n comma-separated placeholders numbered from first.
func (db *DB) params(first, n int) string {
	var sb strings.Builder
	for k := 0; k < n; k++ {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(db.d.param(first + k))
	}
	return sb.String()
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

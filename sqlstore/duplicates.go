package sqlstore

import (
	"context"
	"database/sql"
	"strings"
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
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
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

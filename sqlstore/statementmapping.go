package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"recon"
)

// StatementMapping returns the saved column mapping of one of the tenant's
// bank accounts (docs/statements.md, Column mappings): nil when none is
// saved, ENOTFOUND when the bank account is not the tenant's.
func (db *DB) StatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64) (*recon.StatementMapping, error) {
	if _, err := db.BankAccount(ctx, tenant, bankAccountID); err != nil {
		return nil, err
	}
	var raw string
	err := db.db.QueryRowContext(ctx, `SELECT mapping FROM statement_mappings WHERE company_id = $1 AND bank_account_id = $2`,
		tenant.ID(), bankAccountID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal(err, "read statement mapping")
	}
	var m recon.StatementMapping
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, internal(err, "decode statement mapping")
	}
	return &m, nil
}

// SetStatementMapping saves (replaces) the column mapping of one of the
// tenant's bank accounts; nil removes it. The caller checks the mapping
// (statement.ValidateMapping). ENOTFOUND when the bank account is not the
// tenant's.
func (db *DB) SetStatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64, m *recon.StatementMapping) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM bank_accounts WHERE company_id = $1 AND id = $2`, tenant.ID(), bankAccountID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "bank account %d not found", bankAccountID)
		}
		if err != nil {
			return internal(err, "read bank account")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM statement_mappings WHERE company_id = $1 AND bank_account_id = $2`, tenant.ID(), bankAccountID); err != nil {
			return internal(err, "delete statement mapping")
		}
		if m == nil {
			return nil
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return internal(err, "encode statement mapping")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO statement_mappings (company_id, bank_account_id, mapping, updated_at) VALUES ($1, $2, $3, $4)`,
			tenant.ID(), bankAccountID, string(raw), db.now()); err != nil {
			return internal(err, "save statement mapping")
		}
		return nil
	})
}

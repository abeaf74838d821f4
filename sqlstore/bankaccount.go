package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

const selectBankAccount = `SELECT id, company_id, bank_name, account_number, holder_name, sub_accounts, created_at FROM bank_accounts`

// CreateBankAccount stores b and sets b.ID and b.CreatedAt.
func (db *DB) CreateBankAccount(ctx context.Context, b *recon.BankAccount) error {
	subs, err := joinList("sub_accounts", b.SubAccounts)
	if err != nil {
		return err
	}
	createdAt := db.now()
	err = db.scanWrite(ctx, `
		INSERT INTO bank_accounts (company_id, bank_name, account_number, holder_name, sub_accounts, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		[]any{b.CompanyID, b.BankName, b.AccountNumber, b.HolderName, subs, createdAt}, &b.ID)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "company %d already has the %s account %s", b.CompanyID, b.BankName, b.AccountNumber)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", b.CompanyID)
	}
	if err != nil {
		return internal(err, "create bank account")
	}
	b.CreatedAt = createdAt
	return nil
}

// BankAccount returns the company's bank account, or ENOTFOUND.
func (db *DB) BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error) {
	companyID := tenant.ID()
	return db.oneBankAccount(ctx, id, selectBankAccount+` WHERE company_id = $1 AND id = $2`, companyID, id)
}

// BankAccountByID returns any company's bank account, or ENOTFOUND.
func (db *DB) BankAccountByID(ctx context.Context, id int64) (*recon.BankAccount, error) {
	return db.oneBankAccount(ctx, id, selectBankAccount+` WHERE id = $1`, id)
}

func (db *DB) oneBankAccount(ctx context.Context, id int64, query string, args ...any) (*recon.BankAccount, error) {
	b, err := scanBankAccount(db.db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "bank account %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read bank account")
	}
	return b, nil
}

// BankAccounts lists the company's bank accounts by id.
func (db *DB) BankAccounts(ctx context.Context, tenant recon.TenantID) ([]*recon.BankAccount, error) {
	return db.bankAccounts(ctx, tenant.ID())
}

// bankAccounts lists the bank accounts of the rows of company_id companyID.
func (db *DB) bankAccounts(ctx context.Context, companyID int64) ([]*recon.BankAccount, error) {
	rows, err := db.db.QueryContext(ctx, selectBankAccount+` WHERE company_id = $1 ORDER BY id`, companyID)
	if err != nil {
		return nil, internal(err, "list bank accounts")
	}
	defer rows.Close()
	var out []*recon.BankAccount
	for rows.Next() {
		b, err := scanBankAccount(rows)
		if err != nil {
			return nil, internal(err, "list bank accounts")
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "list bank accounts")
	}
	return out, nil
}

func scanBankAccount(s scanner) (*recon.BankAccount, error) {
	var b recon.BankAccount
	var subs string
	if err := s.Scan(&b.ID, &b.CompanyID, &b.BankName, &b.AccountNumber, &b.HolderName, &subs, &b.CreatedAt); err != nil {
		return nil, err
	}
	b.SubAccounts = splitList(subs)
	b.CreatedAt = b.CreatedAt.UTC()
	return &b, nil
}

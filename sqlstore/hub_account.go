package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"recon"
)

// The hub's read side of linked accounts and their transactions: only
// accounts the hub linked (xid set), only the tenant's.

const linkedAccountLast = `, (SELECT MAX(t.transaction_date) FROM transactions t WHERE t.bank_account_id = b.id)`

// HubBankAccounts implements recon.HubAccountStore.
func (db *DB) HubBankAccounts(ctx context.Context, tenant recon.TenantID, f recon.HubAccountFilter) ([]*recon.LinkedAccount, int64, error) {
	companyID := tenant.ID()
	var args queryArgs
	where := ` WHERE b.company_id = ` + args.add(companyID) + ` AND b.xid IS NOT NULL`
	if f.CustomerXID != "" {
		where += ` AND c.xid = ` + args.add(strings.ToLower(f.CustomerXID))
	}
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*)`+linkedAccountFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count linked accounts")
	}
	page, per := max(f.Page, 1), max(f.PerPage, 1)
	rows, err := db.db.QueryContext(ctx, `SELECT `+linkedAccountColumns+linkedAccountLast+linkedAccountFrom+where+
		` ORDER BY b.created_at DESC, b.id DESC LIMIT `+args.add(per)+` OFFSET `+args.add((page-1)*per), args...)
	out, err := collect(rows, err, "list linked accounts", scanLinkedAccountLast)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

func scanLinkedAccountLast(s scanner) (*recon.LinkedAccount, error) {
	var a recon.LinkedAccount
	var created, linked, last anyTime
	if err := s.Scan(&a.ID, &a.CompanyID, &a.BankName, &a.AccountNumber, &a.HolderName, &created, &a.XID, &a.CustomerID,
		&a.CustomerXID, &a.LinkState, &a.AccountType, &a.BankCode, &a.Balance, &linked, &last); err != nil {
		return nil, err
	}
	a.CreatedAt, a.LinkedAt = created.t, linked.t
	if !last.t.IsZero() {
		a.LastTransaction = recon.WallClock(last.t)
	}
	return &a, nil
}

// HubBankAccount implements recon.HubAccountStore.
func (db *DB) HubBankAccount(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkedAccount, error) {
	companyID := tenant.ID()
	a, err := scanLinkedAccountLast(db.db.QueryRowContext(ctx, `SELECT `+linkedAccountColumns+linkedAccountLast+linkedAccountFrom+
		` WHERE b.company_id = $1 AND b.xid = $2`, companyID, strings.ToLower(xid)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "bank account %s not found", xid)
	}
	if err != nil {
		return nil, internal(err, "read linked account")
	}
	return a, nil
}

const hubTransactionFrom = ` FROM transactions t
	JOIN bank_accounts b ON b.company_id = t.company_id AND b.id = t.bank_account_id
	LEFT JOIN hub_customers c ON c.company_id = b.company_id AND c.id = b.hub_customer_id`

func scanHubTransaction(s scanner) (*recon.HubTransaction, error) {
	var h recon.HubTransaction
	t, err := scanTransaction(scanAlso{s, []any{&h.BankAccountXID, &h.CustomerXID}})
	if err != nil {
		return nil, err
	}
	h.Transaction = *t
	return &h, nil
}

const hubTransactionColumns = transactionColumns + `, b.xid, COALESCE(c.xid, '')`

// HubTransactions implements recon.HubAccountStore.
func (db *DB) HubTransactions(ctx context.Context, tenant recon.TenantID, f recon.HubTransactionFilter) ([]*recon.HubTransaction, int64, error) {
	companyID := tenant.ID()
	var args queryArgs
	where := ` WHERE t.company_id = ` + args.add(companyID) + ` AND b.xid IS NOT NULL`
	if f.CustomerXID != "" {
		where += ` AND c.xid = ` + args.add(strings.ToLower(f.CustomerXID))
	}
	if f.AccountXID != "" {
		where += ` AND b.xid = ` + args.add(strings.ToLower(f.AccountXID))
	}
	if !f.From.IsZero() {
		where += ` AND t.transaction_date >= ` + args.add(recon.WallClock(f.From))
	}
	if !f.To.IsZero() {
		where += ` AND t.transaction_date < ` + args.add(recon.WallClock(f.To).AddDate(0, 0, 1))
	}
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*)`+hubTransactionFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count hub transactions")
	}
	page, per := max(f.Page, 1), max(f.PerPage, 1)
	rows, err := db.db.QueryContext(ctx, `SELECT `+hubTransactionColumns+hubTransactionFrom+where+
		` ORDER BY t.transaction_date DESC, t.id DESC LIMIT `+args.add(per)+` OFFSET `+args.add((page-1)*per), args...)
	out, err := collect(rows, err, "list hub transactions", scanHubTransaction)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// HubTransaction implements recon.HubAccountStore.
func (db *DB) HubTransaction(ctx context.Context, tenant recon.TenantID, id int64) (*recon.HubTransaction, error) {
	companyID := tenant.ID()
	h, err := scanHubTransaction(db.db.QueryRowContext(ctx, `SELECT `+hubTransactionColumns+hubTransactionFrom+
		` WHERE t.company_id = $1 AND t.id = $2 AND b.xid IS NOT NULL`, companyID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "transaction %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read hub transaction")
	}
	return h, nil
}

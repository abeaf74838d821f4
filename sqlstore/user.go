package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"recon"
)

// CreateUser stores u and sets u.ID and u.CreatedAt. The e-mail address is
// stored trimmed and in lower case. An address already used in the company is
// ECONFLICT; an unknown company is ENOTFOUND.
func (db *DB) CreateUser(ctx context.Context, u *recon.User) error {
	perms, err := joinList("permissions", u.Permissions)
	if err != nil {
		return err
	}
	if err := db.ownCompany(ctx, u.Company); err != nil {
		return err
	}
	email := normalizeEmail(u.Email)
	createdAt := db.now()
	var id int64
	err = db.db.QueryRowContext(ctx, `
		INSERT INTO users (company_id, email, role, permissions, password_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING id`,
		u.Company, email, string(u.Role), perms, u.PasswordHash, createdAt,
	).Scan(&id)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "a user with this email already exists in company %d", u.Company)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", u.Company)
	}
	if err != nil {
		return internal(err, "create user")
	}
	u.ID, u.Email, u.CreatedAt = id, email, createdAt
	return nil
}

// User returns the user with the given id, or ENOTFOUND.
func (db *DB) User(ctx context.Context, id int64) (*recon.User, error) {
	u, err := scanUser(db.db.QueryRowContext(ctx, selectUser+` WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "user %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read user")
	}
	return u, nil
}

// UserByEmail returns the company's user with the e-mail address (compared
// trimmed and in lower case), or ENOTFOUND.
func (db *DB) UserByEmail(ctx context.Context, companyID int64, email string) (*recon.User, error) {
	u, err := scanUser(db.db.QueryRowContext(ctx, selectUser+` WHERE company_id = $1 AND email = $2`,
		companyID, normalizeEmail(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "no user with this email in company %d", companyID)
	}
	if err != nil {
		return nil, internal(err, "read user")
	}
	return u, nil
}

const selectUser = `SELECT id, company_id, email, role, permissions, password_hash, created_at FROM users`

func scanUser(row interface{ Scan(...any) error }) (*recon.User, error) {
	var (
		u     recon.User
		perms string
	)
	if err := row.Scan(&u.ID, &u.Company, &u.Email, &u.Role, &perms, &u.PasswordHash, &u.CreatedAt); err != nil {
		return nil, err
	}
	u.Permissions = splitList(perms)
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, nil
}

// normalizeEmail is recon.User.Validate's normal form of an e-mail address.
func normalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// SetUserRole implements recon.UserStore.
func (db *DB) SetUserRole(ctx context.Context, companyID, userID int64, role recon.Role, permissions []string) error {
	return setUserRole(ctx, db.db, companyID, userID, role, permissions)
}

// setUserRole is the one statement of SetUserRole and ChangeUserRole.
func setUserRole(ctx context.Context, q querier, companyID, userID int64, role recon.Role, permissions []string) error {
	perms, err := joinList("permissions", permissions)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, `UPDATE users SET role = $1, permissions = $2 WHERE id = $3 AND company_id = $4`,
		string(role), perms, userID, companyID)
	if err != nil {
		return internal(err, "set user role")
	}
	if n, err := res.RowsAffected(); err != nil {
		return internal(err, "set user role")
	} else if n == 0 {
		return recon.Errorf(recon.ENOTFOUND, "company %d has no user %d", companyID, userID)
	}
	return nil
}

// errLastAdmin is ChangeUserRole's refusal.
var errLastAdmin = recon.Errorf(recon.ECONFLICT, "this is the company's last Admin: make another user Admin first, so that someone can still manage the company")

// ChangeUserRole implements recon.UserStore. The company's Admins and
// SuperAdmins are locked first (FOR UPDATE on PostgreSQL, where a waiting
// demotion then sees the committed one; SQLite's write transaction is the
// database's only writer), then counted without the user.
func (db *DB) ChangeUserRole(ctx context.Context, companyID, userID int64, role recon.Role, permissions []string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM users WHERE company_id = $1 AND role IN ($2, $3) ORDER BY id`+db.d.forUpdate(),
			companyID, string(recon.RoleAdmin), string(recon.RoleSuperAdmin))
		admins, err := collect(rows, err, "lock the company's admins", func(s scanner) (*int64, error) {
			var id int64
			return &id, s.Scan(&id)
		})
		if err != nil {
			return err
		}
		demoted := !role.Administers()
		if demoted && len(admins) == 1 && *admins[0] == userID {
			return errLastAdmin
		}
		return setUserRole(ctx, tx, companyID, userID, role, permissions)
	})
}

// Users implements recon.UserStore.
func (db *DB) Users(ctx context.Context, companyID int64, offset, limit int) ([]*recon.User, int64, error) {
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE company_id = $1`, companyID).Scan(&total); err != nil {
		return nil, 0, internal(err, "count users")
	}
	rows, err := db.db.QueryContext(ctx, selectUser+` WHERE company_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, companyID, limit, offset)
	if err != nil {
		return nil, 0, internal(err, "list users")
	}
	defer rows.Close()
	var out []*recon.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, internal(err, "list users")
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, internal(err, "list users")
	}
	return out, total, nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

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
	lang, err := recon.CheckUserLang(u.Lang)
	if err != nil {
		return err
	}
	createdAt := db.now()
	var id int64
	err = db.scanWrite(ctx, `
		INSERT INTO users (company_id, email, role, permissions, password_hash, created_at, lang)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		RETURNING id`,
		[]any{u.Company, email, string(u.Role), perms, u.PasswordHash, createdAt, lang}, &id)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "a user with this email already exists in company %d", u.Company)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", u.Company)
	}
	if err != nil {
		return internal(err, "create user")
	}
	u.ID, u.Email, u.CreatedAt, u.Lang = id, email, createdAt, lang
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

const userColumns = `id, company_id, email, role, permissions, password_hash, created_at, deactivated_at, lang`

const selectUser = `SELECT ` + userColumns + ` FROM users`

func scanUser(row interface{ Scan(...any) error }) (*recon.User, error) {
	var (
		u           recon.User
		perms       string
		deactivated sql.NullTime
	)
	if err := row.Scan(&u.ID, &u.Company, &u.Email, &u.Role, &perms, &u.PasswordHash, &u.CreatedAt, &deactivated, &u.Lang); err != nil {
		return nil, err
	}
	u.Permissions = splitList(perms)
	u.CreatedAt = u.CreatedAt.UTC()
	if deactivated.Valid {
		t := deactivated.Time.UTC()
		u.DeactivatedAt = &t
	}
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

// errLastAdmin is ChangeUserRole's and DeactivateUser's refusal.
var errLastAdmin = &recon.Error{Code: recon.ECONFLICT, Reason: "last_admin",
	Message: "this is the company's last Admin: make another user Admin first, so that someone can still manage the company"}

// ChangeUserRole implements recon.UserStore. The company's active Admins and
// SuperAdmins are locked first (lockAdmins), then counted without the user.
func (db *DB) ChangeUserRole(ctx context.Context, companyID, userID int64, role recon.Role, permissions []string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if !role.Administers() {
			if err := db.keepAnAdmin(ctx, tx, companyID, userID); err != nil {
				return err
			}
		}
		return setUserRole(ctx, tx, companyID, userID, role, permissions)
	})
}

// keepAnAdmin refuses (errLastAdmin) when userID is the company's only
// active Admin or SuperAdmin. The company's active Admins and SuperAdmins
// are locked first (FOR UPDATE on PostgreSQL, where a waiting demotion or
// deactivation then sees the committed one; SQLite's write transaction is
// the database's only writer).
func (db *DB) keepAnAdmin(ctx context.Context, tx *sql.Tx, companyID, userID int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM users WHERE company_id = $1 AND role IN ($2, $3) AND deactivated_at IS NULL ORDER BY id`+db.d.forUpdate(),
		companyID, string(recon.RoleAdmin), string(recon.RoleSuperAdmin))
	admins, err := collect(rows, err, "lock the company's admins", func(s scanner) (*int64, error) {
		var id int64
		return &id, s.Scan(&id)
	})
	if err != nil {
		return err
	}
	if len(admins) == 1 && *admins[0] == userID {
		return errLastAdmin
	}
	return nil
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

// UsersByEmail implements recon.TeamStore.
func (db *DB) UsersByEmail(ctx context.Context, email string) ([]*recon.User, error) {
	rows, err := db.db.QueryContext(ctx, selectUser+` WHERE email = $1 ORDER BY id`, normalizeEmail(email))
	return collect(rows, err, "read users by email", func(s scanner) (*recon.User, error) { return scanUser(s) })
}

// SetUserLang implements recon.TeamStore.
func (db *DB) SetUserLang(ctx context.Context, companyID, userID int64, lang string) error {
	lang, err := recon.CheckUserLang(lang)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET lang = $1 WHERE id = $2 AND company_id = $3`, lang, userID, companyID)
		return affectedOne(res, err, "set user language", companyID, userID)
	})
}

// affectedOne turns an UPDATE of one user that changed no row into ENOTFOUND.
func affectedOne(res sql.Result, err error, what string, companyID, userID int64) error {
	if err != nil {
		return internal(err, what)
	}
	if n, err := res.RowsAffected(); err != nil {
		return internal(err, what)
	} else if n == 0 {
		return recon.Errorf(recon.ENOTFOUND, "company %d has no user %d", companyID, userID)
	}
	return nil
}

// CreateUserToken implements recon.TeamStore. Links expired for a week are
// swept on the way.
func (db *DB) CreateUserToken(ctx context.Context, t *recon.UserToken, tokenHash []byte) error {
	email := normalizeEmail(t.Email)
	var user any
	if t.UserID != 0 {
		user = t.UserID
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_tokens WHERE expires_at < $1`, storedTime(t.CreatedAt.Add(-7*24*time.Hour))); err != nil {
			return internal(err, "sweep user tokens")
		}
		var err error
		if t.UserID != 0 {
			_, err = tx.ExecContext(ctx, `DELETE FROM user_tokens WHERE kind = $1 AND user_id = $2 AND used_at IS NULL`, string(t.Kind), t.UserID)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM user_tokens WHERE kind = $1 AND email = $2 AND user_id IS NULL AND used_at IS NULL`, string(t.Kind), email)
		}
		if err != nil {
			return internal(err, "replace user tokens")
		}
		err = tx.QueryRowContext(ctx, `
			INSERT INTO user_tokens (token_hash, kind, email, user_id, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			tokenHash, string(t.Kind), email, user, storedTime(t.CreatedAt), storedTime(t.ExpiresAt)).Scan(&t.ID)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "user %d not found", t.UserID)
		}
		if err != nil {
			return internal(err, "create user token")
		}
		t.Email = email
		return nil
	})
}

const userTokenColumns = `id, kind, email, user_id, created_at, expires_at, used_at`

func scanUserToken(row scanner) (*recon.UserToken, error) {
	var (
		t    recon.UserToken
		user sql.NullInt64
		used sql.NullTime
	)
	if err := row.Scan(&t.ID, &t.Kind, &t.Email, &user, &t.CreatedAt, &t.ExpiresAt, &used); err != nil {
		return nil, err
	}
	t.UserID = user.Int64
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	if used.Valid {
		u := used.Time.UTC()
		t.UsedAt = &u
	}
	return &t, nil
}

func errNoUserToken(err error) error {
	return &recon.Error{Code: recon.ENOTFOUND, Reason: "link_invalid", Message: "this link is not valid: ask for a new one", Err: err}
}

// UserToken implements recon.TeamStore.
func (db *DB) UserToken(ctx context.Context, kind recon.UserTokenKind, tokenHash []byte) (*recon.UserToken, error) {
	t, err := scanUserToken(db.db.QueryRowContext(ctx, `SELECT `+userTokenColumns+` FROM user_tokens WHERE token_hash = $1 AND kind = $2`, tokenHash, string(kind)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoUserToken(err)
	}
	if err != nil {
		return nil, internal(err, "read user token")
	}
	return t, nil
}

// RedeemUserToken implements recon.TeamStore.
func (db *DB) RedeemUserToken(ctx context.Context, kind recon.UserTokenKind, tokenHash []byte, now time.Time, passwordHash string) ([]*recon.User, error) {
	var users []*recon.User
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := scanUserToken(tx.QueryRowContext(ctx, `SELECT `+userTokenColumns+` FROM user_tokens WHERE token_hash = $1 AND kind = $2`+db.d.forUpdate(), tokenHash, string(kind)))
		if errors.Is(err, sql.ErrNoRows) {
			return errNoUserToken(err)
		}
		if err != nil {
			return internal(err, "read user token")
		}
		if err := t.Usable(now); err != nil {
			return err
		}
		var rows *sql.Rows
		if t.UserID != 0 {
			rows, err = tx.QueryContext(ctx, selectUser+` WHERE id = $1 AND deactivated_at IS NULL`, t.UserID)
		} else {
			rows, err = tx.QueryContext(ctx, selectUser+` WHERE email = $1 AND deactivated_at IS NULL ORDER BY id`, t.Email)
		}
		users, err = collect(rows, err, "read the link's users", func(s scanner) (*recon.User, error) { return scanUser(s) })
		if err != nil {
			return err
		}
		if len(users) == 0 {
			return errNoUserToken(nil)
		}
		for _, u := range users {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, passwordHash, u.ID); err != nil {
				return internal(err, "set password")
			}
			if err := endSessions(ctx, tx, u.ID, nil); err != nil {
				return err
			}
			u.PasswordHash = passwordHash
		}
		if _, err := tx.ExecContext(ctx, `UPDATE user_tokens SET used_at = $1 WHERE id = $2`, storedTime(now), t.ID); err != nil {
			return internal(err, "use user token")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return users, nil
}

// endSessions deletes the user's dashboard sessions, and its place in other
// sessions' lists of users to switch to, except the session with the hash
// keep (nil: none kept).
func endSessions(ctx context.Context, tx *sql.Tx, userID int64, keep []byte) error {
	if keep == nil {
		keep = []byte{}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_session_users WHERE user_id = $1
		AND session_id NOT IN (SELECT id FROM dashboard_sessions WHERE token_hash = $2)`, userID, keep); err != nil {
		return internal(err, "end sessions")
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE user_id = $1 AND token_hash <> $2`, userID, keep); err != nil {
		return internal(err, "end sessions")
	}
	return nil
}

// SetUserPassword implements recon.TeamStore.
func (db *DB) SetUserPassword(ctx context.Context, companyID, userID int64, passwordHash string, keepSession []byte) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2 AND company_id = $3`, passwordHash, userID, companyID)
		if err := affectedOne(res, err, "set password", companyID, userID); err != nil {
			return err
		}
		return endSessions(ctx, tx, userID, keepSession)
	})
}

// DeactivateUser implements recon.TeamStore.
func (db *DB) DeactivateUser(ctx context.Context, companyID, userID int64, now time.Time) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.keepAnAdmin(ctx, tx, companyID, userID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET deactivated_at = $1 WHERE id = $2 AND company_id = $3 AND deactivated_at IS NULL`,
			storedTime(now), userID, companyID)
		if err := affectedOne(res, err, "deactivate user", companyID, userID); err != nil {
			var exists int
			if e := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = $1 AND company_id = $2`, userID, companyID).Scan(&exists); e == nil {
				return &recon.Error{Code: recon.ECONFLICT, Reason: "deactivated", Message: "the user is already deactivated"}
			}
			return err
		}
		if err := endSessions(ctx, tx, userID, nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE user_id = $1 AND company_id = $2`, userID, companyID); err != nil {
			return internal(err, "revoke the user's tokens")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_tokens WHERE user_id = $1 AND used_at IS NULL`, userID); err != nil {
			return internal(err, "delete the user's links")
		}
		return nil
	})
}

// ReactivateUser implements recon.TeamStore.
func (db *DB) ReactivateUser(ctx context.Context, companyID, userID int64) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET deactivated_at = NULL WHERE id = $1 AND company_id = $2`, userID, companyID)
		return affectedOne(res, err, "reactivate user", companyID, userID)
	})
}

// StartDashboardSession implements recon.TeamStore.
func (db *DB) StartDashboardSession(ctx context.Context, s *recon.DashboardSession, tokenHash []byte, others []int64) error {
	if err := db.CreateDashboardSession(ctx, s, tokenHash); err != nil {
		return err
	}
	ids := append([]int64{s.UserID}, others...)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_session_users (session_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, s.ID, id); err != nil {
				if db.d.violation(err) == foreignKeyViolation {
					return notFound(err, "user %d not found", id)
				}
				return internal(err, "list the session's users")
			}
		}
		return nil
	})
	if err != nil {
		_ = db.DeleteDashboardSession(ctx, tokenHash)
	}
	return err
}

// DashboardSessionUsers implements recon.TeamStore: the active ones.
func (db *DB) DashboardSessionUsers(ctx context.Context, sessionID int64) ([]*recon.User, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+prefixed("u.", userColumns)+` FROM dashboard_session_users su
		JOIN users u ON u.id = su.user_id
		WHERE su.session_id = $1 AND u.deactivated_at IS NULL ORDER BY u.id`, sessionID)
	return collect(rows, err, "read the session's users", func(s scanner) (*recon.User, error) { return scanUser(s) })
}

// SwitchDashboardSession implements recon.TeamStore.
func (db *DB) SwitchDashboardSession(ctx context.Context, tokenHash []byte, userID int64) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var sessionID, companyID int64
		err := tx.QueryRowContext(ctx, `SELECT s.id, u.company_id FROM dashboard_sessions s
			JOIN dashboard_session_users su ON su.session_id = s.id
			JOIN users u ON u.id = su.user_id
			WHERE s.token_hash = $1 AND su.user_id = $2 AND u.deactivated_at IS NULL`, tokenHash, userID).Scan(&sessionID, &companyID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "the session has no user %d", userID)
		}
		if err != nil {
			return internal(err, "switch company")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE dashboard_sessions SET company_id = $1, user_id = $2, live = $3 WHERE id = $4`,
			companyID, userID, true, sessionID); err != nil {
			return internal(err, "switch company")
		}
		return nil
	})
}

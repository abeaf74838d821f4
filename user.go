package recon

import (
	"context"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is a user's role in their company.
type Role string

// Roles, from most to least powerful.
const (
	RoleSuperAdmin Role = "SuperAdmin"
	RoleAdmin      Role = "Admin"
	RoleAccountant Role = "Accountant"
	RoleMember     Role = "Member"
)

// Roles lists every role.
var Roles = []Role{RoleSuperAdmin, RoleAdmin, RoleAccountant, RoleMember}

// ParseRole returns the role named s (case-sensitive), or an EINVALID error.
func ParseRole(s string) (Role, error) {
	if slices.Contains(Roles, Role(s)) {
		return Role(s), nil
	}
	return "", FieldError("role", "role must be one of SuperAdmin, Admin, Accountant, Member")
}

// Administers reports whether the role manages its company: Admin or
// SuperAdmin, which may do everything (User.May) and of which a company
// keeps at least one (UserStore.ChangeUserRole).
func (r Role) Administers() bool { return r == RoleAdmin || r == RoleSuperAdmin }

// GrantableRoles are the roles granter may give: its own and those below it
// (Roles is ordered from most to least powerful); none for an unknown role.
func GrantableRoles(granter *User) []Role {
	i := slices.Index(Roles, granter.Role)
	if i < 0 {
		return nil
	}
	return Roles[i:]
}

// CheckGrant applies who may grant which role (the dashboard's users
// settings): granter may give role, to a new user (target nil) or to target,
// only when role is among GrantableRoles(granter), and only a SuperAdmin
// changes a SuperAdmin's role. A refusal is EFORBIDDEN naming why. That a
// company keeps an Admin is the store's to check, under its lock.
func CheckGrant(granter, target *User, role Role) error {
	if !slices.Contains(GrantableRoles(granter), role) {
		return Errorf(EFORBIDDEN, "a %s may not give the role %s", granter.Role, role)
	}
	if target != nil && target.Role == RoleSuperAdmin && granter.Role != RoleSuperAdmin {
		return Errorf(EFORBIDDEN, "only a SuperAdmin may change a SuperAdmin")
	}
	return nil
}

// Permissions a user may hold.
const (
	// PermViewTransactions lets a role below Admin read money data.
	PermViewTransactions = "view_transactions"
	// PermCreateTransactions lets a role below Admin add transactions.
	PermCreateTransactions = "create_transactions"
	// PermCreateRefunds lets a role below Admin request refunds (API v2,
	// docs/api-v2.md, Refunds); approving one stays Admin's and SuperAdmin's.
	PermCreateRefunds = "create_refunds"
	// PermIssueInvoices lets a role below Admin create, issue, replace,
	// adjust and cancel e-invoices (docs/invoices.md).
	PermIssueInvoices = "issue_invoices"
)

// Permissions lists every permission.
var Permissions = []string{PermViewTransactions, PermCreateTransactions, PermCreateRefunds, PermIssueInvoices}

// User is a person who belongs to one company with one role. The same e-mail
// address may belong to several companies, as separate users.
type User struct {
	ID int64
	// Company is the user's company: its own (live) id, never a test
	// twin's (a tenant is a recon.TenantID).
	Company     int64
	Email       string
	Role        Role
	Permissions []string
	// PasswordHash is a bcrypt hash, or "" when the user cannot log in with a password.
	PasswordHash string
	CreatedAt    time.Time
	// DeactivatedAt is when an Admin deactivated the user (nil: active). A
	// deactivated user cannot sign in anywhere, and its sessions and OAuth
	// tokens were revoked with it (docs/dashboard.md, Team).
	DeactivatedAt *time.Time
	// Lang is the language of the e-mails the user gets: "vi" (the
	// default) or "en".
	Lang string
}

// Active reports whether the user may sign in: not deactivated.
func (u *User) Active() bool { return u.DeactivatedAt == nil }

// Invited reports whether the user was invited and has not set a password
// yet: it cannot sign in until it follows its invitation.
func (u *User) Invited() bool { return u.PasswordHash == "" && u.Active() }

// UserLangs are the languages of a user's e-mails, the default first.
var UserLangs = []string{"vi", "en"}

// CheckUserLang returns lang, "vi" when empty, or an EINVALID error.
func CheckUserLang(lang string) (string, error) {
	if lang == "" {
		return UserLangs[0], nil
	}
	if !slices.Contains(UserLangs, lang) {
		return "", FieldError("lang", "lang must be vi or en")
	}
	return lang, nil
}

// CheckNewPassword applies the rule every password a person sets follows
// (the CLI's, the team pages'): 8 to 72 bytes (bcrypt's limit), at least 8
// characters.
func CheckNewPassword(pw string) error {
	if utf8.RuneCountInString(pw) < 8 || len(pw) > 72 {
		return FieldError("password", "the password must have 8 to 72 bytes, at least 8 characters")
	}
	return nil
}

// CheckDeactivate applies who may deactivate whom (the team page): not
// oneself (another Admin does it), not a user of another company, only a
// SuperAdmin deactivates a SuperAdmin, and not a user already deactivated.
// That the company keeps an active Admin is the store's to check, under its
// lock (UserStore.DeactivateUser).
func CheckDeactivate(actor, target *User) error {
	switch {
	case actor.Company != target.Company:
		return Errorf(ENOTFOUND, "user %d not found", target.ID)
	case !actor.Role.Administers():
		return &Error{Code: EFORBIDDEN, Reason: "admin_only", Message: "only an Admin deactivates users"}
	case actor.ID == target.ID:
		return &Error{Code: EFORBIDDEN, Reason: "self", Message: "you cannot deactivate yourself: ask another Admin"}
	case target.Role == RoleSuperAdmin && actor.Role != RoleSuperAdmin:
		return &Error{Code: EFORBIDDEN, Reason: "superadmin", Message: "only a SuperAdmin may change a SuperAdmin"}
	case !target.Active():
		return &Error{Code: ECONFLICT, Reason: "deactivated", Message: "the user is already deactivated"}
	}
	return nil
}

// UserTokenKind is what a one-time link of the team pages does.
type UserTokenKind string

// The one-time links (docs/dashboard.md, Team).
const (
	// UserTokenInvite sets the first password of an invited user.
	UserTokenInvite UserTokenKind = "invite"
	// UserTokenReset sets a new password.
	UserTokenReset UserTokenKind = "reset"
)

// How long a one-time link lives.
const (
	InviteTTL = 7 * 24 * time.Hour
	ResetTTL  = time.Hour
)

// UserToken is a one-time link: the store keeps the SHA-256 of its token,
// never the token. An invitation and an Admin's reset link name one user
// (UserID); a reset asked for by e-mail names only the address, and resets
// every active user of it (each of that person's companies).
type UserToken struct {
	ID        int64
	Kind      UserTokenKind
	Email     string
	UserID    int64 // 0: every active user of Email
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// Usable says why the link cannot be used at now (EINVALID, in words a
// person understands), or nil.
func (t *UserToken) Usable(now time.Time) error {
	switch {
	case t.UsedAt != nil:
		return &Error{Code: EINVALID, Reason: "link_used", Message: "this link was already used"}
	case !now.Before(t.ExpiresAt):
		return &Error{Code: EINVALID, Reason: "link_expired", Message: "this link has expired"}
	}
	return nil
}

// Can reports whether the user holds the permission.
func (u *User) Can(perm string) bool { return slices.Contains(u.Permissions, perm) }

// Validate checks a new user and normalises its e-mail address to lower case.
func (u *User) Validate() error {
	u.Email = strings.ToLower(strings.TrimSpace(u.Email))
	if a, err := mail.ParseAddress(u.Email); err != nil || a.Address != u.Email || len(u.Email) > 254 {
		return FieldError("email", "email must be a plain e-mail address")
	}
	if _, err := ParseRole(string(u.Role)); err != nil {
		return err
	}
	lang, err := CheckUserLang(u.Lang)
	if err != nil {
		return err
	}
	u.Lang = lang
	for _, p := range u.Permissions {
		if !slices.Contains(Permissions, p) {
			return FieldError("permission", "unknown permission %q (known: %s)", p, strings.Join(Permissions, ", "))
		}
	}
	return nil
}

// UserStore stores users.
type UserStore interface {
	// CreateUser stores u and sets u.ID and u.CreatedAt. An e-mail already used
	// in the same company is ECONFLICT; an unknown company is ENOTFOUND.
	CreateUser(ctx context.Context, u *User) error
	// User returns the user with the given id, or ENOTFOUND.
	User(ctx context.Context, id int64) (*User, error)
	// UserByEmail returns the company's user with the e-mail address, or ENOTFOUND.
	UserByEmail(ctx context.Context, companyID int64, email string) (*User, error)
	// SetUserRole changes the role and permissions of the company's user
	// (ENOTFOUND for a user of another company). Tokens already issued to
	// the user follow at their next request: the user is loaded fresh.
	SetUserRole(ctx context.Context, companyID, userID int64, role Role, permissions []string) error
	// ChangeUserRole is SetUserRole for the company's own Admins (the
	// dashboard): it refuses (ECONFLICT) a change that would leave the
	// company without an Admin or SuperAdmin, checked under a lock of the
	// company's Admins, so that two Admins demoting each other at the same
	// moment cannot both succeed.
	ChangeUserRole(ctx context.Context, companyID, userID int64, role Role, permissions []string) error
	// Users lists the company's users in the order they were made, limit
	// from offset, with how many there are in all.
	Users(ctx context.Context, companyID int64, offset, limit int) ([]*User, int64, error)
}

// TeamStore is what the team's operations need beyond UserStore
// (docs/dashboard.md, Team; package team).
type TeamStore interface {
	// UsersByEmail returns every user with the address (compared trimmed
	// and in lower case), in every company, active or not, in id order.
	UsersByEmail(ctx context.Context, email string) ([]*User, error)
	// CreateUserToken stores t under the token's hash (setting t.ID). The
	// earlier unused links of the same kind for the same user (or, for a
	// reset by e-mail, the same address) stop working.
	CreateUserToken(ctx context.Context, t *UserToken, tokenHash []byte) error
	// UserToken returns the link with the token's hash, used or not, or
	// ENOTFOUND.
	UserToken(ctx context.Context, kind UserTokenKind, tokenHash []byte) (*UserToken, error)
	// RedeemUserToken uses the link at now, once: under a lock of the link,
	// it checks it (UserToken.Usable; ENOTFOUND for none), sets
	// passwordHash on its users (its user, or every active user of its
	// address) and marks it used, ends their dashboard sessions, and returns
	// the users changed. An invitation whose user was deactivated is
	// ENOTFOUND.
	RedeemUserToken(ctx context.Context, kind UserTokenKind, tokenHash []byte, now time.Time, passwordHash string) ([]*User, error)
	// SetUserPassword sets the company's user's password hash and ends its
	// dashboard sessions except the one with keepSession's hash.
	SetUserPassword(ctx context.Context, companyID, userID int64, passwordHash string, keepSession []byte) error
	// SetUserLang sets the language of the company's user's e-mails.
	SetUserLang(ctx context.Context, companyID, userID int64, lang string) error
	// DeactivateUser deactivates the company's user at now: it cannot sign
	// in, its dashboard sessions, OAuth tokens and unused links are deleted.
	// A change that would leave the company without an active Admin or
	// SuperAdmin is ECONFLICT (checked under the lock ChangeUserRole takes);
	// a user of another company is ENOTFOUND.
	DeactivateUser(ctx context.Context, companyID, userID int64, now time.Time) error
	// ReactivateUser lets a deactivated user of the company sign in again.
	ReactivateUser(ctx context.Context, companyID, userID int64) error
	// StartDashboardSession stores s (recon.DashboardStore's
	// CreateDashboardSession) with the other users the session may switch
	// to (the same person's user rows in other companies).
	StartDashboardSession(ctx context.Context, s *DashboardSession, tokenHash []byte, others []int64) error
	// DashboardSessionUsers returns the users the session may switch to,
	// its own included, in id order.
	DashboardSessionUsers(ctx context.Context, sessionID int64) ([]*User, error)
	// SwitchDashboardSession moves the session to another of its users
	// (live data); a user that is not the session's is ENOTFOUND.
	SwitchDashboardSession(ctx context.Context, tokenHash []byte, userID int64) error
}

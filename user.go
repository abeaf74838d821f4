package recon

import (
	"context"
	"net/mail"
	"slices"
	"strings"
	"time"
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
)

// Permissions lists every permission.
var Permissions = []string{PermViewTransactions, PermCreateTransactions, PermCreateRefunds}

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

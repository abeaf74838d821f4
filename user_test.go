package recon_test

import (
	"slices"
	"testing"

	"recon"
)

// TestCheckGrant is who may grant which role, as a table: every granter
// role against every role given, to a new user and to a SuperAdmin.
func TestCheckGrant(t *testing.T) {
	const (
		super, admin, acct, member = recon.RoleSuperAdmin, recon.RoleAdmin, recon.RoleAccountant, recon.RoleMember
		forbidden                  = recon.EFORBIDDEN
	)
	for _, c := range []struct {
		granter, role recon.Role
		target        recon.Role // "" for a new user
		code, msg     string
	}{
		{super, super, "", "", ""},
		{super, member, super, "", ""},
		{admin, admin, "", "", ""},
		{admin, acct, admin, "", ""},
		{admin, member, "", "", ""},
		{admin, super, "", forbidden, "a Admin may not give the role SuperAdmin"},
		{admin, member, super, forbidden, "only a SuperAdmin may change a SuperAdmin"},
		{admin, admin, super, forbidden, "only a SuperAdmin may change a SuperAdmin"},
		{acct, acct, member, "", ""},
		{acct, admin, member, forbidden, "a Accountant may not give the role Admin"},
		{member, member, "", "", ""},
		{member, acct, "", forbidden, "a Member may not give the role Accountant"},
		{"Owner", member, "", forbidden, "a Owner may not give the role Member"}, // an unknown role grants nothing
	} {
		var target *recon.User
		if c.target != "" {
			target = &recon.User{ID: 2, Role: c.target}
		}
		err := recon.CheckGrant(&recon.User{ID: 1, Role: c.granter}, target, c.role)
		if recon.ErrorCode(err) != c.code || (c.code != "" && recon.ErrorMessage(err) != c.msg) {
			t.Errorf("%s gives %s to %q: %v, want %s %q", c.granter, c.role, c.target, err, c.code, c.msg)
		}
	}
	for _, c := range []struct {
		granter recon.Role
		want    []recon.Role
	}{
		{super, recon.Roles},
		{admin, []recon.Role{admin, acct, member}},
		{acct, []recon.Role{acct, member}},
		{member, []recon.Role{member}},
		{"Owner", nil},
	} {
		if got := recon.GrantableRoles(&recon.User{Role: c.granter}); !slices.Equal(got, c.want) {
			t.Errorf("GrantableRoles(%s) = %v, want %v", c.granter, got, c.want)
		}
	}
	for _, r := range recon.Roles {
		if want := r == super || r == admin; r.Administers() != want {
			t.Errorf("%s.Administers() = %v", r, !want)
		}
	}
}

package recon_test

import (
	"slices"
	"strings"
	"testing"
	"time"

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

// TestCheckDeactivate is who may deactivate whom, as a table.
func TestCheckDeactivate(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	u := func(id, company int64, role recon.Role, deactivated bool) *recon.User {
		v := &recon.User{ID: id, Company: company, Role: role}
		if deactivated {
			v.DeactivatedAt = &now
		}
		return v
	}
	for _, c := range []struct {
		name          string
		actor, target *recon.User
		code, reason  string
	}{
		{"admin deactivates accountant", u(1, 1, recon.RoleAdmin, false), u(2, 1, recon.RoleAccountant, false), "", ""},
		{"admin deactivates admin", u(1, 1, recon.RoleAdmin, false), u(2, 1, recon.RoleAdmin, false), "", ""},
		{"super deactivates super", u(1, 1, recon.RoleSuperAdmin, false), u(2, 1, recon.RoleSuperAdmin, false), "", ""},
		{"other company", u(1, 1, recon.RoleAdmin, false), u(2, 2, recon.RoleMember, false), recon.ENOTFOUND, ""},
		{"accountant", u(1, 1, recon.RoleAccountant, false), u(2, 1, recon.RoleMember, false), recon.EFORBIDDEN, "admin_only"},
		{"oneself", u(1, 1, recon.RoleAdmin, false), u(1, 1, recon.RoleAdmin, false), recon.EFORBIDDEN, "self"},
		{"admin deactivates super", u(1, 1, recon.RoleAdmin, false), u(2, 1, recon.RoleSuperAdmin, false), recon.EFORBIDDEN, "superadmin"},
		{"twice", u(1, 1, recon.RoleAdmin, false), u(2, 1, recon.RoleMember, true), recon.ECONFLICT, "deactivated"},
	} {
		err := recon.CheckDeactivate(c.actor, c.target)
		var reason string
		if e, ok := err.(*recon.Error); ok {
			reason = e.Reason
		}
		if recon.ErrorCode(err) != c.code || reason != c.reason {
			t.Errorf("%s: %v (reason %q), want %q %q", c.name, err, reason, c.code, c.reason)
		}
	}
}

// TestUserTokenUsable: a link works once, before it expires.
func TestUserTokenUsable(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	used := t0.Add(time.Minute)
	for _, c := range []struct {
		name   string
		tok    recon.UserToken
		at     time.Time
		reason string
	}{
		{"fresh", recon.UserToken{ExpiresAt: t0.Add(time.Hour)}, t0, ""},
		{"last moment", recon.UserToken{ExpiresAt: t0.Add(time.Hour)}, t0.Add(time.Hour - time.Nanosecond), ""},
		{"at its end", recon.UserToken{ExpiresAt: t0.Add(time.Hour)}, t0.Add(time.Hour), "link_expired"},
		{"used", recon.UserToken{ExpiresAt: t0.Add(time.Hour), UsedAt: &used}, t0.Add(2 * time.Minute), "link_used"},
	} {
		err := c.tok.Usable(c.at)
		var reason string
		if e, ok := err.(*recon.Error); ok {
			reason = e.Reason
		}
		if reason != c.reason || (c.reason == "") != (err == nil) {
			t.Errorf("%s: %v, want reason %q", c.name, err, c.reason)
		}
	}
}

// TestCheckNewPassword and the e-mail languages.
func TestCheckNewPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"":                      false,
		"1234567":               false,
		"12345678":              true,
		"mật khẩu":              true, // 8 characters, more bytes
		"mậtkhẩu":               false,
		strings.Repeat("a", 72): true,
		strings.Repeat("a", 73): false,
		strings.Repeat("ậ", 24): true, // 72 bytes
		strings.Repeat("ậ", 25): false,
	} {
		if err := recon.CheckNewPassword(pw); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", pw, err, ok)
		}
	}
	for in, want := range map[string]string{"": "vi", "vi": "vi", "en": "en", "fr": "", "VI": ""} {
		got, err := recon.CheckUserLang(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("CheckUserLang(%q) = %q, %v", in, got, err)
		}
	}
}

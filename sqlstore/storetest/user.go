package storetest

import (
	"fmt"
	"sync"
	"testing"

	"recon"
)

func testUser(t *testing.T, open Open) {
	run(t, "CreateAndRead", open, testUserCreateAndRead)
	run(t, "SetUserRole", open, testUserSetUserRole)
	run(t, "ChangeUserRoleKeepsAnAdmin", open, testUserChangeUserRoleKeepsAnAdmin)
	run(t, "Users", open, testUserUsers)
	run(t, "EmailNormalized", open, testUserEmailNormalized)
	run(t, "DuplicateEmail", open, testUserDuplicateEmail)
	run(t, "SameEmailOtherCompany", open, testUserSameEmailOtherCompany)
	run(t, "TenantIsolation", open, testUserTenantIsolation)
	run(t, "UnknownCompany", open, testUserUnknownCompany)
	run(t, "NotFound", open, testUserNotFound)
	run(t, "BadPermission", open, testUserBadPermission)
}

func testUserCreateAndRead(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for _, perms := range [][]string{nil, {recon.PermViewTransactions}, {recon.PermViewTransactions, "future_permission"}} {
		want := &recon.User{
			Company: c.ID, Email: fmt.Sprintf("user%d@example.com", len(perms)), Role: recon.RoleAccountant,
			Permissions: perms, PasswordHash: "$2a$10$abcdefghijklmnopqrstuv",
		}
		if err := s.CreateUser(t.Context(), want); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if want.ID <= 0 {
			t.Fatalf("CreateUser set ID %d, want > 0", want.ID)
		}
		recent(t, "CreatedAt", want.CreatedAt)
		got, err := s.User(t.Context(), want.ID)
		if err != nil {
			t.Fatalf("User: %v", err)
		}
		wantUTC(t, "CreatedAt", got.CreatedAt)
		diff(t, "user", want, got)
		got, err = s.UserByEmail(t.Context(), c.ID, want.Email)
		if err != nil {
			t.Fatalf("UserByEmail: %v", err)
		}
		diff(t, "user by email", want, got)
	}
}

func testUserSetUserRole(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	u := &recon.User{Company: c.ID, Email: "a@example.com", Role: recon.RoleAdmin, Permissions: []string{recon.PermViewTransactions}}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserRole(t.Context(), c.ID, u.ID, recon.RoleMember, []string{recon.PermCreateTransactions}); err != nil {
		t.Fatal(err)
	}
	got, err := s.User(t.Context(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	u.Role, u.Permissions = recon.RoleMember, []string{recon.PermCreateTransactions}
	diff(t, "user after SetUserRole", u, got)
	// Another company cannot change it, nor can a missing user be changed.
	if err := s.SetUserRole(t.Context(), other.ID, u.ID, recon.RoleAdmin, nil); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("SetUserRole from another company: %v, want ENOTFOUND", err)
	}
	if err := s.SetUserRole(t.Context(), c.ID, u.ID+1000, recon.RoleAdmin, nil); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("SetUserRole of a missing user: %v, want ENOTFOUND", err)
	}
	if got, _ := s.User(t.Context(), u.ID); got.Role != recon.RoleMember {
		t.Fatalf("role changed by a refused call: %s", got.Role)
	}
}

// The company keeps an Admin: two Admins demoting each other at the
// same moment cannot both succeed.
func testUserChangeUserRoleKeepsAnAdmin(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	admin := func(email string) *recon.User {
		u := &recon.User{Company: c.ID, Email: email, Role: recon.RoleAdmin}
		if err := s.CreateUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	a, b := admin("a@example.com"), admin("b@example.com")
	for round := range 5 {
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, u := range []*recon.User{a, b} {
			wg.Go(func() { errs[i] = s.ChangeUserRole(t.Context(), c.ID, u.ID, recon.RoleAccountant, nil) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				wantCode(t, err, recon.ECONFLICT, "this is the company's last Admin: make another user Admin first, so that someone can still manage the company")
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d demotions succeeded (%v), want 1", round, ok, errs)
		}
		// Promote both back for the next round.
		for _, u := range []*recon.User{a, b} {
			if err := s.ChangeUserRole(t.Context(), c.ID, u.ID, recon.RoleAdmin, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A SuperAdmin counts; a promotion or a non-Admin's change is never refused.
	if err := s.ChangeUserRole(t.Context(), c.ID, a.ID, recon.RoleSuperAdmin, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ChangeUserRole(t.Context(), c.ID, b.ID, recon.RoleMember, nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.ChangeUserRole(t.Context(), c.ID, a.ID, recon.RoleMember, nil), recon.ECONFLICT, "")
	wantCode(t, s.ChangeUserRole(t.Context(), c.ID+1000, a.ID, recon.RoleAdmin, nil), recon.ENOTFOUND, "")
}

func testUserUsers(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	var made []*recon.User
	for i := range 3 {
		made = append(made, newUser(t, s, c.ID, fmt.Sprintf("u%d@example.com", i)))
	}
	newUser(t, s, other.ID, "elsewhere@example.com")
	all, total, err := s.Users(t.Context(), c.ID, 0, 10)
	if err != nil || total != 3 {
		t.Fatalf("Users: total %d, %v; want 3 (not another company's)", total, err)
	}
	diff(t, "users", made, all)
	page, total, err := s.Users(t.Context(), c.ID, 1, 1)
	if err != nil || total != 3 || len(page) != 1 || page[0].ID != made[1].ID {
		t.Fatalf("Users(offset 1, limit 1) = %v, %d, %v; want the second user", page, total, err)
	}
	if none, total, err := s.Users(t.Context(), c.ID+1000, 0, 10); err != nil || total != 0 || len(none) != 0 {
		t.Fatalf("Users of a missing company = %v, %d, %v", none, total, err)
	}
}

func testUserEmailNormalized(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := newUser(t, s, c.ID, " Anna.Nguyen@Example.COM ")
	if u.Email != "anna.nguyen@example.com" {
		t.Fatalf("CreateUser set Email %q, want it trimmed and in lower case", u.Email)
	}
	got, err := s.UserByEmail(t.Context(), c.ID, "ANNA.NGUYEN@example.com")
	if err != nil {
		t.Fatalf("UserByEmail: %v", err)
	}
	diff(t, "user", u, got)
}

func testUserDuplicateEmail(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	newUser(t, s, c.ID, "a@example.com")
	err := s.CreateUser(t.Context(), &recon.User{Company: c.ID, Email: "A@example.com", Role: recon.RoleAdmin})
	wantCode(t, err, recon.ECONFLICT, fmt.Sprintf("a user with this email already exists in company %d", c.ID))
}

func testUserSameEmailOtherCompany(t *testing.T, s recon.Store) {
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	ua := newUser(t, s, a.ID, "a@example.com")
	ub := newUser(t, s, b.ID, "a@example.com")
	if ua.ID == ub.ID {
		t.Fatalf("two users got ID %d", ua.ID)
	}
	for _, want := range []*recon.User{ua, ub} {
		got, err := s.UserByEmail(t.Context(), want.Company, "a@example.com")
		if err != nil {
			t.Fatalf("UserByEmail: %v", err)
		}
		diff(t, "user", want, got)
	}
}

func testUserTenantIsolation(t *testing.T, s recon.Store) {
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	newUser(t, s, a.ID, "a@example.com")
	_, err := s.UserByEmail(t.Context(), b.ID, "a@example.com")
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testUserUnknownCompany(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := &recon.User{Company: c.ID + 7, Email: "a@example.com", Role: recon.RoleMember}
	wantCode(t, s.CreateUser(t.Context(), u), recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+7))
	if u.ID != 0 {
		t.Fatalf("a failed CreateUser set ID %d", u.ID)
	}
}

func testUserNotFound(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := newUser(t, s, c.ID, "a@example.com")
	_, err := s.User(t.Context(), u.ID+100)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("user %d not found", u.ID+100))
	_, err = s.UserByEmail(t.Context(), c.ID, "b@example.com")
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testUserBadPermission(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := &recon.User{Company: c.ID, Email: "a@example.com", Role: recon.RoleMember, Permissions: []string{"a b"}}
	wantCode(t, s.CreateUser(t.Context(), u), recon.EINVALID, "")
}

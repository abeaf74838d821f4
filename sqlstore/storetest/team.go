package storetest

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"recon"
)

// testTeam checks the storage of a team (recon.TeamStore; docs/dashboard.md,
// Team): users by address across companies, one-time links (once, before
// they expire, replaced by a newer one, every active user of the address
// for a reset by e-mail), deactivation (keeps an active Admin, ends
// sessions, tenant isolation), and sessions that switch between the same
// person's companies.
func testTeam(t *testing.T, open Open) {
	run(t, "UsersByEmail", open, testTeamUsersByEmail)
	run(t, "Links", open, testTeamLinks)
	run(t, "LinkRedeemedOnce", open, testTeamLinkRedeemedOnce)
	run(t, "EmailReset", open, testTeamEmailReset)
	run(t, "Deactivate", open, testTeamDeactivate)
	run(t, "DeactivateKeepsAnAdmin", open, testTeamDeactivateKeepsAnAdmin)
	run(t, "SwitchSession", open, testTeamSwitchSession)
	run(t, "SetPassword", open, testTeamSetPassword)
}

var teamT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func teamHash(tok string) []byte { h := sha256.Sum256([]byte(tok)); return h[:] }

func teamUser(t *testing.T, s recon.Store, companyID int64, email string, role recon.Role) *recon.User {
	t.Helper()
	u := &recon.User{Company: companyID, Email: email, Role: role, PasswordHash: "old-hash"}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func teamSession(t *testing.T, s recon.Store, u *recon.User, tok string, others ...int64) *recon.DashboardSession {
	t.Helper()
	sess := &recon.DashboardSession{UserID: u.ID, Company: u.Company, Live: false, CreatedAt: teamT0, LastSeenAt: teamT0, ExpiresAt: teamT0.Add(12 * time.Hour)}
	if err := s.StartDashboardSession(t.Context(), sess, teamHash(tok), others); err != nil {
		t.Fatal(err)
	}
	return sess
}

func sessionAlive(t *testing.T, s recon.Store, tok string) bool {
	t.Helper()
	_, err := s.DashboardSession(t.Context(), teamHash(tok), teamT0.Add(time.Minute), time.Hour)
	if err != nil && recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatal(err)
	}
	return err == nil
}

func testTeamUsersByEmail(t *testing.T, s recon.Store) {
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	ua := teamUser(t, s, a.ID, "chung@x.vn", recon.RoleAdmin)
	ub := teamUser(t, s, b.ID, "chung@x.vn", recon.RoleMember)
	teamUser(t, s, b.ID, "khac@x.vn", recon.RoleMember)
	got, err := s.UsersByEmail(t.Context(), "  Chung@X.vn ")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "users by email", []*recon.User{ua, ub}, got)
	if got, err := s.UsersByEmail(t.Context(), "nobody@x.vn"); err != nil || len(got) != 0 {
		t.Fatalf("unknown address: %v %v", got, err)
	}
}

func testTeamLinks(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := teamUser(t, s, c.ID, "moi@x.vn", recon.RoleMember)
	teamSession(t, s, u, "session")
	link := func(tok string, expires time.Duration) *recon.UserToken {
		l := &recon.UserToken{Kind: recon.UserTokenInvite, Email: u.Email, UserID: u.ID, CreatedAt: teamT0, ExpiresAt: teamT0.Add(expires)}
		if err := s.CreateUserToken(t.Context(), l, teamHash(tok)); err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := link("first", time.Hour)
	got, err := s.UserToken(t.Context(), recon.UserTokenInvite, teamHash("first"))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "link", first, got)
	// Not a reset link; replaced by a newer invitation.
	wantCode(t, func() error { _, err := s.UserToken(t.Context(), recon.UserTokenReset, teamHash("first")); return err }(), recon.ENOTFOUND, "")
	link("second", time.Hour)
	_, err = s.RedeemUserToken(t.Context(), recon.UserTokenInvite, teamHash("first"), teamT0, "new-hash")
	wantCode(t, err, recon.ENOTFOUND, "")
	// Expired at its end.
	_, err = s.RedeemUserToken(t.Context(), recon.UserTokenInvite, teamHash("second"), teamT0.Add(time.Hour), "new-hash")
	wantCode(t, err, recon.EINVALID, "this link has expired")
	users, err := s.RedeemUserToken(t.Context(), recon.UserTokenInvite, teamHash("second"), teamT0.Add(time.Hour-time.Second), "new-hash")
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0].ID != u.ID || users[0].PasswordHash != "new-hash" {
		t.Fatalf("redeemed for %+v", users)
	}
	if got, _ := s.User(t.Context(), u.ID); got.PasswordHash != "new-hash" {
		t.Fatalf("password hash %q", got.PasswordHash)
	}
	if sessionAlive(t, s, "session") {
		t.Fatal("the user's session survived the new password")
	}
	_, err = s.RedeemUserToken(t.Context(), recon.UserTokenInvite, teamHash("second"), teamT0, "other-hash")
	wantCode(t, err, recon.EINVALID, "this link was already used")
	if got, _ := s.UserToken(t.Context(), recon.UserTokenInvite, teamHash("second")); got == nil || got.UsedAt == nil {
		t.Fatalf("the used link: %+v", got)
	}
}

// Redeemed at the same moment from several places, a link works once.
func testTeamLinkRedeemedOnce(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := teamUser(t, s, c.ID, "moi@x.vn", recon.RoleMember)
	l := &recon.UserToken{Kind: recon.UserTokenReset, Email: u.Email, UserID: u.ID, CreatedAt: teamT0, ExpiresAt: teamT0.Add(time.Hour)}
	if err := s.CreateUserToken(t.Context(), l, teamHash("once")); err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = s.RedeemUserToken(t.Context(), recon.UserTokenReset, teamHash("once"), teamT0, "hash")
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			wantCode(t, err, recon.EINVALID, "this link was already used")
		}
	}
	if ok != 1 {
		t.Fatalf("%d redemptions succeeded, want 1: %v", ok, errs)
	}
}

// A reset asked for by e-mail sets every active user of the address, in
// every company, and no deactivated one.
func testTeamEmailReset(t *testing.T, s recon.Store) {
	a, b, c := newCompany(t, s, 1), newCompany(t, s, 2), newCompany(t, s, 3)
	teamUser(t, s, a.ID, "admin@x.vn", recon.RoleAdmin)
	ua := teamUser(t, s, a.ID, "chung@x.vn", recon.RoleMember)
	ub := teamUser(t, s, b.ID, "chung@x.vn", recon.RoleMember)
	teamUser(t, s, c.ID, "admin@x.vn", recon.RoleAdmin)
	uc := teamUser(t, s, c.ID, "chung@x.vn", recon.RoleMember)
	if err := s.DeactivateUser(t.Context(), c.ID, uc.ID, teamT0); err != nil {
		t.Fatal(err)
	}
	l := &recon.UserToken{Kind: recon.UserTokenReset, Email: "Chung@x.vn", CreatedAt: teamT0, ExpiresAt: teamT0.Add(time.Hour)}
	if err := s.CreateUserToken(t.Context(), l, teamHash("reset")); err != nil {
		t.Fatal(err)
	}
	users, err := s.RedeemUserToken(t.Context(), recon.UserTokenReset, teamHash("reset"), teamT0, "new-hash")
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].ID != ua.ID || users[1].ID != ub.ID {
		t.Fatalf("reset %+v, want users %d and %d", users, ua.ID, ub.ID)
	}
	if got, _ := s.User(t.Context(), uc.ID); got.PasswordHash != "old-hash" {
		t.Fatal("the deactivated user's password was reset")
	}
}

func testTeamDeactivate(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	teamUser(t, s, c.ID, "admin@x.vn", recon.RoleAdmin)
	u := teamUser(t, s, c.ID, "tam@x.vn", recon.RoleAccountant)
	teamSession(t, s, u, "tam")
	l := &recon.UserToken{Kind: recon.UserTokenReset, Email: u.Email, UserID: u.ID, CreatedAt: teamT0, ExpiresAt: teamT0.Add(time.Hour)}
	if err := s.CreateUserToken(t.Context(), l, teamHash("link")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeactivateUser(t.Context(), other.ID, u.ID, teamT0), recon.ENOTFOUND, "")
	if !sessionAlive(t, s, "tam") {
		t.Fatal("another company's refused call ended the session")
	}
	if err := s.DeactivateUser(t.Context(), c.ID, u.ID, teamT0); err != nil {
		t.Fatal(err)
	}
	got, err := s.User(t.Context(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Active() || !got.DeactivatedAt.Equal(teamT0) {
		t.Fatalf("deactivated at %v", got.DeactivatedAt)
	}
	if sessionAlive(t, s, "tam") {
		t.Fatal("the deactivated user's session survived")
	}
	_, err = s.RedeemUserToken(t.Context(), recon.UserTokenReset, teamHash("link"), teamT0, "x")
	wantCode(t, err, recon.ENOTFOUND, "")
	wantCode(t, s.DeactivateUser(t.Context(), c.ID, u.ID, teamT0), recon.ECONFLICT, "the user is already deactivated")
	wantCode(t, s.ReactivateUser(t.Context(), other.ID, u.ID), recon.ENOTFOUND, "")
	if err := s.ReactivateUser(t.Context(), c.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(t.Context(), u.ID); !got.Active() {
		t.Fatal("still deactivated")
	}
}

// The company keeps an active Admin: two Admins deactivating each other at
// the same moment cannot both succeed, and a deactivated Admin does not
// count for a demotion.
func testTeamDeactivateKeepsAnAdmin(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	a := teamUser(t, s, c.ID, "a@x.vn", recon.RoleAdmin)
	b := teamUser(t, s, c.ID, "b@x.vn", recon.RoleSuperAdmin)
	wantCode(t, s.DeactivateUser(t.Context(), c.ID, a.ID+1000, teamT0), recon.ENOTFOUND, "")
	errs := make([]error, 2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, u := range []*recon.User{a, b} {
		wg.Go(func() { <-start; errs[i] = s.DeactivateUser(t.Context(), c.ID, u.ID, teamT0) })
	}
	close(start)
	wg.Wait()
	ok, survivor := 0, a
	for i, err := range errs {
		if err == nil {
			ok++
		} else {
			wantCode(t, err, recon.ECONFLICT, "this is the company's last Admin: make another user Admin first, so that someone can still manage the company")
			survivor = []*recon.User{a, b}[i]
		}
	}
	if ok != 1 {
		t.Fatalf("%d deactivations succeeded (%v), want 1", ok, errs)
	}
	wantCode(t, s.ChangeUserRole(t.Context(), c.ID, survivor.ID, recon.RoleMember, nil), recon.ECONFLICT, "")
}

func testTeamSwitchSession(t *testing.T, s recon.Store) {
	a, b, c := newCompany(t, s, 1), newCompany(t, s, 2), newCompany(t, s, 3)
	ua := teamUser(t, s, a.ID, "chung@x.vn", recon.RoleMember)
	teamUser(t, s, b.ID, "admin@x.vn", recon.RoleAdmin)
	ub := teamUser(t, s, b.ID, "chung@x.vn", recon.RoleMember)
	uc := teamUser(t, s, c.ID, "chung@x.vn", recon.RoleMember)
	stranger := teamUser(t, s, b.ID, "la@x.vn", recon.RoleMember)
	sess := teamSession(t, s, ua, "chung", ub.ID)
	users, err := s.DashboardSessionUsers(t.Context(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "session users", []*recon.User{ua, ub}, users)
	for _, id := range []int64{uc.ID, stranger.ID, ua.ID + 1000} {
		wantCode(t, s.SwitchDashboardSession(t.Context(), teamHash("chung"), id), recon.ENOTFOUND, "")
	}
	if err := s.SwitchDashboardSession(t.Context(), teamHash("chung"), ub.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.DashboardSession(t.Context(), teamHash("chung"), teamT0.Add(time.Minute), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != ub.ID || got.Company != b.ID || !got.Live || got.Users != 2 {
		t.Fatalf("after the switch: %+v", got)
	}
	// A deactivated user is no longer a choice; the session on it ends.
	if err := s.DeactivateUser(t.Context(), b.ID, ub.ID, teamT0); err != nil {
		t.Fatal(err)
	}
	if sessionAlive(t, s, "chung") {
		t.Fatal("the session on the deactivated user survived")
	}
	sess = teamSession(t, s, ua, "again")
	if users, _ := s.DashboardSessionUsers(t.Context(), sess.ID); len(users) != 1 || users[0].ID != ua.ID {
		t.Fatalf("session users %+v", users)
	}
	wantCode(t, s.SwitchDashboardSession(t.Context(), teamHash("again"), ub.ID), recon.ENOTFOUND, "")
	wantCode(t, s.StartDashboardSession(t.Context(), &recon.DashboardSession{UserID: ua.ID, Company: a.ID, Live: true, CreatedAt: teamT0,
		LastSeenAt: teamT0, ExpiresAt: teamT0.Add(time.Hour)}, teamHash("bad"), []int64{ua.ID + 1000}), recon.ENOTFOUND, "")
	if sessionAlive(t, s, "bad") {
		t.Fatal("a session with an unknown user was kept")
	}
}

func testTeamSetPassword(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	u := teamUser(t, s, c.ID, "doi@x.vn", recon.RoleMember)
	teamSession(t, s, u, "here")
	teamSession(t, s, u, "there")
	wantCode(t, s.SetUserPassword(t.Context(), other.ID, u.ID, "x", teamHash("here")), recon.ENOTFOUND, "")
	if err := s.SetUserPassword(t.Context(), c.ID, u.ID, "new-hash", teamHash("here")); err != nil {
		t.Fatal(err)
	}
	if !sessionAlive(t, s, "here") || sessionAlive(t, s, "there") {
		t.Fatal("want this session kept, the other ended")
	}
	if got, _ := s.User(t.Context(), u.ID); got.PasswordHash != "new-hash" {
		t.Fatalf("hash %q", got.PasswordHash)
	}
	wantCode(t, s.SetUserLang(t.Context(), c.ID, u.ID, "fr"), recon.EINVALID, "")
	wantCode(t, s.SetUserLang(t.Context(), other.ID, u.ID, "en"), recon.ENOTFOUND, "")
	if err := s.SetUserLang(t.Context(), c.ID, u.ID, "en"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(t.Context(), u.ID); got.Lang != "en" {
		t.Fatalf("lang %q", got.Lang)
	}
}

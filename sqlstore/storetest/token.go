package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
)

// tokenFixture is a company with a client and a user, ready for token sessions.
type tokenFixture struct {
	s       recon.Store
	company *recon.Company
	client  *recon.Client
	user    *recon.User
	// now is a fixed time with a nanosecond part and a non-UTC zone.
	now time.Time
}

func newTokenFixture(t *testing.T, open Open) *tokenFixture {
	t.Helper()
	s := open(t)
	c := newCompany(t, s, 1)
	ict := time.FixedZone("ICT", 7*60*60)
	return &tokenFixture{
		s: s, company: c,
		client: newClient(t, s, c.ID, "cl_1"),
		user:   newUser(t, s, c.ID, "a@example.com"),
		now:    time.Date(2025, 3, 14, 15, 9, 26, 535897932, ict),
	}
}

// session returns an active access-token session of the fixture's user.
func (f *tokenFixture) session(signature, requestID string) *recon.TokenSession {
	return &recon.TokenSession{
		Kind: recon.TokenAccess, Signature: signature, RequestID: requestID,
		ClientID: f.client.ID, Company: f.company.ID, UserID: f.user.ID,
		Scopes: []string{recon.ScopeCompany, recon.ScopeOfflineAccess}, GrantedScopes: []string{recon.ScopeCompany},
		Data:        []byte(`{"form":{"scope":["company"]}}`),
		RequestedAt: f.now, ExpiresAt: f.now.Add(time.Hour), Active: true,
	}
}

func (f *tokenFixture) create(t *testing.T, sessions ...*recon.TokenSession) {
	t.Helper()
	for _, s := range sessions {
		if err := f.s.CreateTokenSession(t.Context(), s); err != nil {
			t.Fatalf("CreateTokenSession(%s %s): %v", s.Kind, s.Signature, err)
		}
	}
}

// get returns the stored session, failing t if there is none.
func (f *tokenFixture) get(t *testing.T, kind recon.TokenKind, signature string) *recon.TokenSession {
	t.Helper()
	s, err := f.s.TokenSession(t.Context(), kind, signature)
	if err != nil {
		t.Fatalf("TokenSession(%s, %s): %v", kind, signature, err)
	}
	return s
}

// asStored is s as the store returns it: times in UTC, to the microsecond.
func asStored(s *recon.TokenSession) *recon.TokenSession {
	c := *s
	c.RequestedAt = s.RequestedAt.UTC().Truncate(time.Microsecond)
	c.ExpiresAt = s.ExpiresAt.UTC().Truncate(time.Microsecond)
	return &c
}

func testTokenSession(t *testing.T, open Open) {
	setup := func(t *testing.T) *tokenFixture { return newTokenFixture(t, open) }
	run(t, "CreateAndRead", setup, testTokenSessionCreateAndRead)
	run(t, "NoUserNoData", setup, testTokenSessionNoUserNoData)
	run(t, "SameSignatureOtherKind", setup, testTokenSessionSameSignatureOtherKind)
	run(t, "Duplicate", setup, testTokenSessionDuplicate)
	run(t, "UnknownReferences", setup, testTokenSessionUnknownReferences)
	run(t, "NotFound", setup, testTokenSessionNotFound)
	run(t, "DeactivateActive", setup, testTokenSessionDeactivateActive)
	run(t, "DeactivateActiveOnce", setup, testTokenSessionDeactivateActiveOnce)
	run(t, "DeactivateFamily", setup, testTokenSessionDeactivateFamily)
	run(t, "Delete", setup, testTokenSessionDelete)
	run(t, "DeleteExpired", setup, testTokenSessionDeleteExpired)
	run(t, "BadScopes", setup, testTokenSessionBadScopes)
}

func testTokenSessionCreateAndRead(t *testing.T, f *tokenFixture) {
	want := f.session("sig-1", "req-1")
	want.Data = []byte{0, 1, 2, 0xfe, 0xff, 0, '\'', '"', '\\'}
	f.create(t, want)
	got := f.get(t, recon.TokenAccess, "sig-1")
	wantUTC(t, "RequestedAt and ExpiresAt", got.RequestedAt, got.ExpiresAt)
	// Times come back as the same instants, to the microsecond.
	diff(t, "session", asStored(want), got)
}

func testTokenSessionNoUserNoData(t *testing.T, f *tokenFixture) {
	// A client-credentials token: no user (stored as NULL, so no user 0
	// need exist), no scopes, no data.
	want := f.session("sig-1", "req-1")
	want.UserID, want.Scopes, want.GrantedScopes, want.Data = 0, nil, nil, nil
	f.create(t, want)
	diff(t, "session", asStored(want), f.get(t, recon.TokenAccess, "sig-1"))
}

func testTokenSessionSameSignatureOtherKind(t *testing.T, f *tokenFixture) {
	access := f.session("sig-1", "req-1")
	refresh := f.session("sig-1", "req-1")
	refresh.Kind, refresh.Active = recon.TokenRefresh, false
	f.create(t, access, refresh)
	diff(t, "access", asStored(access), f.get(t, recon.TokenAccess, "sig-1"))
	diff(t, "refresh", asStored(refresh), f.get(t, recon.TokenRefresh, "sig-1"))
}

func testTokenSessionDuplicate(t *testing.T, f *tokenFixture) {
	f.create(t, f.session("sig-1", "req-1"))
	wantCode(t, f.s.CreateTokenSession(t.Context(), f.session("sig-1", "req-2")), recon.ECONFLICT, "")
}

func testTokenSessionUnknownReferences(t *testing.T, f *tokenFixture) {
	other := newCompany(t, f.s, 2)
	otherClient := newClient(t, f.s, other.ID, "cl_other")
	otherUser := newUser(t, f.s, other.ID, "b@example.com")
	for name, edit := range map[string]func(s *recon.TokenSession){
		"unknown client":           func(s *recon.TokenSession) { s.ClientID = "cl_nope" },
		"unknown user":             func(s *recon.TokenSession) { s.UserID = otherUser.ID + 100 },
		"unknown company":          func(s *recon.TokenSession) { s.Company = other.ID + 100 },
		"client of another tenant": func(s *recon.TokenSession) { s.ClientID = otherClient.ID },
		"user of another tenant":   func(s *recon.TokenSession) { s.UserID = otherUser.ID },
	} {
		s := f.session("sig-"+name, "req-1")
		edit(s)
		if err := f.s.CreateTokenSession(t.Context(), s); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Errorf("%s: got error %v, want code %s", name, err, recon.ENOTFOUND)
		}
	}
}

func testTokenSessionNotFound(t *testing.T, f *tokenFixture) {
	f.create(t, f.session("sig-1", "req-1"))
	_, err := f.s.TokenSession(t.Context(), recon.TokenAccess, "sig-2")
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = f.s.TokenSession(t.Context(), recon.TokenRefresh, "sig-1")
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testTokenSessionDeactivateActive(t *testing.T, f *tokenFixture) {
	a, b := f.session("sig-1", "req-1"), f.session("sig-2", "req-1")
	f.create(t, a, b)
	if ok, err := f.s.DeactivateActiveTokenSession(t.Context(), recon.TokenAccess, "sig-1"); !ok || err != nil {
		t.Fatalf("DeactivateActiveTokenSession = %v, %v; want true", ok, err)
	}
	a.Active = false
	diff(t, "deactivated session", asStored(a), f.get(t, recon.TokenAccess, "sig-1"))
	diff(t, "other session", asStored(b), f.get(t, recon.TokenAccess, "sig-2"))
	// Again: already inactive, so false; another kind: no such session, false.
	if ok, err := f.s.DeactivateActiveTokenSession(t.Context(), recon.TokenAccess, "sig-1"); ok || err != nil {
		t.Fatalf("again: %v, %v; want false", ok, err)
	}
	if ok, err := f.s.DeactivateActiveTokenSession(t.Context(), recon.TokenRefresh, "sig-1"); ok || err != nil {
		t.Fatalf("other kind: %v, %v; want false", ok, err)
	}
}

func testTokenSessionDeactivateActiveOnce(t *testing.T, f *tokenFixture) {
	f.create(t, f.session("sig-1", "req-1"))
	var wg sync.WaitGroup
	var won atomic.Int32
	for range 8 {
		wg.Go(func() {
			ok, err := f.s.DeactivateActiveTokenSession(t.Context(), recon.TokenAccess, "sig-1")
			if err != nil {
				t.Errorf("DeactivateActiveTokenSession: %v", err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d of 8 concurrent callers deactivated the session, want exactly 1", won.Load())
	}
	if ok, err := f.s.DeactivateActiveTokenSession(t.Context(), recon.TokenAccess, "missing"); ok || err != nil {
		t.Fatalf("missing session: %v %v", ok, err)
	}
}

func testTokenSessionDeactivateFamily(t *testing.T, f *tokenFixture) {
	family := []*recon.TokenSession{f.session("a1", "req-1"), f.session("a2", "req-1")}
	others := []*recon.TokenSession{f.session("a3", "req-2"), f.session("r1", "req-1")}
	others[1].Kind = recon.TokenRefresh
	f.create(t, append(family, others...)...)
	if err := f.s.DeactivateTokenFamily(t.Context(), recon.TokenAccess, "req-1"); err != nil {
		t.Fatalf("DeactivateTokenFamily: %v", err)
	}
	for _, s := range family {
		s.Active = false
		diff(t, "session of the family", asStored(s), f.get(t, s.Kind, s.Signature))
	}
	for _, s := range others {
		diff(t, "session outside the family", asStored(s), f.get(t, s.Kind, s.Signature))
	}
	if err := f.s.DeactivateTokenFamily(t.Context(), recon.TokenAccess, "req-none"); err != nil {
		t.Fatalf("DeactivateTokenFamily of an empty family: %v", err)
	}
}

func testTokenSessionDelete(t *testing.T, f *tokenFixture) {
	a, b := f.session("sig-1", "req-1"), f.session("sig-2", "req-1")
	f.create(t, a, b)
	for range 2 { // the second time, there is nothing to delete
		if err := f.s.DeleteTokenSession(t.Context(), recon.TokenAccess, "sig-1"); err != nil {
			t.Fatalf("DeleteTokenSession: %v", err)
		}
	}
	_, err := f.s.TokenSession(t.Context(), recon.TokenAccess, "sig-1")
	wantCode(t, err, recon.ENOTFOUND, "")
	diff(t, "other session", asStored(b), f.get(t, recon.TokenAccess, "sig-2"))
}

func testTokenSessionDeleteExpired(t *testing.T, f *tokenFixture) {
	cut := f.now
	expiries := map[string]time.Duration{
		"long-ago": -30 * 24 * time.Hour, "just-before": -time.Microsecond,
		"at-cut": 0, "just-after": time.Microsecond, "later": time.Hour,
	}
	for sig, d := range expiries {
		s := f.session(sig, "req-"+sig)
		s.ExpiresAt = cut.Add(d)
		f.create(t, s)
	}
	n, err := f.s.DeleteExpiredTokenSessions(t.Context(), cut.In(time.UTC))
	if err != nil {
		t.Fatalf("DeleteExpiredTokenSessions: %v", err)
	}
	if n != 2 {
		t.Fatalf("DeleteExpiredTokenSessions removed %d sessions, want 2", n)
	}
	for sig, d := range expiries {
		_, err := f.s.TokenSession(t.Context(), recon.TokenAccess, sig)
		if gone := recon.ErrorCode(err) == recon.ENOTFOUND; gone != (d < 0) {
			t.Errorf("session expiring at cut%+v: got error %v, want removed=%v", d, err, d < 0)
		}
	}
	n, err = f.s.DeleteExpiredTokenSessions(t.Context(), cut)
	if err != nil || n != 0 {
		t.Fatalf("DeleteExpiredTokenSessions again = %d, %v; want 0, nil", n, err)
	}
}

func testTokenSessionBadScopes(t *testing.T, f *tokenFixture) {
	s := f.session("sig-1", "req-1")
	s.GrantedScopes = []string{"company offline_access"}
	wantCode(t, f.s.CreateTokenSession(t.Context(), s), recon.EINVALID, "")
}

// testAuthEpoch: every change that may refuse an accepted token, or change
// what a push extracts by, moves the counter; issuing a token does not
// (callers and extractors are kept while it stays put).
func testAuthEpoch(t *testing.T, f *tokenFixture) {
	ctx := t.Context()
	epoch := func() int64 {
		t.Helper()
		n, err := f.s.AuthEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	last := epoch()
	f.create(t, f.session("sig-1", "req-1"), f.session("sig-2", "req-2"))
	if n := epoch(); n != last {
		t.Fatalf("issuing tokens moved the epoch from %d to %d", last, n)
	}
	changes := []struct {
		name   string
		change func() error
	}{
		{"a token revoked", func() error { return f.s.DeactivateTokenFamily(ctx, recon.TokenAccess, "req-1") }},
		{"a token deleted", func() error { return f.s.DeleteTokenSession(ctx, recon.TokenAccess, "sig-2") }},
		{"a role changed", func() error {
			return f.s.SetUserRole(ctx, f.company.ID, f.user.ID, recon.RoleMember, nil)
		}},
		{"a company's formats replaced", func() error {
			_, err := f.s.ReplacePaymentCodeFormats(ctx, f.company.ID, []recon.PaymentCodeFormat{
				{Prefix: "HD", SuffixFrom: 3, SuffixTo: 6, CharacterType: recon.NumberOnly, IsActive: true}})
			return err
		}},
		{"a company deactivated", func() error {
			_, err := f.s.UpdateCompany(ctx, f.company.ID, func(c *recon.Company) error { c.Status = recon.CompanyInactive; return nil })
			return err
		}},
	}
	for _, c := range changes {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := epoch()
		if n <= last {
			t.Errorf("%s: the epoch stayed at %d (was %d)", c.name, n, last)
		}
		// The company is read with the epoch of its snapshot.
		if _, at, err := f.s.CompanyAtEpoch(ctx, f.company.ID); err != nil || at != n {
			t.Errorf("%s: CompanyAtEpoch read epoch %d (%v), want %d", c.name, at, err, n)
		}
		last = n
	}
}

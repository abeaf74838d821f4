package recon_test

import (
	"testing"
	"time"

	"recon"
)

// TestNextLinkSession walks every path of the session machine as a table:
// the steps in, the events out in order, the end state.
func TestNextLinkSession(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ch := &recon.LinkChallenge{HolderName: "NGUYEN VAN AN", Ref: "r", OTPLength: 8}
	pick := recon.LinkStep{Kind: recon.StepPickBank, BankCode: "MB", BrandName: "MBBank", AccountType: recon.AccountIndividual}
	details := recon.LinkStep{Kind: recon.StepDetails, BrandName: "MBBank", AccountNumber: "0123456789", Challenge: ch}
	otp := func(ok bool) recon.LinkStep {
		return recon.LinkStep{Kind: recon.StepLinkOTP, BrandName: "MBBank", OTPOK: ok, AccountXID: "acc-xid"}
	}
	const (
		created   = recon.EventLinkSessionInitialized
		reopened  = recon.EventLinkSessionReinitialized
		changed   = recon.EventLinkSessionStateChanged
		completed = recon.EventLinkSessionCompleted
		failed    = recon.EventLinkSessionFailed
		abandoned = recon.EventLinkSessionAbandoned
		linked    = recon.EventBankAccountLinked
	)
	unlinkReq := recon.LinkStep{Kind: recon.StepRequestUnlink, BankCode: "MB", BrandName: "MBBank", AccountType: recon.AccountIndividual, AccountNumber: "0123456789", Challenge: ch}
	for _, tc := range []struct {
		name    string
		purpose string
		steps   []recon.LinkStep
		events  []string
		states  []string // the STATE_CHANGED states, in order
		status  string
		account string
	}{
		{"link", recon.LinkPurposeLink, []recon.LinkStep{{Kind: recon.StepOpen}, pick, details, otp(true)},
			[]string{created, changed, changed, changed, linked, completed},
			[]string{recon.LinkStateRequestLink, recon.LinkStateConfirmLink, recon.LinkStateFinishedLink}, recon.LinkSessionCompleted, recon.AccountLinked},
		{"wrong OTP then right", recon.LinkPurposeLink, []recon.LinkStep{{Kind: recon.StepOpen}, pick, details, otp(false), otp(true)},
			[]string{created, changed, changed, changed, linked, completed}, nil, recon.LinkSessionCompleted, recon.AccountLinked},
		{"three wrong OTPs", recon.LinkPurposeLink, []recon.LinkStep{{Kind: recon.StepOpen}, pick, details, otp(false), otp(false), otp(false)},
			[]string{created, changed, changed, failed}, nil, recon.LinkSessionFailed, ""},
		{"bank unavailable", recon.LinkPurposeLink, []recon.LinkStep{{Kind: recon.StepOpen}, pick,
			{Kind: recon.StepDetails, BrandName: "MBBank", AccountNumber: "0000000503", BankErr: recon.EUNAVAILABLE}},
			[]string{created, changed, failed}, nil, recon.LinkSessionFailed, ""},
		{"reopen then close", recon.LinkPurposeLink, []recon.LinkStep{{Kind: recon.StepOpen}, pick, {Kind: recon.StepOpen}, {Kind: recon.StepClose}},
			[]string{created, changed, reopened, abandoned}, nil, recon.LinkSessionAbandoned, ""},
		{"unlink at the bank", recon.LinkPurposeUnlink, []recon.LinkStep{{Kind: recon.StepOpen}, unlinkReq,
			{Kind: recon.StepUnlinkOTP, OTPOK: true}, {Kind: recon.StepUnlinkChoice, Choice: recon.UnlinkAtBank, BrandName: "MBBank"}},
			[]string{created, changed, recon.EventBankAccountUnlinked, completed}, []string{recon.LinkStateRequestUnlink}, recon.LinkSessionCompleted, recon.AccountUnlinked},
		{"stop receiving here", recon.LinkPurposeUnlink, []recon.LinkStep{{Kind: recon.StepOpen}, unlinkReq,
			{Kind: recon.StepUnlinkOTP, OTPOK: true}, {Kind: recon.StepUnlinkChoice, Choice: recon.UnlinkHereOnly}},
			[]string{created, changed, recon.EventBankAccountInactivated, completed}, nil, recon.LinkSessionCompleted, recon.AccountInactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := &recon.LinkToken{ID: 1, Tenant: recon.LiveTenant(7), XID: "tok-xid", Purpose: tc.purpose, Status: recon.LinkTokenActive, BankAccountID: 3, BankAccountXID: "acc-xid"}
			var s *recon.LinkSession
			var events, states []string
			var last *recon.LinkOutcome
			for i, st := range tc.steps {
				if s != nil {
					st.SessionXID = s.XID
				}
				out, err := recon.NextLinkSession(tok, s, st, now.Add(time.Duration(i)*time.Minute))
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, st.Kind, err)
				}
				for _, e := range out.Events {
					events = append(events, e.Name)
					if e.Name == changed {
						states = append(states, e.Meta.State)
					}
					if e.Meta.LinkTokenXID != "tok-xid" || e.Meta.LinkSessionXID == nil || *e.Meta.LinkSessionXID != out.Session.XID {
						t.Fatalf("%s: ids %+v", e.Name, e.Meta)
					}
					if (e.Name == failed || e.Name == abandoned) && e.Meta.Reason == "" {
						t.Fatalf("%s without a reason", e.Name)
					}
				}
				s, last = out.Session, out
				if s.Status != recon.LinkSessionOpen {
					s = nil // ended: the token has no open session
				}
			}
			if d := diffStrings(tc.events, events); d != "" {
				t.Fatalf("events: %s", d)
			}
			if tc.states != nil {
				if d := diffStrings(tc.states, states); d != "" {
					t.Fatalf("states: %s", d)
				}
			}
			if last.Session.Status != tc.status || last.Account != tc.account {
				t.Fatalf("end: %s account %q", last.Session.Status, last.Account)
			}
			if tc.status == recon.LinkSessionCompleted {
				m := last.Events[len(last.Events)-1].Meta
				if m.BankAccountXID != "acc-xid" || (tc.purpose == recon.LinkPurposeUnlink) != (m.Unlinked != nil) {
					t.Fatalf("completed metadata: %+v", m)
				}
			}
		})
	}

	// Out of order, for another session, or on an ended token: refused.
	tok := &recon.LinkToken{ID: 1, XID: "t", Purpose: recon.LinkPurposeLink, Status: recon.LinkTokenActive}
	open, _ := recon.NextLinkSession(tok, nil, recon.LinkStep{Kind: recon.StepOpen}, now)
	s := open.Session
	for _, st := range []recon.LinkStep{
		{Kind: recon.StepLinkOTP, SessionXID: s.XID, OTPOK: true},
		{Kind: recon.StepDetails, SessionXID: s.XID, Challenge: ch},
		{Kind: recon.StepUnlinkChoice, SessionXID: s.XID, Choice: recon.UnlinkAtBank},
		{Kind: recon.StepPickBank, SessionXID: "another", AccountType: recon.AccountIndividual},
		{Kind: recon.StepPickBank, SessionXID: s.XID, AccountType: "savings"},
		{Kind: "jump", SessionXID: s.XID},
	} {
		if _, err := recon.NextLinkSession(tok, s, st, now); err == nil {
			t.Errorf("%+v accepted", st)
		}
	}
	tok.Status = recon.LinkTokenRevoked
	if _, err := recon.NextLinkSession(tok, s, recon.LinkStep{Kind: recon.StepOpen}, now); recon.ErrorCode(err) != recon.EFORBIDDEN {
		t.Errorf("revoked token opened: %v", err)
	}
}

func diffStrings(want, got []string) string {
	if len(want) != len(got) {
		return "want " + join(want) + "\n got " + join(got)
	}
	for i := range want {
		if want[i] != got[i] {
			return "want " + join(want) + "\n got " + join(got)
		}
	}
	return ""
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// TestNextLinkSessionTakesTheStoresXID: the session a StepOpen opens gets
// the xid the store chose, so the machine decides nothing at random.
func TestNextLinkSessionTakesTheStoresXID(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	tok := &recon.LinkToken{ID: 1, Tenant: recon.LiveTenant(7), XID: "tok-xid", Purpose: recon.LinkPurposeLink, Status: recon.LinkTokenActive}
	out, err := recon.NextLinkSession(tok, nil, recon.LinkStep{Kind: recon.StepOpen, NewSessionXID: "sess-xid"}, now)
	if err != nil || !out.NewSession || out.Session.XID != "sess-xid" || *out.Events[0].Meta.LinkSessionXID != "sess-xid" {
		t.Fatalf("open: %+v, %v", out, err)
	}
	again, err := recon.NextLinkSession(tok, out.Session, recon.LinkStep{Kind: recon.StepOpen, NewSessionXID: "other"}, now.Add(time.Minute))
	if err != nil || again.NewSession || again.Session.XID != "sess-xid" {
		t.Fatalf("reopen: %+v, %v", again, err)
	}
}

// TestLinkTokenExpiredAt: an active token expires at its ExpiresAt, not a
// moment before; a token already ended does not expire again.
func TestLinkTokenExpiredAt(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		status string
		now    time.Time
		want   bool
	}{
		{recon.LinkTokenActive, at.Add(-time.Nanosecond), false},
		{recon.LinkTokenActive, at, true},
		{recon.LinkTokenActive, at.Add(time.Hour), true},
		{recon.LinkTokenExpired, at.Add(time.Hour), false},
		{recon.LinkTokenUsed, at.Add(time.Hour), false},
	} {
		tok := &recon.LinkToken{Status: c.status, ExpiresAt: at}
		if got := tok.ExpiredAt(c.now); got != c.want {
			t.Errorf("%s token at %s: ExpiredAt = %v, want %v", c.status, c.now.Sub(at), got, c.want)
		}
	}
}

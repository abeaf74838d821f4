package recon

import (
	"context"
	"time"
)

// The link session as a pure state machine (docs/design.md, D11: state
// machines are domain rules): NextLinkSession takes the token, its open session and
// one step of the page, with what the bank answered, and returns the
// session's new state, the events to enqueue in order and the change to the
// linked account. The store locks, reads, calls it, writes the result and
// enqueues the events in one transaction; the page only renders.

// Link step kinds: what the user did on the page.
const (
	StepOpen          = "open"           // the page was opened (or reloaded)
	StepPickBank      = "pick_bank"      // bank and account type chosen
	StepDetails       = "details"        // account number, national ID, phone sent to the bank
	StepLinkOTP       = "link_otp"       // the link's OTP entered
	StepRequestUnlink = "request_unlink" // the account to unlink confirmed
	StepUnlinkOTP     = "unlink_otp"     // the unlink's OTP entered
	StepUnlinkChoice  = "unlink_choice"  // unlink at the bank, or stop receiving here only
	StepClose         = "close"          // the user closed the page
)

// Unlink choices.
const (
	UnlinkAtBank   = "bank"
	UnlinkHereOnly = "here"
)

// LinkStep is one step of the page. BankCode, AccountType and
// AccountNumber come from the form; Challenge, BankErr and OTPOK are what
// the bank connector answered (the handler asked it before the step).
type LinkStep struct {
	Kind string
	// SessionXID is the session the form was rendered for ("" on open): a
	// step for a session that is no longer the token's open one is refused.
	SessionXID    string
	BankCode      string
	BrandName     string
	AccountType   string
	AccountNumber string
	Challenge     *LinkChallenge
	// BankErr is the connector's error code (EUNAVAILABLE fails the session).
	BankErr string
	OTPOK   bool
	Choice  string
	// AccountXID is the xid the linked account gets (or has: a re-link),
	// chosen by the store before a StepLinkOTP.
	AccountXID string
	// NewSessionXID is the xid of the session a StepOpen opens when the
	// token has none, chosen by the store (NewXIDFrom its randomness); a
	// random one (NewXID) when empty.
	NewSessionXID string
}

// HubEventSpec is an event a step produces.
type HubEventSpec struct {
	Name string
	Meta HubEventMeta
}

// LinkOutcome is what a step does.
type LinkOutcome struct {
	// Session is the session after the step (new when NewSession).
	Session    *LinkSession
	NewSession bool
	Events     []HubEventSpec
	// Account is the linked account's new link state ("" for no change):
	// AccountLinked on a completed link, AccountUnlinked or AccountInactive
	// on a completed unlink.
	Account string
	// TokenUsed: the token is used up (a session completed).
	TokenUsed bool
}

// ErrSessionMoved is the answer to a step for a session that is no longer
// the token's open one (it ended, or another tab started a new one).
func ErrSessionMoved() error {
	return Errorf(ECONFLICT, "this link session has ended or moved on; reload the page")
}

// NextLinkSession applies step to the token's open session s (nil when
// none) at now. The token must be ACTIVE. Wrong input for the state is
// EINVALID or ErrSessionMoved; a wrong OTP is not an error but an outcome.
func NextLinkSession(t *LinkToken, s *LinkSession, st LinkStep, now time.Time) (*LinkOutcome, error) {
	if t.Status != LinkTokenActive {
		return nil, Errorf(EFORBIDDEN, "this link is %s", t.Status)
	}
	out := &LinkOutcome{}
	if st.Kind == StepOpen {
		if s == nil {
			xid := st.NewSessionXID
			if xid == "" {
				xid = NewXID()
			}
			s = &LinkSession{Tenant: t.Tenant, LinkTokenID: t.ID, XID: xid, Status: LinkSessionOpen,
				State: LinkStateInitialized, CreatedAt: now, LastStepAt: now}
			if t.Purpose == LinkPurposeUnlink {
				s.BankAccountID, s.BankAccountXID = t.BankAccountID, t.BankAccountXID
			}
			out.NewSession = true
			out.Session = s
			out.event(EventLinkSessionInitialized, t, s)
			return out, nil
		}
		n := *s
		n.LastStepAt = now
		out.Session = &n
		out.event(EventLinkSessionReinitialized, t, &n)
		return out, nil
	}
	if s == nil || s.XID != st.SessionXID {
		return nil, ErrSessionMoved()
	}
	n := *s
	n.LastStepAt = now
	out.Session = &n
	fail := func(reason string) {
		n.Status, n.Reason, n.EndedAt = LinkSessionFailed, reason, now
		out.event(EventLinkSessionFailed, t, &n)
	}
	wrongState := func() (*LinkOutcome, error) {
		return nil, Errorf(EINVALID, "this step does not follow %s", s.State)
	}
	// A wrong OTP (link or unlink) costs one of MaxOTPAttempts tries.
	wrongOTP := func() (*LinkOutcome, error) {
		n.OTPAttempts++
		if n.OTPAttempts >= MaxOTPAttempts {
			fail("three wrong OTPs")
		}
		return out, nil
	}
	link := t.Purpose == LinkPurposeLink
	switch st.Kind {
	case StepClose:
		n.Status, n.Reason, n.EndedAt = LinkSessionAbandoned, "closed by the user", now
		out.event(EventLinkSessionAbandoned, t, &n)
	case StepPickBank:
		if !link || (s.State != LinkStateInitialized && s.State != LinkStateRequestLink) {
			return wrongState()
		}
		if st.AccountType != AccountIndividual && st.AccountType != AccountEnterprise {
			return nil, FieldError("account_type", "account_type must be %s or %s", AccountIndividual, AccountEnterprise)
		}
		n.State, n.BankCode, n.AccountType = LinkStateRequestLink, st.BankCode, st.AccountType
		out.stateChanged(t, &n, st.BrandName)
	case StepDetails:
		if !link || s.State != LinkStateRequestLink {
			return wrongState()
		}
		switch {
		case st.BankErr == EUNAVAILABLE:
			fail("the bank is unavailable")
		case st.BankErr != "":
			return nil, Errorf(st.BankErr, "the bank refused the details") // the page says why; the session stays
		case st.Challenge == nil:
			return nil, Errorf(EINTERNAL, "no answer from the bank")
		default:
			n.State, n.AccountNumber, n.HolderName = LinkStateConfirmLink, st.AccountNumber, st.Challenge.HolderName
			n.RequestRef, n.OTPAttempts = st.Challenge.Ref, 0
			out.stateChanged(t, &n, st.BrandName)
		}
	case StepLinkOTP:
		if !link || s.State != LinkStateConfirmLink {
			return wrongState()
		}
		if !st.OTPOK {
			return wrongOTP()
		}
		n.State, n.Status, n.EndedAt, n.BankAccountXID = LinkStateFinishedLink, LinkSessionCompleted, now, st.AccountXID
		out.stateChanged(t, &n, st.BrandName)
		out.event(EventBankAccountLinked, t, &n, st.BrandName)
		out.event(EventLinkSessionCompleted, t, &n)
		out.Account, out.TokenUsed = AccountLinked, true
	case StepRequestUnlink:
		if link || s.State != LinkStateInitialized {
			return wrongState()
		}
		switch {
		case st.BankErr == EUNAVAILABLE:
			fail("the bank is unavailable")
		case st.BankErr != "":
			return nil, Errorf(st.BankErr, "the bank refused the request")
		case st.Challenge == nil:
			return nil, Errorf(EINTERNAL, "no answer from the bank")
		default:
			n.State, n.RequestRef, n.OTPAttempts = LinkStateConfirmUnlink, st.Challenge.Ref, 0
			n.HolderName, n.BankCode, n.AccountType, n.AccountNumber = st.Challenge.HolderName, st.BankCode, st.AccountType, st.AccountNumber
			out.Events = append(out.Events, HubEventSpec{EventLinkSessionStateChanged, out.meta(t, &n, st.BrandName, LinkStateRequestUnlink)})
		}
	case StepUnlinkOTP:
		if link || s.State != LinkStateConfirmUnlink {
			return wrongState()
		}
		if !st.OTPOK {
			return wrongOTP()
		}
		n.State = LinkStateChooseUnlink
	case StepUnlinkChoice:
		if link || s.State != LinkStateChooseUnlink {
			return wrongState()
		}
		unlinked := true
		switch st.Choice {
		case UnlinkAtBank:
			out.Account = AccountUnlinked
			out.event(EventBankAccountUnlinked, t, &n, st.BrandName)
		case UnlinkHereOnly:
			out.Account, unlinked = AccountInactive, false
			out.event(EventBankAccountInactivated, t, &n, st.BrandName)
		default:
			return nil, FieldError("choice", "choice must be %s or %s", UnlinkAtBank, UnlinkHereOnly)
		}
		n.State, n.Status, n.EndedAt = LinkStateFinishedUnlink, LinkSessionCompleted, now
		m := out.meta(t, &n, "", "")
		m.Unlinked = &unlinked
		out.Events = append(out.Events, HubEventSpec{EventLinkSessionCompleted, m})
		out.TokenUsed = true
	default:
		return nil, Errorf(EINVALID, "unknown step %q", st.Kind)
	}
	return out, nil
}

// meta is the metadata of an event about session s: the ids always; the
// bank, type, account and holder when known; state when given.
func (o *LinkOutcome) meta(t *LinkToken, s *LinkSession, brand, state string) HubEventMeta {
	xid := s.XID
	m := HubEventMeta{LinkTokenXID: t.XID, LinkSessionXID: &xid, Purpose: t.Purpose, State: state, BrandName: brand,
		AccountType: s.AccountType, AccountNumber: s.AccountNumber, AccountHolderName: s.HolderName,
		BankAccountXID: s.BankAccountXID}
	if s.Status != LinkSessionOpen && s.Status != LinkSessionCompleted {
		m.Reason = s.Reason
	}
	return m
}

func (o *LinkOutcome) stateChanged(t *LinkToken, s *LinkSession, brand string) {
	o.Events = append(o.Events, HubEventSpec{EventLinkSessionStateChanged, o.meta(t, s, brand, s.State)})
}

// event adds a lifecycle event (no state key; the brand when given).
func (o *LinkOutcome) event(name string, t *LinkToken, s *LinkSession, brand ...string) {
	b := ""
	if len(brand) > 0 {
		b = brand[0]
	}
	o.Events = append(o.Events, HubEventSpec{name, o.meta(t, s, b, "")})
}

// LinkPageStore is what the hosted page needs from storage: the token its
// URL names (by hash, whatever its tenant: the token is the credential) and
// one step at a time under the token's lock.
type LinkPageStore interface {
	// LinkTokenByHash returns the token with the hash and its open session
	// (nil when none), or ENOTFOUND.
	LinkTokenByHash(ctx context.Context, hash string) (*LinkToken, *LinkSession, error)
	// StepLinkSession applies NextLinkSession to the token's open session
	// under the token's lock, writes the session, the token and the linked
	// account, and enqueues the events, in one transaction. For a
	// StepLinkOTP with OTPOK it picks the account's xid (a re-link keeps
	// it) and refuses (ECONFLICT) an account the tenant has linked already.
	StepLinkSession(ctx context.Context, hash string, st LinkStep) (*LinkToken, *LinkSession, error)
	// LinkedAccount returns the tenant's bank account with the id (for the
	// unlink page), or ENOTFOUND.
	LinkedAccount(ctx context.Context, tenant TenantID, id int64) (*LinkedAccount, error)
}

// LinkedAccount is a bank account as the hub shows it.
type LinkedAccount struct {
	BankAccount
	XID         string
	CustomerID  int64
	CustomerXID string
	LinkState   string
	AccountType string
	BankCode    string
	Balance     int64
	LinkedAt    time.Time
	// LastTransaction is the date of its newest transaction (zero: none).
	LastTransaction time.Time
}

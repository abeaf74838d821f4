package linking

import (
	"context"
	"strings"

	"recon"
)

// The steps of a link session (docs/hub.md): what the hosted page (hub) and
// the simulation of hub events post, turned into the recon.LinkStep the
// store records.

// StepForm is a step as the hosted page's forms post it, without the
// session and CSRF fields the page checks itself.
type StepForm struct {
	Action                           string
	Bank, AccountType                string // pick a bank
	AccountNumber, NationalID, Phone string // the account's details
	OTP                              string // an OTP of the link or the unlink
	Choice                           string // how to unlink
}

// Refusals ReadStep returns for what the user can correct: the page shows
// them in the token's language (the keys of its dictionary).
const (
	RefusedPickABank       = "pick_a_bank"
	RefusedDetailsUnknown  = "details_unknown"
	RefusedLinkedElsewhere = "linked_elsewhere"
)

// ReadStep turns the form posted to session s of token t into its step,
// asking the bank (conn) what the step needs. A refusal the user can
// correct comes back as refusal (one of the Refused keys), with the session
// left where it is.
func (s *Service) ReadStep(ctx context.Context, t *recon.LinkToken, sess *recon.LinkSession, conn recon.BankConnector, f StepForm) (st recon.LinkStep, refusal string, err error) {
	st = recon.LinkStep{Kind: f.Action, SessionXID: sess.XID}
	brand := func(code string) (recon.Bank, bool) {
		for _, b := range conn.Banks() {
			if b.Code == code {
				return b, true
			}
		}
		return recon.Bank{}, false
	}
	b, _ := brand(sess.BankCode)
	st.BrandName = b.BrandName
	bankAnswer := func(ch *recon.LinkChallenge, err error) (string, error) {
		switch code := recon.ErrorCode(err); code {
		case "":
			st.Challenge = ch
		case recon.EUNAVAILABLE:
			st.BankErr = code
		case recon.EINVALID:
			return RefusedDetailsUnknown, nil
		case recon.ECONFLICT:
			return RefusedLinkedElsewhere, nil
		default:
			return "", err
		}
		return "", nil
	}
	switch st.Kind {
	case "back", recon.StepClose:
	case recon.StepPickBank:
		nb, ok := brand(f.Bank)
		if !ok {
			return st, RefusedPickABank, nil
		}
		st.BankCode, st.BrandName, st.AccountType = nb.Code, nb.BrandName, f.AccountType
	case recon.StepDetails:
		st.AccountNumber = strings.TrimSpace(f.AccountNumber)
		if len(st.AccountNumber) == 0 || len(st.AccountNumber) > 34 {
			return st, RefusedDetailsUnknown, nil
		}
		msg, err := bankAnswer(conn.RequestLink(ctx, recon.LinkRequest{BankCode: sess.BankCode, AccountType: sess.AccountType,
			AccountNumber: st.AccountNumber, NationalID: f.NationalID, Phone: f.Phone}))
		return st, msg, err
	case recon.StepLinkOTP:
		st.OTPOK = conn.ConfirmLink(ctx, sess.RequestRef, strings.TrimSpace(f.OTP)) == nil
	case recon.StepRequestUnlink:
		a, err := s.Store.LinkedAccount(ctx, t.Tenant, t.BankAccountID)
		if err != nil {
			return st, "", err
		}
		nb, _ := brand(a.BankCode)
		st.BankCode, st.BrandName, st.AccountType, st.AccountNumber = a.BankCode, nb.BrandName, a.AccountType, a.AccountNumber
		msg, err := bankAnswer(conn.RequestUnlink(ctx, a.BankCode, a.AccountNumber))
		return st, msg, err
	case recon.StepUnlinkOTP:
		st.OTPOK = conn.ConfirmUnlink(ctx, sess.RequestRef, strings.TrimSpace(f.OTP)) == nil
	case recon.StepUnlinkChoice:
		st.Choice = f.Choice
	default:
		return st, "", recon.Errorf(recon.EINVALID, "unknown action %q", st.Kind)
	}
	return st, "", nil
}

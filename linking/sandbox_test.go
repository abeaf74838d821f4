package linking_test

import (
	"context"
	"testing"

	"recon"
	"recon/linking"
)

func TestSandboxBanks(t *testing.T) {
	ctx := context.Background()
	var s recon.BankConnector = linking.Sandbox{}
	banks := s.Banks()
	if len(banks) < 5 {
		t.Fatalf("%d sandbox banks, want at least 5", len(banks))
	}
	eight := 0
	for _, b := range banks {
		switch b.OTPLength {
		case 8:
			eight++
		case 6:
		default:
			t.Errorf("%s: OTP length %d", b.Code, b.OTPLength)
		}
	}
	if eight != 1 {
		t.Errorf("%d banks with 8-digit OTPs, want 1", eight)
	}
	// Every working identity links with its own OTP, of its bank's length,
	// and not with another.
	for _, id := range linking.SandboxIdentities() {
		req := recon.LinkRequest{BankCode: id.BankCode, AccountType: id.AccountType, AccountNumber: id.AccountNumber, NationalID: id.NationalID, Phone: id.Phone}
		ch, err := s.RequestLink(ctx, req)
		switch id.Fail {
		case linking.FailBankDown:
			if recon.ErrorCode(err) != recon.EUNAVAILABLE {
				t.Errorf("%s %s: %v, want unavailable", id.BankCode, id.AccountNumber, err)
			}
			continue
		case linking.FailLinkedElsewhere:
			if recon.ErrorCode(err) != recon.ECONFLICT {
				t.Errorf("%s %s: %v, want conflict", id.BankCode, id.AccountNumber, err)
			}
			continue
		}
		if err != nil || ch.HolderName != id.HolderName {
			t.Fatalf("%s %s: %+v %v", id.BankCode, id.AccountNumber, ch, err)
		}
		if id.Fail == linking.FailWrongOTP {
			for _, otp := range []string{"", "123456", "12345678"} {
				if err := s.ConfirmLink(ctx, ch.Ref, otp); recon.ErrorCode(err) != recon.EINVALID {
					t.Errorf("%s wrong-OTP identity accepted %q", id.BankCode, otp)
				}
			}
			continue
		}
		if len(id.OTP) != ch.OTPLength {
			t.Errorf("%s %s: OTP %q, length %d", id.BankCode, id.AccountNumber, id.OTP, ch.OTPLength)
		}
		if err := s.ConfirmLink(ctx, ch.Ref, id.OTP); err != nil {
			t.Errorf("%s %s: right OTP refused: %v", id.BankCode, id.AccountNumber, err)
		}
		if err := s.ConfirmLink(ctx, ch.Ref, "999999"); recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("%s %s: wrong OTP accepted", id.BankCode, id.AccountNumber)
		}
		if err := s.ConfirmUnlink(ctx, ch.Ref, id.OTP); err == nil {
			t.Errorf("a link reference confirmed an unlink")
		}
		un, err := s.RequestUnlink(ctx, id.BankCode, id.AccountNumber)
		if err != nil || s.ConfirmUnlink(ctx, un.Ref, id.OTP) != nil {
			t.Errorf("%s %s: unlink: %v", id.BankCode, id.AccountNumber, err)
		}
		// Any detail off: refused, naming no identity.
		bad := req
		bad.Phone = "0999999999"
		if _, err := s.RequestLink(ctx, bad); recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("%s %s with a wrong phone: %v", id.BankCode, id.AccountNumber, err)
		}
		bad = req
		bad.AccountType = "other"
		if _, err := s.RequestLink(ctx, bad); recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("%s %s with a wrong type: %v", id.BankCode, id.AccountNumber, err)
		}
	}
	if _, err := s.RequestLink(ctx, recon.LinkRequest{BankCode: "XYZ"}); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown bank: %v", err)
	}
	if err := s.ConfirmLink(ctx, "link:MB:nope", "12345678"); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("forged reference: %v", err)
	}
}

package linking

import (
	"context"
	"crypto/subtle"
	"strings"

	"recon"
)

// SandboxIdentity is one fixed test identity of a sandbox bank: the
// details that link, the holder name the bank returns and the OTP that
// works. Fail names what the identity does on purpose instead ("" for none).
type SandboxIdentity struct {
	BankCode      string `json:"bank"`
	AccountType   string `json:"account_type"`
	HolderName    string `json:"account_holder_name"`
	AccountNumber string `json:"account_number"`
	NationalID    string `json:"national_id"`
	Phone         string `json:"phone"`
	OTP           string `json:"otp"`
	Fail          string `json:"fails_with,omitempty"`
}

// Failures sandbox identities produce on purpose.
const (
	FailWrongOTP        = "WRONG_OTP"        // no OTP is ever right: three tries fail the session
	FailBankDown        = "BANK_UNAVAILABLE" // the bank does not answer
	FailLinkedElsewhere = "ALREADY_LINKED"   // the account is linked elsewhere
)

// sandboxBanks are the sandbox banks: MBBank's OTPs have 8 digits (as the
// real bank's), the others' 6.
var sandboxBanks = []recon.Bank{
	{Code: "MB", BrandName: "MBBank", FullName: "Ngân hàng TMCP Quân đội", OTPLength: 8},
	{Code: "VCB", BrandName: "Vietcombank", FullName: "Ngân hàng TMCP Ngoại thương Việt Nam", OTPLength: 6},
	{Code: "CTG", BrandName: "VietinBank", FullName: "Ngân hàng TMCP Công thương Việt Nam", OTPLength: 6},
	{Code: "BIDV", BrandName: "BIDV", FullName: "Ngân hàng TMCP Đầu tư và Phát triển Việt Nam", OTPLength: 6},
	{Code: "TCB", BrandName: "Techcombank", FullName: "Ngân hàng TMCP Kỹ thương Việt Nam", OTPLength: 6},
	{Code: "ACB", BrandName: "ACB", FullName: "Ngân hàng TMCP Á Châu", OTPLength: 6},
}

// SandboxIdentities lists every fixed sandbox identity (docs/hub.md and
// `recon hub sandbox-banks` print this list).
func SandboxIdentities() []SandboxIdentity {
	out := []SandboxIdentity{
		{"MB", recon.AccountIndividual, "NGUYEN VAN AN", "0123456789", "001099012345", "0901234567", "12345678", ""},
		{"MB", recon.AccountEnterprise, "CONG TY TNHH SAO MAI", "0987654321", "0101234567", "0281234567", "87654321", ""},
		{"VCB", recon.AccountIndividual, "TRAN THI BINH", "1012345678", "001199023456", "0912345678", "123456", ""},
		{"VCB", recon.AccountEnterprise, "CONG TY CP HOA SEN", "1098765432", "0301234567", "0283456789", "654321", ""},
		{"CTG", recon.AccountIndividual, "LE VAN CUONG", "1080012345", "001088034567", "0923456789", "123456", ""},
		{"CTG", recon.AccountEnterprise, "CONG TY TNHH BINH MINH", "1080098765", "0401234567", "0243456789", "654321", ""},
		{"BIDV", recon.AccountIndividual, "PHAM THI DUNG", "2150012345", "001177045678", "0934567890", "123456", ""},
		{"BIDV", recon.AccountEnterprise, "CONG TY CP AN PHAT", "2150098765", "0501234567", "0236345678", "654321", ""},
		{"TCB", recon.AccountIndividual, "HOANG VAN EM", "1903012345", "001066056789", "0945678901", "123456", ""},
		{"TCB", recon.AccountEnterprise, "CONG TY TNHH KIM LONG", "1903098765", "0601234567", "0225345678", "654321", ""},
		{"ACB", recon.AccountIndividual, "VO THI GIANG", "2001234567", "001155067890", "0956789012", "123456", ""},
		{"ACB", recon.AccountEnterprise, "CONG TY CP THANH DAT", "2009876543", "0701234567", "0274345678", "654321", ""},
		// Identities that fail on purpose (every bank, individual accounts).
		{"MB", recon.AccountIndividual, "NGUYEN VAN SAI", "0000000003", "001099000003", "0900000003", "", FailWrongOTP},
		{"VCB", recon.AccountIndividual, "TRAN VAN SAI", "0000000003", "001099000003", "0900000003", "", FailWrongOTP},
		{"MB", recon.AccountIndividual, "NGUYEN VAN NGHI", "0000000503", "001099000503", "0900000503", "12345678", FailBankDown},
		{"VCB", recon.AccountIndividual, "TRAN VAN NGHI", "0000000503", "001099000503", "0900000503", "123456", FailBankDown},
		{"MB", recon.AccountIndividual, "NGUYEN VAN TRUNG", "0000000409", "001099000409", "0900000409", "12345678", FailLinkedElsewhere},
		{"VCB", recon.AccountIndividual, "TRAN VAN TRUNG", "0000000409", "001099000409", "0900000409", "123456", FailLinkedElsewhere},
	}
	return out
}

// Sandbox is the sandbox banks' recon.BankConnector: fixed identities, no
// network. It keeps no state: the OTP reference names the identity.
type Sandbox struct{}

var _ recon.BankConnector = Sandbox{}

// Banks implements recon.BankConnector.
func (Sandbox) Banks() []recon.Bank { return append([]recon.Bank(nil), sandboxBanks...) }

// SandboxBank is the sandbox bank of the code.
func SandboxBank(code string) (recon.Bank, bool) {
	for _, b := range sandboxBanks {
		if b.Code == code {
			return b, true
		}
	}
	return recon.Bank{}, false
}

func findIdentity(bank, account string) (SandboxIdentity, bool) {
	for _, id := range SandboxIdentities() {
		if id.BankCode == bank && id.AccountNumber == account {
			return id, true
		}
	}
	return SandboxIdentity{}, false
}

// RequestLink implements recon.BankConnector: the details must be one
// identity's, all of them (account type, number, national ID and phone).
func (Sandbox) RequestLink(_ context.Context, req recon.LinkRequest) (*recon.LinkChallenge, error) {
	b, ok := SandboxBank(req.BankCode)
	if !ok {
		return nil, recon.FieldError("bank", "bank %q is not offered", req.BankCode)
	}
	id, ok := findIdentity(req.BankCode, strings.TrimSpace(req.AccountNumber))
	if !ok || id.AccountType != req.AccountType || id.NationalID != strings.TrimSpace(req.NationalID) || id.Phone != strings.TrimSpace(req.Phone) {
		return nil, recon.Errorf(recon.EINVALID, "%s does not know this account with this national ID and phone number", b.BrandName)
	}
	switch id.Fail {
	case FailBankDown:
		return nil, recon.Errorf(recon.EUNAVAILABLE, "%s is not answering at the moment", b.BrandName)
	case FailLinkedElsewhere:
		return nil, recon.Errorf(recon.ECONFLICT, "this account is already linked to another service at %s", b.BrandName)
	}
	return &recon.LinkChallenge{HolderName: id.HolderName, Ref: "link:" + id.BankCode + ":" + id.AccountNumber, OTPLength: b.OTPLength}, nil
}

func confirm(ref, prefix, otp string) error {
	bank, account, ok := strings.Cut(strings.TrimPrefix(ref, prefix), ":")
	id, found := findIdentity(bank, account)
	if !strings.HasPrefix(ref, prefix) || !ok || !found {
		return recon.Errorf(recon.EINVALID, "the bank does not know this request")
	}
	if id.Fail == FailWrongOTP || subtle.ConstantTimeCompare([]byte(otp), []byte(id.OTP)) != 1 {
		return recon.Errorf(recon.EINVALID, "the OTP is wrong")
	}
	return nil
}

// ConfirmLink implements recon.BankConnector.
func (Sandbox) ConfirmLink(_ context.Context, ref, otp string) error {
	return confirm(ref, "link:", otp)
}

// RequestUnlink implements recon.BankConnector: any sandbox account linked
// through the page may be unlinked; its identity's OTP confirms.
func (Sandbox) RequestUnlink(_ context.Context, bankCode, accountNumber string) (*recon.LinkChallenge, error) {
	b, ok := SandboxBank(bankCode)
	id, found := findIdentity(bankCode, accountNumber)
	if !ok || !found {
		return nil, recon.Errorf(recon.EINVALID, "the bank does not know this account")
	}
	if id.Fail == FailBankDown {
		return nil, recon.Errorf(recon.EUNAVAILABLE, "%s is not answering at the moment", b.BrandName)
	}
	return &recon.LinkChallenge{HolderName: id.HolderName, Ref: "unlink:" + id.BankCode + ":" + id.AccountNumber, OTPLength: b.OTPLength}, nil
}

// ConfirmUnlink implements recon.BankConnector.
func (Sandbox) ConfirmUnlink(_ context.Context, ref, otp string) error {
	return confirm(ref, "unlink:", otp)
}

package recon

import "context"

// Bank is a bank the hosted link page offers.
type Bank struct {
	// Code is the bank's short code (MB, VCB, ...), the page's value.
	Code string
	// BrandName is the name the hub shows and sends (brand_name).
	BrandName string
	FullName  string
	// OTPLength is how many digits the bank's OTPs have.
	OTPLength int
}

// LinkRequest is what the user enters on the hosted page to link an account.
type LinkRequest struct {
	BankCode      string
	AccountType   string // AccountIndividual or AccountEnterprise
	AccountNumber string
	NationalID    string
	Phone         string
}

// LinkChallenge is the bank's answer to a link or unlink request: the
// holder's name it knows, and the reference of the OTP it sent.
type LinkChallenge struct {
	HolderName string
	Ref        string
	OTPLength  int
}

// BankConnector is the one interface to the banks (real or sandbox): the
// hosted page asks it to start a link or unlink, which sends the user an
// OTP, and to confirm it with the OTP. Errors: EINVALID for details the
// bank does not know or a wrong OTP, ECONFLICT for an account already
// linked elsewhere, EUNAVAILABLE when the bank does not answer. A real
// connector would be another implementation, with nothing else changing.
type BankConnector interface {
	// Banks lists the banks the connector reaches.
	Banks() []Bank
	// RequestLink checks the details with the bank and sends an OTP.
	RequestLink(ctx context.Context, req LinkRequest) (*LinkChallenge, error)
	// ConfirmLink confirms a link request with the OTP the user entered.
	ConfirmLink(ctx context.Context, ref, otp string) error
	// RequestUnlink asks the bank to unlink the account and sends an OTP.
	RequestUnlink(ctx context.Context, bankCode, accountNumber string) (*LinkChallenge, error)
	// ConfirmUnlink confirms an unlink request with the OTP.
	ConfirmUnlink(ctx context.Context, ref, otp string) error
}

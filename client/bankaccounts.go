package client

import (
	"context"
	"io"
	"net/url"
	"strconv"
)

// BankAccount is one of the company's bank accounts.
type BankAccount struct {
	ID            int64    `json:"id"`
	BankBrandName string   `json:"bank_brand_name"`
	AccountNumber string   `json:"account_number"`
	HolderName    string   `json:"account_holder_name"`
	SubAccounts   []string `json:"sub_accounts"`
	CreatedAt     string   `json:"created_at"`
}

// BankAccounts lists the company's bank accounts: GET /api/v1/bank-accounts
// (scope bank-account:read).
func (c *Client) BankAccounts(ctx context.Context) ([]BankAccount, error) {
	var out envelope[[]BankAccount]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/bank-accounts", auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// BalanceDiscontinuity is a balance a feed reported that does not follow
// from the previous balance and the amounts: a sign of missed transactions.
type BalanceDiscontinuity struct {
	ID              int64  `json:"id"`
	BankAccountID   int64  `json:"bank_account_id"`
	TransactionID   int64  `json:"transaction_id"`
	ExpectedBalance int64  `json:"expected_balance"`
	ReportedBalance int64  `json:"reported_balance"`
	Gap             int64  `json:"gap"`
	DetectedAt      string `json:"detected_at"`
}

// BalanceDiscontinuities lists them: GET /api/v1/balance-discontinuities
// (scope bank-account:read).
func (c *Client) BalanceDiscontinuities(ctx context.Context) ([]BalanceDiscontinuity, error) {
	var out envelope[[]BalanceDiscontinuity]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/balance-discontinuities", auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Statement file formats.
const (
	FormatAuto    = "auto"
	FormatCSV     = "csv"
	FormatCAMT053 = "camt053"
	FormatMT940   = "mt940"
)

// StatementOptions are the options of a statement upload.
type StatementOptions struct {
	Format      string // FormatAuto (default), FormatCSV, FormatCAMT053, FormatMT940
	SkipInvalid bool   // skip bad rows (listed in the answer) instead of refusing the file
}

// StatementImport is the outcome of a statement upload.
type StatementImport struct {
	Format       string `json:"format"`
	Imported     int64  `json:"imported"`
	Duplicates   int64  `json:"duplicates"`
	SkippedCount int64  `json:"skipped_count"`
	Skipped      []struct {
		Row     int    `json:"row"`
		Message string `json:"message"`
	} `json:"skipped"` // the first 1,000
}

// UploadStatement imports a statement file (CSV, camt.053, MT940; at most
// 64 MiB) into a bank account: POST /api/v1/bank-accounts/{id}/statements
// (scope transaction:write). All rows or none are stored. The server serves
// a few uploads at once and answers 503 with Retry-After to the others:
// when file is an io.Seeker (an *os.File, a *bytes.Reader) the upload is
// retried then, and after 5xx, as rows are deduplicated on their reference
// numbers; otherwise it is sent once.
func (c *Client) UploadStatement(ctx context.Context, bankAccountID int64, file io.Reader, o StatementOptions) (*StatementImport, error) {
	q := url.Values{}
	if o.Format != "" {
		q.Set("format", o.Format)
	}
	if o.SkipInvalid {
		q.Set("skip_invalid", "true")
	}
	var out envelope[StatementImport]
	_, err := c.do(ctx, &request{method: "POST", path: "/api/v1/bank-accounts/" + strconv.FormatInt(bankAccountID, 10) + "/statements",
		query: q, auth: authBearer, raw: file, contentType: "application/octet-stream", idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

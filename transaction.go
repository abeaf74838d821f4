package recon

import (
	"time"
)

// BankAccount is a company's account at a bank. Transactions arrive per account.
type BankAccount struct {
	ID            int64
	CompanyID     int64
	BankName      string // brand name: Vietcombank, MBBank, ...
	AccountNumber string
	HolderName    string
	// SubAccounts are virtual account numbers that route to this account.
	SubAccounts []string
	CreatedAt   time.Time
}

// TransactionInput is one bank transaction as it arrives, from a bank feed,
// a statement file or a sandbox transfer, before it is stored.
type TransactionInput struct {
	BankAccountID int64
	// TransactionDate is the wall-clock time in the business time zone.
	TransactionDate time.Time
	// Amounts are whole VND (VND has no minor unit); one of them is zero.
	AmountIn  int64
	AmountOut int64
	// Accumulated is the balance after the transaction as the bank reports
	// it, or nil when the source does not say.
	Accumulated     *int64
	Content         string
	ReferenceNumber string
	SubAccount      string
}

// Transaction is a stored bank transaction (spec §2.4).
type Transaction struct {
	ID              int64
	CompanyID       int64
	BankAccountID   int64
	BankName        string
	AccountNumber   string
	TransactionDate time.Time
	AmountIn        int64
	AmountOut       int64
	Accumulated     int64
	Content         string
	ReferenceNumber string
	// Code is the payment code extracted from Content, "" when none.
	Code       string
	SubAccount string
	CreatedAt  time.Time
}

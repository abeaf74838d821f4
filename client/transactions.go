package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Transaction is a bank transaction (spec §2.4; docs/api.md, Transactions).
// Amounts are whole VND.
type Transaction struct {
	ID            int64  `json:"id"`
	BankAccountID int64  `json:"bank_account_id"`
	BankBrandName string `json:"bank_brand_name"`
	AccountNumber string `json:"account_number"`
	// TransactionDate is wall-clock time in the server's business time
	// zone (default Asia/Ho_Chi_Minh), YYYY-MM-DD HH:MM:SS.
	TransactionDate string `json:"transaction_date"`
	AmountOut       int64  `json:"amount_out"`
	AmountIn        int64  `json:"amount_in"`
	Accumulated     int64  `json:"accumulated"`
	Content         string `json:"transaction_content"`
	ReferenceNumber string `json:"reference_number"`
	// Code is the payment code extracted from the memo; nil when none.
	Code       *string `json:"code"`
	SubAccount *string `json:"sub_account"`
	// MatchDecisions is filled by GetTransaction only.
	MatchDecisions []TransactionDecision `json:"match_decisions,omitempty"`
}

// TransactionDecision is what matching decided about a transaction.
type TransactionDecision struct {
	OrderID     *int64 `json:"order_id"` // nil for unmatched
	Outcome     string `json:"outcome"`  // matched, underpaid, overpaid, duplicate, unmatched; API v2's partial, va_inactive
	Rule        string `json:"rule"`
	Code        string `json:"code"`
	Amount      int64  `json:"amount"`
	OrderAmount int64  `json:"order_amount"`
	PaidTotal   int64  `json:"paid_total"`
	Reason      string `json:"reason"`
	At          string `json:"at"`
}

// TransactionFilter selects transactions (spec §4.3; docs/api.md,
// Transactions). Zero fields filter nothing. Dates are YYYY-MM-DD, inclusive
// whole days.
type TransactionFilter struct {
	BankAccountID   int64
	AccountNumber   string
	ReferenceNumber string
	FromDate        string
	ToDate          string
	AmountIn        *int64
	AmountOut       *int64
	// Limit is the page size, 1 to 100 (0: the server's default, 20).
	Limit int
}

func (f TransactionFilter) query(page int) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.BankAccountID != 0 {
		set("bank_account_id", strconv.FormatInt(f.BankAccountID, 10))
	}
	set("account_number", f.AccountNumber)
	set("reference_number", f.ReferenceNumber)
	set("from_date", f.FromDate)
	set("to_date", f.ToDate)
	if f.AmountIn != nil {
		set("amount_in", strconv.FormatInt(*f.AmountIn, 10))
	}
	if f.AmountOut != nil {
		set("amount_out", strconv.FormatInt(*f.AmountOut, 10))
	}
	if f.Limit != 0 {
		set("limit", strconv.Itoa(f.Limit))
	}
	if page > 1 {
		set("page", strconv.Itoa(page))
	}
	return q
}

// Pagination is the transaction list's meta.pagination (spec §2.5; docs/api.md,
// Transactions).
type Pagination struct {
	Total       int64 `json:"total"`
	PerPage     int   `json:"per_page"`
	CurrentPage int   `json:"current_page"`
	LastPage    int   `json:"last_page"`
}

// TransactionPage is one page of the transaction list.
type TransactionPage struct {
	Transactions []Transaction
	Pagination   Pagination
}

// ListTransactions returns one page (1-based) of the company's
// transactions, newest first: GET /api/v1/transactions. It needs a user
// token with scope transaction:read whose user may view transactions.
func (c *Client) ListTransactions(ctx context.Context, f TransactionFilter, page int) (*TransactionPage, error) {
	var out struct {
		Data []Transaction `json:"data"`
		Meta struct {
			Pagination Pagination `json:"pagination"`
		} `json:"meta"`
	}
	_, err := c.do(ctx, &request{method: "GET", path: "/api/v1/transactions", query: f.query(page), auth: authBearer, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &TransactionPage{out.Data, out.Meta.Pagination}, nil
}

// Transactions iterates over every transaction the filter selects, newest
// first, fetching page after page:
//
//	for tx, err := range c.Transactions(ctx, client.TransactionFilter{FromDate: "2025-01-01"}) {
//		if err != nil { return err }
//		...
//	}
//
// An error ends the iteration. Pages are numbered, so a transaction stored
// while iterating can shift the pages: one already yielded on the previous
// page is not yielded twice, but one stored meanwhile may be missed.
func (c *Client) Transactions(ctx context.Context, f TransactionFilter) iter.Seq2[Transaction, error] {
	return func(yield func(Transaction, error) bool) {
		var prev map[int64]bool
		for page := 1; ; page++ {
			p, err := c.ListTransactions(ctx, f, page)
			if err != nil {
				yield(Transaction{}, err)
				return
			}
			seen := make(map[int64]bool, len(p.Transactions))
			for _, t := range p.Transactions {
				seen[t.ID] = true
				if prev[t.ID] {
					continue
				}
				if !yield(t, nil) {
					return
				}
			}
			if len(p.Transactions) == 0 || page >= p.Pagination.LastPage {
				return
			}
			prev = seen
		}
	}
}

// GetTransaction returns one transaction with the match decisions made
// about it: GET /api/v1/transactions/{id}.
func (c *Client) GetTransaction(ctx context.Context, id int64) (*Transaction, error) {
	var out envelope[Transaction]
	_, err := c.do(ctx, &request{method: "GET", path: "/api/v1/transactions/" + strconv.FormatInt(id, 10), auth: authBearer, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// TransactionInput is one transaction pushed by a bank feed. Exactly one
// of AmountIn and AmountOut is positive.
type TransactionInput struct {
	BankAccountID   int64
	TransactionDate time.Time // sent as RFC 3339; the server keeps the instant; from 2000 to a day after now
	AmountIn        int64
	AmountOut       int64
	Content         string // the transfer memo
	ReferenceNumber string // the bank's reference: unique per bank account
	SubAccount      string
	// Accumulated is the balance after the transaction as the bank reports
	// it; nil lets the server compute it.
	Accumulated *int64
}

// MarshalJSON writes the item as POST /api/v1/transactions reads it.
func (t TransactionInput) MarshalJSON() ([]byte, error) {
	type item struct {
		BankAccountID   int64  `json:"bank_account_id"`
		TransactionDate string `json:"transaction_date"`
		AmountIn        int64  `json:"amount_in"`
		AmountOut       int64  `json:"amount_out"`
		Content         string `json:"transaction_content"`
		ReferenceNumber string `json:"reference_number"`
		SubAccount      string `json:"sub_account,omitempty"`
		Accumulated     *int64 `json:"accumulated,omitempty"`
	}
	date := "" // the server names a missing date
	if !t.TransactionDate.IsZero() {
		date = t.TransactionDate.Format(time.RFC3339)
	}
	return json.Marshal(item{t.BankAccountID, date, t.AmountIn, t.AmountOut,
		t.Content, t.ReferenceNumber, t.SubAccount, t.Accumulated})
}

// PushResult is the outcome of one pushed transaction, in request order.
type PushResult struct {
	ID   int64   `json:"id"`
	Code *string `json:"code"`
	// Duplicate: the bank account already had this reference number; the
	// stored transaction's ID and code are reported and nothing changed.
	Duplicate bool `json:"duplicate"`
}

// PushTransactions stores 1 to 1000 transactions: POST /api/v1/transactions
// (scope transaction:write; a client credentials token will do). One bad
// item refuses the whole batch (an *Error naming it). The server is
// idempotent on (bank account, reference number), so the push is retried
// on 5xx and network failures like a GET.
func (c *Client) PushTransactions(ctx context.Context, txs []TransactionInput) ([]PushResult, error) {
	var out envelope[[]PushResult]
	_, err := c.do(ctx, &request{method: "POST", path: "/api/v1/transactions", auth: authBearer,
		json: map[string]any{"transactions": txs}, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}

// SandboxTransfer is a simulated incoming transfer (sandbox servers only).
type SandboxTransfer struct {
	BankAccountID   int64  `json:"bank_account_id"`
	Amount          int64  `json:"amount"`
	Content         string `json:"transaction_content"`
	ReferenceNumber string `json:"reference_number,omitempty"` // empty: the server makes one
	SubAccount      string `json:"sub_account,omitempty"`
}

// SandboxTransferResult is the stored transfer.
type SandboxTransferResult struct {
	PushResult
	ReferenceNumber string `json:"reference_number"`
}

// SimulateTransfer plays a payer on a sandbox server: POST
// /api/v1/sandbox/transfers (404 on a production server). Retried like a
// push only when ReferenceNumber is set (else each attempt is a new transfer).
func (c *Client) SimulateTransfer(ctx context.Context, t SandboxTransfer) (*SandboxTransferResult, error) {
	var out envelope[SandboxTransferResult]
	_, err := c.do(ctx, &request{method: "POST", path: "/api/v1/sandbox/transfers", auth: authBearer, json: t,
		idempotent: t.ReferenceNumber != ""}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// ReconciliationReport is the company's incoming transactions by match
// outcome over a date range.
type ReconciliationReport struct {
	FromDate string `json:"from_date"`
	ToDate   string `json:"to_date"`
	// Summary maps each outcome (matched, underpaid, overpaid, duplicate,
	// unmatched) to its count and amount.
	Summary map[string]struct {
		Count  int64 `json:"count"`
		Amount int64 `json:"amount"`
	} `json:"summary"`
	Unmatched []Transaction `json:"unmatched"`
	Underpaid []struct {
		TransactionID int64  `json:"transaction_id"`
		OrderID       int64  `json:"order_id"`
		Amount        int64  `json:"amount"`
		OrderAmount   int64  `json:"order_amount"`
		PaidTotal     int64  `json:"paid_total"`
		Reason        string `json:"reason"`
	} `json:"underpaid"`
}

// Reconciliation returns the reconciliation report: GET
// /api/v1/reconciliation. Empty dates take the server's defaults (the 30
// days to today).
func (c *Client) Reconciliation(ctx context.Context, fromDate, toDate string) (*ReconciliationReport, error) {
	q := url.Values{}
	if fromDate != "" {
		q.Set("from_date", fromDate)
	}
	if toDate != "" {
		q.Set("to_date", toDate)
	}
	var out envelope[ReconciliationReport]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/reconciliation", query: q, auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

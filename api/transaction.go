package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/web"
)

type transactionJSON struct {
	ID              int64   `json:"id"`
	BankAccountID   int64   `json:"bank_account_id"`
	BankBrandName   string  `json:"bank_brand_name"`
	AccountNumber   string  `json:"account_number"`
	TransactionDate string  `json:"transaction_date"`
	AmountOut       int64   `json:"amount_out"`
	AmountIn        int64   `json:"amount_in"`
	Accumulated     int64   `json:"accumulated"`
	Content         string  `json:"transaction_content"`
	ReferenceNumber string  `json:"reference_number"`
	Code            *string `json:"code"`
	SubAccount      *string `json:"sub_account"`
	Livemode        bool    `json:"livemode"`
	// DupState and DuplicateOf are shown only for a row stored as a
	// possible duplicate (docs/statements.md, Possible duplicates): an
	// ordinary row's answer is unchanged.
	DupState    string `json:"dup_state,omitempty"`
	DuplicateOf int64  `json:"duplicate_of,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toTransactionJSON(t *recon.Transaction, livemode bool) transactionJSON {
	return transactionJSON{
		ID: t.ID, BankAccountID: t.BankAccountID, BankBrandName: t.BankName, AccountNumber: t.AccountNumber,
		TransactionDate: t.TransactionDate.Format(recon.DateTimeLayout),
		AmountOut:       t.AmountOut, AmountIn: t.AmountIn, Accumulated: t.Accumulated,
		Content: t.Content, ReferenceNumber: t.ReferenceNumber,
		Code: nullable(t.Code), SubAccount: nullable(t.SubAccount), Livemode: livemode,
		DupState: t.DupState, DuplicateOf: t.DupOf,
	}
}

func (h *Handler) listTransactions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	f, err := recon.ParseTransactionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	ctx := recon.Listing(r.Context())
	if h.pages == nil { // none kept: the page alone, without the version
		list, total, err := h.Store.Transactions(ctx, c.Tenant, f)
		if err != nil {
			return err
		}
		web.WriteEncoded(w, http.StatusOK, encodeTransactions(list, total, f, c.Livemode()))
		return nil
	}
	key := pageKey{c.Tenant, filterKey(f)}
	known, body := h.pages.get(key)
	// The version read with the authentication, on the primary and after
	// every write committed before this request, spares the store's read.
	if v, ok := c.TenantVersion(); ok && v == known {
		web.WriteEncoded(w, http.StatusOK, body)
		return nil
	}
	list, total, version, err := h.Store.TransactionsIfChanged(ctx, c.Tenant, f, known)
	if err != nil {
		return err
	}
	if version != known {
		body = encodeTransactions(list, total, f, c.Livemode())
		h.pages.put(key, version, body)
	}
	web.WriteEncoded(w, http.StatusOK, body)
	return nil
}

// encodeTransactions is the body of a page of GET /api/v1/transactions.
func encodeTransactions(list []*recon.Transaction, total int64, f recon.TransactionFilter, livemode bool) []byte {
	data := make([]transactionJSON, len(list))
	for i, t := range list {
		data[i] = toTransactionJSON(t, livemode)
	}
	return web.EncodeJSON(pageOf(data, total, f.Page, f.Limit))
}

// writePage writes one page of a v1 list: its rows and the pagination of
// total rows in pages of limit.
func writePage[T any](w http.ResponseWriter, data []T, total int64, page, limit int) {
	web.WriteJSON(w, http.StatusOK, pageOf(data, total, page, limit))
}

// pageOf is the body of a v1 list's page.
func pageOf[T any](data []T, total int64, page, limit int) any {
	return struct {
		Status string `json:"status"`
		Data   []T    `json:"data"`
		Meta   any    `json:"meta"`
	}{"success", data, map[string]any{"pagination": map[string]int64{
		"total": total, "per_page": int64(limit), "current_page": int64(page), "last_page": max(1, (total+int64(limit)-1)/int64(limit)),
	}}}
}

// pushItem is one transaction of POST /api/v1/transactions.
type pushItem struct {
	BankAccountID   json.Number  `json:"bank_account_id"`
	TransactionDate string       `json:"transaction_date"`
	AmountIn        json.Number  `json:"amount_in"`
	AmountOut       json.Number  `json:"amount_out"`
	Content         *string      `json:"transaction_content"`
	ReferenceNumber string       `json:"reference_number"`
	SubAccount      *string      `json:"sub_account"`
	Accumulated     *json.Number `json:"accumulated"`
}

// parseDateTime reads a transaction date: "YYYY-MM-DD HH:MM:SS" in the
// business time zone, or RFC 3339 with an offset, converted into it.
func parseDateTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.ParseInLocation(recon.DateTimeLayout, s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.In(loc), nil
	}
	return time.Time{}, fmt.Errorf("must be YYYY-MM-DD HH:MM:SS (business time zone) or RFC 3339")
}

func (it *pushItem) toInput(field string, loc *time.Location, now time.Time) (recon.TransactionInput, error) {
	var in recon.TransactionInput
	bad := func(name, format string, args ...any) error {
		return recon.FieldError(field+"."+name, "%s.%s %s", field, name, fmt.Sprintf(format, args...))
	}
	id, err := strconv.ParseInt(it.BankAccountID.String(), 10, 64)
	if it.BankAccountID == "" {
		return in, bad("bank_account_id", "is required")
	} else if err != nil || id <= 0 {
		return in, bad("bank_account_id", "must be a positive integer")
	}
	in.BankAccountID = id
	if it.TransactionDate == "" {
		return in, bad("transaction_date", "is required")
	}
	if in.TransactionDate, err = parseDateTime(it.TransactionDate, loc); err != nil {
		return in, bad("transaction_date", "%s", err)
	}
	for _, a := range []struct {
		name string
		v    json.Number
		dst  *int64
	}{{"amount_in", it.AmountIn, &in.AmountIn}, {"amount_out", it.AmountOut, &in.AmountOut}} {
		if a.v == "" {
			continue // absent means 0
		}
		if *a.dst, err = recon.ParseAmount(a.v.String()); err != nil {
			return in, bad(a.name, "must be a non-negative whole number of VND: %s", err)
		}
	}
	if it.Accumulated != nil {
		s := it.Accumulated.String()
		n, err := recon.ParseAmount(strings.TrimPrefix(s, "-"))
		if err != nil {
			return in, bad("accumulated", "must be a whole number of VND: %s", err)
		}
		if strings.HasPrefix(s, "-") {
			n = -n
		}
		in.Accumulated = &n
	}
	if it.Content != nil {
		in.Content = *it.Content
	}
	if it.SubAccount != nil {
		in.SubAccount = *it.SubAccount
	}
	in.ReferenceNumber = it.ReferenceNumber
	return in, in.Validate(field, now)
}

func (h *Handler) pushTransactions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	raw, err := web.ReadBody(r)
	if err != nil {
		return err
	}
	now := h.now()
	in, err := h.decodePush(raw, now)
	if err != nil {
		return err
	}
	res, err := h.extractors.Ingest(r.Context(), h.Store, c, now, in)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		// A bank account of another company, or none: the input is at fault.
		return recon.FieldError("bank_account_id", "%s", recon.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	type result struct {
		ID        int64   `json:"id"`
		Code      *string `json:"code"`
		Duplicate bool    `json:"duplicate"`
	}
	data := make([]result, len(res))
	for i, x := range res {
		data[i] = result{x.ID, nullable(x.Code), x.Duplicate}
	}
	web.WriteJSON(w, http.StatusOK, ok(data))
	return nil
}

// decodePush reads the body of POST /api/v1/transactions. The whole body is
// decoded in one pass; only when that fails is it decoded again item by item,
// so that the error names the item at fault.
func (h *Handler) decodePush(raw []byte, now time.Time) ([]recon.TransactionInput, error) {
	var fast struct {
		Transactions []pushItem `json:"transactions"`
	}
	var items []pushItem
	if web.Unmarshal(raw, &fast) == nil && len(fast.Transactions) <= recon.MaxIngestBatch {
		items = fast.Transactions
	} else {
		var body struct {
			Transactions *[]json.RawMessage `json:"transactions"`
		}
		if err := web.Unmarshal(raw, &body); err != nil {
			return nil, err
		}
		if body.Transactions == nil {
			return nil, recon.FieldError("transactions", "transactions is required: an array of 1 to %d transactions", recon.MaxIngestBatch)
		}
		if n := len(*body.Transactions); n > recon.MaxIngestBatch {
			return nil, recon.FieldError("transactions", "a batch holds at most %d transactions, not %d", recon.MaxIngestBatch, n)
		}
		items = make([]pushItem, len(*body.Transactions))
		for i, item := range *body.Transactions {
			if err := web.Unmarshal(item, &items[i]); err != nil {
				field := fmt.Sprintf("transactions[%d]", i)
				return nil, recon.FieldError(field, "%s: %s", field, recon.ErrorMessage(err))
			}
		}
	}
	if len(items) == 0 {
		return nil, recon.FieldError("transactions", "transactions is required: an array of 1 to %d transactions", recon.MaxIngestBatch)
	}
	in := make([]recon.TransactionInput, len(items))
	for i := range items {
		var err error
		if in[i], err = items[i].toInput(fmt.Sprintf("transactions[%d]", i), h.location(), now); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (h *Handler) location() *time.Location {
	if h.Location == nil {
		return time.UTC
	}
	return h.Location
}

type bankAccountJSON struct {
	ID            int64    `json:"id"`
	BankBrandName string   `json:"bank_brand_name"`
	AccountNumber string   `json:"account_number"`
	HolderName    string   `json:"account_holder_name"`
	SubAccounts   []string `json:"sub_accounts"`
	CreatedAt     string   `json:"created_at"`
	Livemode      bool     `json:"livemode"`
}

func (h *Handler) listBankAccounts(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	list, err := h.Store.BankAccounts(r.Context(), c.Tenant)
	if err != nil {
		return err
	}
	data := make([]bankAccountJSON, len(list))
	for i, b := range list {
		subs := b.SubAccounts
		if subs == nil {
			subs = []string{}
		}
		data[i] = bankAccountJSON{b.ID, b.BankName, b.AccountNumber, b.HolderName, subs,
			b.CreatedAt.In(h.location()).Format(recon.DateTimeLayout), c.Livemode()}
	}
	web.WriteJSON(w, http.StatusOK, ok(data))
	return nil
}

func (h *Handler) listDiscontinuities(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	list, err := h.Store.BalanceDiscontinuities(r.Context(), c.Tenant)
	if err != nil {
		return err
	}
	type item struct {
		ID            int64  `json:"id"`
		BankAccountID int64  `json:"bank_account_id"`
		TransactionID int64  `json:"transaction_id"`
		Expected      int64  `json:"expected_balance"`
		Reported      int64  `json:"reported_balance"`
		Gap           int64  `json:"gap"`
		DetectedAt    string `json:"detected_at"`
	}
	data := make([]item, len(list))
	for i, d := range list {
		data[i] = item{d.ID, d.BankAccountID, d.TransactionID, d.Expected, d.Reported, d.Reported - d.Expected,
			d.CreatedAt.In(h.location()).Format(recon.DateTimeLayout)}
	}
	web.WriteJSON(w, http.StatusOK, ok(data))
	return nil
}

// simulateTransfer plays a payer: an incoming transfer to one of the
// tenant's bank accounts, through the same pipeline as a bank feed. It
// exists in test mode on any server, in live mode only on a sandbox server
// (docs/design.md, D10).
func (h *Handler) simulateTransfer(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if c.Livemode() && !h.Sandbox {
		return recon.Errorf(recon.ENOTFOUND, "simulated transfers exist in test mode (use a test-mode credential), and in live mode only on a server started with --sandbox")
	}
	var body struct {
		BankAccountID   int64   `json:"bank_account_id"`
		Amount          int64   `json:"amount"`
		Content         string  `json:"transaction_content"`
		ReferenceNumber *string `json:"reference_number"`
		SubAccount      string  `json:"sub_account"`
	}
	if err := web.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Amount <= 0 || body.Amount > recon.MaxAmount {
		return recon.FieldError("amount", "amount must be a whole number of VND from 1 to %d", int64(recon.MaxAmount))
	}
	var ref string
	if body.ReferenceNumber != nil {
		ref = *body.ReferenceNumber
	} else {
		ref = recon.SimulatedReferenceFrom(h.random())
	}
	now := h.now()
	in := []recon.TransactionInput{{
		BankAccountID: body.BankAccountID, TransactionDate: now.In(h.location()), AmountIn: body.Amount,
		Content: body.Content, ReferenceNumber: ref, SubAccount: body.SubAccount,
	}}
	res, err := h.extractors.Ingest(r.Context(), h.Store, c, now, in)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return recon.FieldError("bank_account_id", "%s", recon.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]any{
		"id": res[0].ID, "code": nullable(res[0].Code), "duplicate": res[0].Duplicate, "reference_number": ref,
		"livemode": c.Livemode(),
	}))
	return nil
}

// showTransaction: GET /api/v1/transactions/{id}, the transaction with the
// match decisions made about it.
func (h *Handler) showTransaction(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, err := h.Store.Transaction(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(r.Context(), c.Tenant, 0, id)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(struct {
		transactionJSON
		MatchDecisions []decisionJSON `json:"match_decisions"`
	}{toTransactionJSON(t, c.Livemode()), decisionsJSON(ds, h.location())}))
	return nil
}

type decisionJSON struct {
	OrderID     *int64 `json:"order_id"`
	Outcome     string `json:"outcome"`
	Rule        string `json:"rule"`
	Code        string `json:"code"`
	Amount      int64  `json:"amount"`
	OrderAmount int64  `json:"order_amount"`
	PaidTotal   int64  `json:"paid_total"`
	Reason      string `json:"reason"`
	At          string `json:"at"`
}

func toDecisionJSON(d *recon.MatchDecision, loc *time.Location) decisionJSON {
	var order *int64
	if d.OrderID != 0 {
		order = &d.OrderID
	}
	return decisionJSON{order, d.Outcome, d.Rule, d.Code, d.Amount, d.OrderAmount, d.PaidTotal, d.Reason,
		d.CreatedAt.In(loc).Format(recon.DateTimeLayout)}
}

func decisionsJSON(ds []*recon.MatchDecision, loc *time.Location) []decisionJSON {
	out := make([]decisionJSON, len(ds))
	for i, d := range ds {
		out[i] = toDecisionJSON(d, loc)
	}
	return out
}

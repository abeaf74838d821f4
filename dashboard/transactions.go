package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
)

// transactionFilter reads the transactions screen's query: the parameters
// of GET /api/v1/transactions (§4.3), read by the same function, and the
// dashboard's search (code, matched state, memo; recon.TransactionSearch),
// with the empty fields of the filter form left out.
func transactionFilter(r *http.Request) (recon.TransactionSearch, url.Values, error) {
	q := formQuery(r)
	s, err := recon.ParseTransactionSearch(q)
	return s, q, err
}

// formQuery is the request's query without the empty fields a filter form
// sends, values trimmed.
func formQuery(r *http.Request) url.Values {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			if v = strings.TrimSpace(v); v != "" {
				q.Add(k, v)
			}
		}
	}
	return q
}

type transactionsView struct {
	Accounts []*recon.BankAccount
	Query    url.Values // the filter, to fill the form and build links
	Error    string
	Rows     []*recon.Transaction
	Pager    pager
	Export   string // the CSV link of the filter
	// A search (code, matched state or memo): keyset pages, and how far
	// back the page read instead of a total when none is exact.
	Search         *recon.TransactionSearchPage
	Found, Scanned int64
	First, Next    string
	States         []string // the matched states, for the form
	// Links are each row's order and states (links.go).
	Links map[int64]recon.TransactionLink
}

// pager is a list's page links, built from the filter's query.
type pager struct {
	Page, Last int64
	Total      int64
	Prev, Next string
}

func newPager(path string, q url.Values, pageParam string, page, perPage int, total int64) pager {
	p := pager{Page: int64(page), Total: total, Last: max(1, (total+int64(perPage)-1)/int64(perPage))}
	link := func(n int64) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set(pageParam, strconv.FormatInt(n, 10))
		return path + "?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(min(p.Page-1, p.Last))
	}
	if p.Page < p.Last {
		p.Next = link(p.Page + 1)
	}
	return p
}

// transactions serves GET /dashboard/transactions.
func (h *Handler) transactions(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := recon.Listing(r.Context()) // docs/design.md, "Reads from a standby"
	accounts, err := h.Store.BankAccounts(ctx, q.caller.Tenant)
	if err != nil {
		return err
	}
	s, query, err := transactionFilter(r)
	v := &transactionsView{Accounts: accounts, Query: query, States: []string{recon.StateMatched, recon.StateUnmatched, recon.StateException}}
	if err == nil && s.Searching() {
		delete(query, "page") // a search pages by keyset (before)
		v.Search, err = h.Store.SearchTransactions(ctx, q.caller.Tenant, s)
		if err == nil {
			v.Rows, v.Found, v.Scanned = v.Search.Rows, int64(len(v.Search.Rows)), int64(v.Search.Scanned)
			if v.Search.Next != 0 {
				v.Next = keysetLink(r.URL.Path, query, "before", v.Search.Next)
			}
			if s.Before != 0 {
				v.First = keysetLink(r.URL.Path, query, "before", 0)
			}
		}
	} else if err == nil {
		var total int64
		if v.Rows, total, err = h.Store.Transactions(ctx, q.caller.Tenant, s.TransactionFilter); err == nil {
			v.Pager = newPager(r.URL.Path, query, "page", s.Page, s.Limit, total)
		}
	}
	if err == nil {
		v.Links, err = h.Store.TransactionLinks(ctx, q.caller.Tenant, transactionIDs(v.Rows))
	}
	status := http.StatusOK
	if recon.ErrorCode(err) == recon.EINVALID {
		v.Error, status = q.lang.ErrorString(err), http.StatusBadRequest
	} else if err != nil {
		return err
	} else {
		export := url.Values{}
		for k, vs := range query {
			if k != "page" && k != "limit" && k != "before" {
				export[k] = vs
			}
		}
		v.Export = "/dashboard/transactions.csv?" + export.Encode()
	}
	h.render(w, r, status, "transactions", h.data(r, q, "transactions", v))
	return nil
}

type transactionView struct {
	T         *recon.Transaction
	Decisions []*recon.MatchDecision
	Refunds   *txRefundsView // nil without refunds (refunds.go)
	// Invoices names the orders the decisions are about, by id.
	Invoices map[int64]string
	// Link is the order the transfer paid (or names) and its exception
	// (links.go).
	Link recon.TransactionLink
}

// transaction serves GET /dashboard/transactions/{id}: the transaction
// with its match decisions and their sentences. Another tenant's id is 404.
func (h *Handler) transaction(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return errNotFound()
	}
	ctx := r.Context()
	t, err := h.Store.Transaction(ctx, q.caller.Tenant, id)
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(ctx, q.caller.Tenant, 0, id)
	if err != nil {
		return err
	}
	v := &transactionView{T: t, Decisions: ds, Invoices: map[int64]string{}}
	for _, d := range ds {
		if _, seen := v.Invoices[d.OrderID]; d.OrderID != 0 && !seen {
			o, err := h.Store.OrderByID(ctx, q.caller.Tenant, d.OrderID)
			if err != nil {
				return err
			}
			v.Invoices[d.OrderID] = o.InvoiceNumber
		}
	}
	if v.Refunds, err = h.transactionRefunds(r, q, t); err != nil {
		return err
	}
	links, err := h.Store.TransactionLinks(ctx, q.caller.Tenant, []int64{id})
	if err != nil {
		return err
	}
	v.Link = links[id]
	h.render(w, r, http.StatusOK, "transaction", h.data(r, q, "transaction", v))
	return nil
}

// maxExportRows bounds a CSV export: a larger filter is refused, naming
// the count, so that the export is one bounded pass. maxExportSearch bounds
// the rows a search's export reads (the §4.3 filter's count, checked first).
const (
	maxExportRows   = 10_000
	maxExportSearch = 100_000
)

// exportTransactions serves GET /dashboard/transactions.csv: the filtered
// list, newest first, streamed a page of 100 at a time.
func (h *Handler) exportTransactions(w http.ResponseWriter, r *http.Request, q *request) error {
	s, _, err := transactionFilter(r)
	if err != nil {
		return err
	}
	s.Page, s.Limit, s.Before = 1, recon.MaxTransactionLimit, 0
	ctx := r.Context()
	rows, total, err := h.Store.Transactions(ctx, q.caller.Tenant, s.TransactionFilter)
	if err != nil {
		return err
	}
	// next is the page after rows: the §4.3 filter's by number, or the
	// search's by keyset; nil when there is none.
	next := func() ([]*recon.Transaction, error) {
		if int64(s.Page*s.Limit) >= total || len(rows) == 0 {
			return nil, nil
		}
		s.Page++
		rows, _, err := h.Store.Transactions(ctx, q.caller.Tenant, s.TransactionFilter)
		return rows, err
	}
	switch {
	case s.Searching() && total > maxExportSearch:
		return recon.Errorf(recon.EINVALID, "the search would read %d transactions; an export reads at most %d: narrow the dates or accounts", total, maxExportSearch)
	case s.Searching():
		page, err := h.Store.SearchTransactions(ctx, q.caller.Tenant, s)
		if err != nil {
			return err
		}
		rows = page.Rows
		next = func() ([]*recon.Transaction, error) {
			for page.Next != 0 {
				s.Before = page.Next
				if page, err = h.Store.SearchTransactions(ctx, q.caller.Tenant, s); err != nil || len(page.Rows) > 0 {
					return page.Rows, err
				}
			}
			return nil, nil
		}
	case total > maxExportRows:
		return recon.Errorf(recon.EINVALID, "the filter selects %d transactions; an export holds at most %d: narrow the dates or accounts", total, maxExportRows)
	}
	cw := csvAttachment(w, q, "transactions", "")
	_ = cw.Write([]string{"id", "transaction_date", "bank_brand_name", "account_number", "amount_in", "amount_out",
		"accumulated", "transaction_content", "reference_number", "code", "sub_account",
		"order_invoice_number", "match_state", "match_outcome", "exception"})
	written := 0
	for len(rows) > 0 {
		links, err := h.Store.TransactionLinks(ctx, q.caller.Tenant, transactionIDs(rows))
		if err != nil {
			h.Logger.ErrorContext(ctx, "dashboard: export", "err", err)
			_ = cw.Write([]string{"export failed: " + recon.ErrorMessage(err)})
			break
		}
		for _, t := range rows {
			if written == maxExportRows {
				// Only a search gets here (its count is not known first).
				_ = cw.Write([]string{fmt.Sprintf("export stopped at %d rows: narrow the filter", maxExportRows)})
				cw.Flush()
				return nil
			}
			written++
			_ = cw.Write([]string{strconv.FormatInt(t.ID, 10), t.TransactionDate.Format(recon.DateTimeLayout),
				cell(t.BankName), t.AccountNumber, strconv.FormatInt(t.AmountIn, 10), strconv.FormatInt(t.AmountOut, 10),
				strconv.FormatInt(t.Accumulated, 10), cell(t.Content), cell(t.ReferenceNumber), cell(t.Code), cell(t.SubAccount),
				cell(links[t.ID].Invoice), links[t.ID].State(t), outcomeOf(t, links[t.ID]), links[t.ID].ExceptionState()})
		}
		if rows, err = next(); err != nil {
			// The header is sent: the truncated file ends with the reason.
			h.Logger.ErrorContext(ctx, "dashboard: export", "err", err)
			_ = cw.Write([]string{"export failed: " + recon.ErrorMessage(err)})
			break
		}
	}
	cw.Flush()
	return nil
}

// cell defuses a text cell a spreadsheet would run as a formula.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

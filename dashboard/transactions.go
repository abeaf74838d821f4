package dashboard

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
)

// transactionFilter reads the transactions screen's query: the parameters
// of GET /api/v1/transactions (§4.3), read by the same function, with the
// empty fields of the filter form left out.
func transactionFilter(r *http.Request) (recon.TransactionFilter, url.Values, error) {
	q := formQuery(r)
	f, err := recon.ParseTransactionFilter(q)
	return f, q, err
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
	ctx := r.Context()
	accounts, err := h.Store.BankAccounts(ctx, q.caller.CompanyID)
	if err != nil {
		return err
	}
	f, query, err := transactionFilter(r)
	v := &transactionsView{Accounts: accounts, Query: query}
	status := http.StatusOK
	if recon.ErrorCode(err) == recon.EINVALID {
		v.Error, status = recon.ErrorMessage(err), http.StatusBadRequest
	} else if err != nil {
		return err
	} else {
		var total int64
		if v.Rows, total, err = h.Store.Transactions(ctx, q.caller.CompanyID, f); err != nil {
			return err
		}
		v.Pager = newPager(r.URL.Path, query, "page", f.Page, f.Limit, total)
		export := url.Values{}
		for k, vs := range query {
			if k != "page" && k != "limit" {
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
}

// transaction serves GET /dashboard/transactions/{id}: the transaction
// with its match decisions and their sentences. Another tenant's id is 404.
func (h *Handler) transaction(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return errNotFound()
	}
	ctx := r.Context()
	t, err := h.Store.Transaction(ctx, q.caller.CompanyID, id)
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(ctx, q.caller.CompanyID, 0, id)
	if err != nil {
		return err
	}
	v := &transactionView{T: t, Decisions: ds}
	h.render(w, r, http.StatusOK, "transaction", h.data(r, q, "transaction", v))
	return nil
}

// maxExportRows bounds a CSV export: a larger filter is refused, naming
// the count, so that the export is one bounded pass.
const maxExportRows = 10_000

// exportTransactions serves GET /dashboard/transactions.csv: the filtered
// list, newest first, streamed a page of 100 at a time.
func (h *Handler) exportTransactions(w http.ResponseWriter, r *http.Request, q *request) error {
	f, _, err := transactionFilter(r)
	if err != nil {
		return err
	}
	f.Page, f.Limit = 1, recon.MaxTransactionLimit
	rows, total, err := h.Store.Transactions(r.Context(), q.caller.CompanyID, f)
	if err != nil {
		return err
	}
	if total > maxExportRows {
		return recon.Errorf(recon.EINVALID, "the filter selects %d transactions; an export holds at most %d: narrow the dates or accounts", total, maxExportRows)
	}
	mode := "live"
	if !q.caller.Livemode {
		mode = "test"
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="transactions-`+mode+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "transaction_date", "bank_brand_name", "account_number", "amount_in", "amount_out",
		"accumulated", "transaction_content", "reference_number", "code", "sub_account"})
	for {
		for _, t := range rows {
			_ = cw.Write([]string{strconv.FormatInt(t.ID, 10), t.TransactionDate.Format(recon.DateTimeLayout),
				cell(t.BankName), t.AccountNumber, strconv.FormatInt(t.AmountIn, 10), strconv.FormatInt(t.AmountOut, 10),
				strconv.FormatInt(t.Accumulated, 10), cell(t.Content), cell(t.ReferenceNumber), cell(t.Code), cell(t.SubAccount)})
		}
		if int64(f.Page*f.Limit) >= total || len(rows) == 0 {
			break
		}
		f.Page++
		if rows, _, err = h.Store.Transactions(r.Context(), q.caller.CompanyID, f); err != nil {
			// The header is sent: the truncated file ends with the reason.
			h.Logger.ErrorContext(r.Context(), "dashboard: export", "err", err)
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

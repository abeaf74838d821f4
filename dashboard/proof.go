package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
)

// The imported statements of a bank account and the proof of their
// balances (docs/statements.md, Balance proof; docs/dashboard.md, Statement
// proofs), and the reconciliation report's balances (docs/dashboard.md,
// Report): the store queries of GET /api/v1/bank-accounts/{id}/statements,
// .../statements/{import} and GET /api/v1/reconciliation.

// statementsPerPage is the list's page size.
const statementsPerPage = 20

type statementsView struct {
	Account *recon.BankAccount
	Imports []*recon.StatementImport
	Pager   pager
	Proof   *recon.StatementProof // the proof page's, nil on the list
}

// CauseKey is the message key of a cause of a difference.
func (statementsView) CauseKey(kind string) string { return "cause_" + kind }

// statementImports serves GET /dashboard/bank-accounts/{id}/statements.
func (h *Handler) statementImports(w http.ResponseWriter, r *http.Request, q *request) error {
	v, err := h.statementsOf(r, q)
	if err != nil {
		return err
	}
	page := 1
	if s := r.URL.Query().Get("page"); s != "" {
		if page, err = strconv.Atoi(s); err != nil || page < 1 || page > recon.MaxTransactionPage {
			return errNotFound()
		}
	}
	var total int64
	if v.Imports, total, err = h.Store.StatementImports(r.Context(), q.caller.Tenant, v.Account.ID, page, statementsPerPage); err != nil {
		return err
	}
	v.Pager = newPager(r.URL.Path, url.Values{}, "page", page, statementsPerPage, total)
	h.render(w, r, http.StatusOK, "statements", h.data(r, q, "statements", v))
	return nil
}

// statementProof serves GET /dashboard/bank-accounts/{id}/statements/{import}.
func (h *Handler) statementProof(w http.ResponseWriter, r *http.Request, q *request) error {
	v, err := h.statementsOf(r, q)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("import"), 10, 64)
	if err != nil || id <= 0 {
		return errNotFound()
	}
	if v.Proof, err = h.Store.StatementProof(r.Context(), q.caller.Tenant, v.Account.ID, id); err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "statements", h.data(r, q, "statements", v))
	return nil
}

// statementsOf reads the {id} bank account of the tenant (404 otherwise).
func (h *Handler) statementsOf(r *http.Request, q *request) (*statementsView, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, errNotFound()
	}
	a, err := h.Store.BankAccount(r.Context(), q.caller.Tenant, id)
	if err != nil {
		return nil, err
	}
	return &statementsView{Account: a}, nil
}

// reportAccount reads the report's bank_account_id (0: every account).
func reportAccount(r *http.Request) (int64, error) {
	s := strings.TrimSpace(r.URL.Query().Get("bank_account_id"))
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, recon.FieldError("bank_account_id", "bank_account_id must be a positive integer").Saying("rp_bad_account")
	}
	return id, nil
}

// dayBalances is the report's balances, days with neither balance left out.
func (h *Handler) dayBalances(r *http.Request, q *request, account int64, from, to string) ([]recon.DayBalance, error) {
	all, err := h.Store.DayBalances(r.Context(), q.caller.Tenant, account, from, to)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, l := range all {
		if l.BankBalance != nil || l.ReconBalance != nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// reportBalancesCSV serves GET /dashboard/report-balances.csv: the
// report's balances, one row per bank account and day
// (docs/dashboard.md, Report).
func (h *Handler) reportBalancesCSV(w http.ResponseWriter, r *http.Request, q *request) error {
	from, to, err := h.reportRange(r)
	if err != nil {
		return err
	}
	account, err := reportAccount(r)
	if err != nil {
		return err
	}
	lines, err := h.dayBalances(r, q, account, from, to)
	if err != nil {
		return err
	}
	cw := csvAttachment(w, q, "balances", "-"+from+"-"+to)
	_ = cw.Write([]string{"bank_account_id", "account_number", "date", "bank_balance", "recon_balance", "difference", "causes", "statement_import_id"})
	amount := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	for _, l := range lines {
		var causes []string
		for _, c := range l.Causes {
			causes = append(causes, c.Kind+" "+strconv.FormatInt(c.Count, 10)+" "+strconv.FormatInt(c.Effect, 10))
		}
		imp := ""
		if l.ImportID != 0 {
			imp = strconv.FormatInt(l.ImportID, 10)
		}
		_ = cw.Write([]string{strconv.FormatInt(l.BankAccountID, 10), l.AccountNumber, l.Date, amount(l.BankBalance), amount(l.ReconBalance),
			amount(l.Difference), strings.Join(causes, "; "), imp})
	}
	cw.Flush()
	return nil
}

// balancesCSV is the link of the report's balances as CSV.
func balancesCSV(from, to string, account int64) string {
	v := url.Values{"from_date": {from}, "to_date": {to}}
	if account != 0 {
		v.Set("bank_account_id", strconv.FormatInt(account, 10))
	}
	return "/dashboard/report-balances.csv?" + v.Encode()
}

package dashboard

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
)

// The reconciliation report (docs/dashboard.md, Report): over a date range,
// the incoming transfers by match outcome (recon.OrderStore.Reconciliation,
// as GET /api/v1/reconciliation) and, with refunds, the refunds requested
// by status; as a page and as a CSV file of one row per line of it.

// reportOutcomes is the order the outcomes are shown in; any other outcome
// the store reports follows, by name.
var reportOutcomes = []string{recon.MatchCaptured, recon.MatchPartial, recon.MatchUnderpaid, recon.MatchOverpaid, recon.MatchDuplicate, recon.MatchVAInactive, recon.MatchNone}

// reportLine is one line of the report: its kind ("transactions" or
// "refunds"), its name (an outcome, a refund status, or "refunded": the
// refunds holding or sending money), its message key, count and amount.
type reportLine struct {
	Kind, Name, Key string
	Count, Amount   int64
}

type reportView struct {
	From, To string
	Error    string
	Lines    []reportLine
	Refunds  []reportLine // nil without refunds
	CSV      string
	// Account is the balances' bank account (0: every one), Accounts the
	// choice; Balances the days with a balance, BalancesCSV their export.
	Account     int64
	Accounts    []*recon.BankAccount
	Balances    []recon.DayBalance
	BalancesCSV string
}

// CauseKey is the message key of a cause of a difference.
func (reportView) CauseKey(kind string) string { return "cause_" + kind }

// reportRange reads from_date and to_date (default: the 30 days to today
// in the business time zone, as the API's report).
func (h *Handler) reportRange(r *http.Request) (from, to string, err error) {
	q := r.URL.Query()
	to = strings.TrimSpace(q.Get("to_date"))
	if to == "" {
		to = h.now().In(h.Location).Format(recon.DateLayout)
	}
	from = strings.TrimSpace(q.Get("from_date"))
	if from == "" {
		if t, err := time.Parse(recon.DateLayout, to); err == nil {
			from = t.AddDate(0, 0, -29).Format(recon.DateLayout)
		}
	}
	for _, d := range []struct{ field, v string }{{"from_date", from}, {"to_date", to}} {
		if _, err := time.Parse(recon.DateLayout, d.v); err != nil || len(d.v) != 10 {
			return from, to, recon.FieldError(d.field, "dates must be in the form YYYY-MM-DD")
		}
	}
	if from > to {
		return from, to, recon.FieldError("from_date", "from_date must not be after to_date")
	}
	if f, _ := time.Parse(recon.DateLayout, from); f.AddDate(0, 0, recon.MaxReportDays).Format(recon.DateLayout) <= to {
		return from, to, recon.FieldError("from_date", "the report covers at most %d days", recon.MaxReportDays).Saying("rp_range")
	}
	return from, to, nil
}

// reportLines builds the report's lines.
func (h *Handler) reportLines(r *http.Request, q *request, from, to string) (lines, refundLines []reportLine, err error) {
	ctx := recon.Listing(r.Context()) // docs/design.md, "Reads from a standby"
	rep, err := h.Store.Reconciliation(ctx, q.caller.Tenant, from, to)
	if err != nil {
		return nil, nil, err
	}
	names := slices.Clone(reportOutcomes)
	for o := range rep.Counts {
		if !slices.Contains(names, o) {
			names = append(names, o)
		}
	}
	slices.Sort(names[len(reportOutcomes):])
	for _, o := range names {
		if n, ok := rep.Counts[o]; ok { // the store reports every outcome it counts, the usual ones at 0
			lines = append(lines, reportLine{"transactions", o, "ro_" + o, n, rep.Amounts[o]})
		}
	}
	if h.Refunds == nil || !q.caller.May(recon.ActionReadRefunds) {
		return lines, nil, nil
	}
	t, err := h.Store.RefundTotals(ctx, q.caller.Tenant, from, to, h.Location)
	if err != nil {
		return nil, nil, err
	}
	n, amount, _ := t.Held()
	refundLines = append(refundLines, reportLine{"refunds", "refunded", "rp_refunded", n, amount})
	for _, s := range recon.RefundStatuses {
		refundLines = append(refundLines, reportLine{"refunds", s, "rs_" + s, t.Counts[s], t.Amounts[s]})
	}
	return lines, refundLines, nil
}

// report serves GET /dashboard/report?from_date=&to_date=.
func (h *Handler) report(w http.ResponseWriter, r *http.Request, q *request) error {
	from, to, err := h.reportRange(r)
	v := &reportView{From: from, To: to}
	status := http.StatusOK
	if err == nil {
		v.Account, err = reportAccount(r)
	}
	if err == nil {
		v.Lines, v.Refunds, err = h.reportLines(r, q, from, to)
	}
	if err == nil {
		v.Balances, err = h.dayBalances(r, q, v.Account, from, to)
	}
	if err == nil {
		v.Accounts, err = h.Store.BankAccounts(r.Context(), q.caller.Tenant)
	}
	switch recon.ErrorCode(err) {
	case "":
		v.CSV = "/dashboard/report.csv?" + url.Values{"from_date": {from}, "to_date": {to}}.Encode()
		v.BalancesCSV = balancesCSV(from, to, v.Account)
	case recon.EINVALID:
		key := "rl_from_date"
		if say := recon.ErrorSay(err); say != nil && (say.Key == "rp_range" || say.Key == "rp_bad_account") {
			key = say.Key
		}
		v.Error, status = q.lang.T(key), http.StatusBadRequest
	default:
		return err
	}
	h.render(w, r, status, "report", h.data(r, q, "report", v))
	return nil
}

// reportCSV serves GET /dashboard/report.csv: kind,name,count,amount, one
// row per line of the report (docs/dashboard.md, Report).
func (h *Handler) reportCSV(w http.ResponseWriter, r *http.Request, q *request) error {
	from, to, err := h.reportRange(r)
	if err != nil {
		return err
	}
	lines, refunds, err := h.reportLines(r, q, from, to)
	if err != nil {
		return err
	}
	cw := csvAttachment(w, q, "reconciliation", "-"+from+"-"+to)
	_ = cw.Write([]string{"kind", "name", "count", "amount"})
	for _, l := range append(lines, refunds...) {
		_ = cw.Write([]string{l.Kind, l.Name, strconv.FormatInt(l.Count, 10), strconv.FormatInt(l.Amount, 10)})
	}
	cw.Flush()
	return nil
}

// csvAttachment starts a CSV download named name-<live|test><suffix>.csv, the
// mode of the caller's data in the name so that a live and a test export
// never overwrite each other, and returns its writer.
func csvAttachment(w http.ResponseWriter, q *request, name, suffix string) *csv.Writer {
	mode := "live"
	if !q.caller.Livemode() {
		mode = "test"
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`-`+mode+suffix+`.csv"`)
	return csv.NewWriter(w)
}

package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"recon"
	"recon/web"
)

type deliveryJSON struct {
	ID            int64           `json:"id"`
	CompanyID     int64           `json:"company_id"`
	Kind          string          `json:"kind"`
	Event         string          `json:"event"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	LastError     string          `json:"last_error"`
	CreatedAt     string          `json:"created_at"`
	NextAttemptAt *string         `json:"next_attempt_at,omitempty"`
	DeliveredAt   *string         `json:"delivered_at,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	AttemptLog    []attemptJSON   `json:"attempt_log,omitempty"`
	// Livemode is set in API answers (false with a test credential).
	Livemode *bool `json:"livemode,omitempty"`
}

type attemptJSON struct {
	At         string `json:"at"`
	URL        string `json:"url"`
	StatusCode int    `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Response   string `json:"response"`
	Error      string `json:"error"`
}

func rfc3339(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// DeliveriesJSON renders a list of deliveries, as the API and the CLI show it.
func DeliveriesJSON(ds []*recon.Delivery) []deliveryJSON {
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = toDeliveryJSON(d)
	}
	return out
}

func toDeliveryJSON(d *recon.Delivery) deliveryJSON {
	j := deliveryJSON{ID: d.ID, CompanyID: d.CompanyID, Kind: d.Kind, Event: d.Event, Status: d.Status,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: *rfc3339(d.CreatedAt), DeliveredAt: rfc3339(d.DeliveredAt)}
	if d.Status == recon.DeliveryPending {
		j.NextAttemptAt = rfc3339(d.NextAttemptAt)
	}
	return j
}

// DeliveryJSON renders one delivery with its payload and every attempt.
func DeliveryJSON(d *recon.Delivery, attempts []*recon.DeliveryAttempt) deliveryJSON {
	j := toDeliveryJSON(d)
	j.Payload = json.RawMessage(d.Payload)
	j.AttemptLog = make([]attemptJSON, len(attempts))
	for i, a := range attempts {
		j.AttemptLog[i] = attemptJSON{a.At.UTC().Format(time.RFC3339Nano), a.URL, a.StatusCode, a.Latency.Milliseconds(), a.Response, a.Error}
	}
	return j
}

// listDeliveries: GET /api/v1/deliveries?status=&kind=&limit=&before_id=
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	q := r.URL.Query()
	f := recon.DeliveryFilter{Limit: 50}
	for name := range q {
		switch name {
		case "status":
			f.Status = q.Get(name)
			if err := recon.CheckDeliveryStatus(name, cmp.Or(f.Status, "(empty)")); err != nil {
				return err
			}
		case "kind":
			f.Kind = q.Get(name)
			if err := recon.CheckDeliveryKind(name, cmp.Or(f.Kind, "(empty)")); err != nil {
				return err
			}
		case "limit", "before_id":
			n, err := strconv.ParseInt(q.Get(name), 10, 64)
			if err != nil || n < 1 || (name == "limit" && n > 500) {
				return recon.FieldError(name, "%s must be a positive integer (limit at most 500)", name)
			}
			if name == "limit" {
				f.Limit = int(n)
			} else {
				f.BeforeID = n
			}
		default:
			return recon.FieldError(name, "unknown query parameter %q (known: status, kind, limit, before_id)", name)
		}
	}
	list, err := h.Store.Deliveries(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	out := DeliveriesJSON(list)
	live := c.Livemode()
	for i := range out {
		out[i].Livemode = &live
	}
	web.WriteJSON(w, http.StatusOK, ok(out))
	return nil
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, recon.FieldError("id", "the id in the path must be a positive integer")
	}
	return id, nil
}

// showDelivery: GET /api/v1/deliveries/{id}
func (h *Handler) showDelivery(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	d, err := h.Store.Delivery(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	attempts, err := h.Store.DeliveryAttempts(r.Context(), id)
	if err != nil {
		return err
	}
	j := DeliveryJSON(d, attempts)
	live := c.Livemode()
	j.Livemode = &live
	web.WriteJSON(w, http.StatusOK, ok(j))
	return nil
}

// replayDelivery: POST /api/v1/deliveries/{id}/replay
func (h *Handler) replayDelivery(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := h.Store.ReplayDelivery(r.Context(), c.Tenant, id, h.now()); err != nil {
		return err
	}
	if h.Kick != nil {
		h.Kick()
	}
	d, err := h.Store.Delivery(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	j := toDeliveryJSON(d)
	live := c.Livemode()
	j.Livemode = &live
	web.WriteJSON(w, http.StatusOK, ok(j))
	return nil
}

// reconciliation: GET /api/v1/reconciliation?from_date=&to_date=&bank_account_id=
// (docs/dashboard.md, Report): the match outcomes, the refunds and, per
// bank account (all, or the one given) and day, the bank's balance,
// Recon's and the difference with its causes.
func (h *Handler) reconciliation(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	q := r.URL.Query()
	if err := recon.CheckParams(q, []string{"from_date", "to_date", "bank_account_id"}); err != nil {
		return err
	}
	var account int64
	if v := q.Get("bank_account_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return recon.FieldError("bank_account_id", "bank_account_id must be a positive integer")
		}
		account = n
	}
	dates := map[string]string{"to_date": h.now().In(h.location()).Format(recon.DateLayout)}
	for _, name := range []string{"to_date", "from_date"} {
		v := q.Get(name)
		if v == "" && name == "from_date" {
			t, _ := time.Parse(recon.DateLayout, dates["to_date"])
			v = t.AddDate(0, 0, -29).Format(recon.DateLayout)
		} else if v == "" {
			continue
		}
		if _, err := time.Parse(recon.DateLayout, v); err != nil || len(v) != 10 {
			return recon.FieldError(name, "%s must be a date in the form YYYY-MM-DD", name)
		}
		dates[name] = v
	}
	if dates["from_date"] > dates["to_date"] {
		return recon.FieldError("from_date", "from_date must not be after to_date")
	}
	if f, _ := time.Parse(recon.DateLayout, dates["from_date"]); f.AddDate(0, 0, recon.MaxReportDays).Format(recon.DateLayout) <= dates["to_date"] {
		return recon.FieldError("from_date", "the report covers at most %d days: from_date must be within %d days before to_date", recon.MaxReportDays, recon.MaxReportDays-1)
	}
	rep, err := h.Store.Reconciliation(r.Context(), c.Tenant, dates["from_date"], dates["to_date"])
	if err != nil {
		return err
	}
	refunds, err := h.Store.RefundTotals(r.Context(), c.Tenant, dates["from_date"], dates["to_date"], h.location())
	if err != nil {
		return err
	}
	balances, err := h.Store.DayBalances(r.Context(), c.Tenant, account, dates["from_date"], dates["to_date"])
	if err != nil {
		return err
	}
	out := ReportJSON(rep, c.Livemode())
	out["refunds"] = RefundTotalsJSON(refunds)
	out["balances"] = DayBalancesJSON(balances)
	web.WriteJSON(w, http.StatusOK, ok(out))
	return nil
}

// DayBalancesJSON renders the report's balances: per bank account and day,
// the bank's balance (null without a statement ending that day), Recon's,
// the difference and its causes (docs/dashboard.md, Report).
func DayBalancesJSON(lines []recon.DayBalance) []map[string]any {
	out := make([]map[string]any, len(lines))
	for i, l := range lines {
		var imp any
		if l.ImportID != 0 {
			imp = l.ImportID
		}
		out[i] = map[string]any{
			"bank_account_id": l.BankAccountID, "account_number": l.AccountNumber, "date": l.Date,
			"bank_balance": l.BankBalance, "recon_balance": l.ReconBalance, "basis": nullable(l.Basis), "difference": l.Difference,
			"statement_import_id": imp, "causes": ProofCausesJSON(l.Causes, false),
		}
	}
	return out
}

// RefundTotalsJSON renders the report's refunds (docs/dashboard.md,
// Report): count and amount of the refunds requested in the
// range that hold or sent their money, and each status's.
func RefundTotalsJSON(t *recon.RefundTotals) map[string]any {
	n, amount, _ := t.Held()
	by := map[string]any{}
	for _, s := range recon.RefundStatuses {
		by[s] = map[string]int64{"count": t.Counts[s], "amount": t.Amounts[s]}
	}
	return map[string]any{"count": n, "amount": amount, "by_status": by}
}

// ReportJSON renders a reconciliation report, as the API and the CLI show it.
func ReportJSON(rep *recon.ReconciliationReport, livemode bool) map[string]any {
	summary := map[string]any{}
	for o, n := range rep.Counts {
		summary[o] = map[string]int64{"count": n, "amount": rep.Amounts[o]}
	}
	unmatched := make([]transactionJSON, len(rep.Unmatched))
	for i, t := range rep.Unmatched {
		unmatched[i] = toTransactionJSON(t, livemode)
	}
	type underpaidJSON struct {
		TransactionID int64  `json:"transaction_id"`
		OrderID       int64  `json:"order_id"`
		Amount        int64  `json:"amount"`
		OrderAmount   int64  `json:"order_amount"`
		PaidTotal     int64  `json:"paid_total"`
		Reason        string `json:"reason"`
	}
	underpaid := make([]underpaidJSON, len(rep.Underpaid))
	for i, d := range rep.Underpaid {
		underpaid[i] = underpaidJSON{d.TransactionID, d.OrderID, d.Amount, d.OrderAmount, d.PaidTotal, d.Reason}
	}
	return map[string]any{"from_date": rep.From, "to_date": rep.To, "summary": summary, "unmatched": unmatched, "underpaid": underpaid}
}

package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
)

// The notifications screen (issue 11, item 6): the delivery log of IPNs,
// hub events and balance changes, each delivery's attempts, "copy as
// cURL", replay one, replay every failed one since a time, and the figures
// of each kind (recon.DeliveryStore, recon.DeliveryOpsStore).

// deliveryPerPage is the log's page size; statsDays the figures' window.
const (
	deliveryPerPage = 20
	statsDays       = 7
)

type notificationsView struct {
	Kinds, Statuses []string
	Query           url.Values
	Error           string
	Rows            []*recon.Delivery
	RowTimes        []string
	Next, First     string
	Stats           []recon.TargetStats
	StatsSince      string
	StatsBounded    bool   // the figures are of the newest recon.MaxStatsDeliveries only
	Replayed        string // the count of the last "replay failed", after its redirect
	Since           string // the replay form's default: the figures' window
	// Invoices names each row's order, Targets each kind's target URL;
	// Count counts the filter's rows, up to recon.MaxCountedDeliveries
	// (links.go).
	Invoices map[int64]string
	Targets  map[string]string
	Count    int64
	Many     bool
}

// statusFailing is the log's status filter of pending deliveries with a
// failed attempt (recon.DeliveryFilter.Failing), beside the stored statuses.
const statusFailing = "failing"

// deliveryFilter reads the log's query: status (as the API's, or
// "failing"), kind (as the API's) and before_id, the keyset of the next
// page.
func deliveryFilter(q url.Values) (recon.DeliveryFilter, error) {
	f := recon.DeliveryFilter{Status: q.Get("status"), Kind: q.Get("kind"), Limit: deliveryPerPage + 1}
	if f.Status == statusFailing {
		f.Status, f.Failing = "", true
	}
	if err := recon.CheckDeliveryStatus("status", f.Status); err != nil {
		return f, err
	}
	if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
		return f, err
	}
	if v := q.Get("before_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return f, recon.FieldError("before_id", "before_id must be a positive integer")
		}
		f.BeforeID = n
	}
	return f, nil
}

// notifications serves GET /dashboard/notifications: the figures of the
// last 7 days per kind, then the log, newest first, 20 a page.
func (h *Handler) notifications(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := recon.Listing(r.Context()) // docs/design.md, "Reads from a standby"
	now := h.now()
	since := now.Add(-statsDays * 24 * time.Hour)
	query := formQuery(r)
	v := &notificationsView{Kinds: recon.DeliveryKinds, Statuses: append(slices.Clone(recon.DeliveryStatuses), statusFailing), Query: query,
		StatsSince: h.timeText(since), Since: since.In(h.Location).Format(datetimeLocal)}
	if n, err := strconv.Atoi(query.Get("replayed")); err == nil && n >= 0 {
		v.Replayed = q.lang.Count(int64(n))
	}
	query.Del("replayed")
	var err error
	if v.Stats, err = h.Store.DeliveryTargetStats(ctx, q.caller.Tenant, since, recon.MaxStatsDeliveries); err != nil {
		return err
	}
	var read int64
	for _, s := range v.Stats {
		read += s.Delivered + s.Pending + s.Dead
	}
	v.StatsBounded = read >= recon.MaxStatsDeliveries
	status := http.StatusOK
	f, err := deliveryFilter(query)
	if err != nil {
		v.Error, status = q.lang.ErrorString(err), http.StatusBadRequest
	} else {
		if v.Rows, err = h.Store.Deliveries(ctx, q.caller.Tenant, f); err != nil {
			return err
		}
		if len(v.Rows) > deliveryPerPage {
			v.Rows = v.Rows[:deliveryPerPage]
			v.Next = keysetLink(r.URL.Path, query, "before_id", v.Rows[deliveryPerPage-1].ID)
		}
		if f.BeforeID > 0 {
			v.First = keysetLink(r.URL.Path, query, "before_id", 0)
		}
		for _, d := range v.Rows {
			v.RowTimes = append(v.RowTimes, h.timeText(d.CreatedAt))
		}
		if v.Invoices, v.Targets, err = h.deliveryLinks(ctx, q.caller.Tenant, v.Rows); err != nil {
			return err
		}
		if v.Count, err = h.Store.CountDeliveries(ctx, q.caller.Tenant, f, recon.MaxCountedDeliveries); err != nil {
			return err
		}
		v.Many = v.Count >= recon.MaxCountedDeliveries
	}
	h.render(w, r, status, "notifications", h.data(r, q, "notifications", v))
	return nil
}

// datetimeLocal is the value of an <input type="datetime-local">.
const datetimeLocal = "2006-01-02T15:04"

type attemptView struct {
	*recon.DeliveryAttempt
	At      string
	Latency string
}

type deliveryView struct {
	D         *recon.Delivery
	Created   string
	Delivered string
	Next      string
	Payload   string // indented when it is JSON
	Attempts  []attemptView
	Curl      string // "" when no target is set
	Signed    bool   // the cURL's signature is real (the viewer may manage notifications)
	Replayed  bool
	// Invoice names the order an IPN is about, Target where it goes
	// ("" when the tenant has none) (links.go).
	Invoice, Target string
}

// delivery serves GET /dashboard/notifications/{id}: the delivery, its
// payload, every attempt and the cURL that sends it again. Another
// tenant's (or mode's) delivery is 404.
func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	d, err := h.Store.Delivery(ctx, q.caller.Tenant, id)
	if err != nil {
		return err
	}
	attempts, err := h.Store.DeliveryAttempts(ctx, d.ID)
	if err != nil {
		return err
	}
	v := &deliveryView{D: d, Created: h.timeText(d.CreatedAt), Delivered: h.timeText(d.DeliveredAt), Payload: string(d.Payload),
		Replayed: r.URL.Query().Get("replayed") == "1"}
	if d.Status == recon.DeliveryPending {
		v.Next = h.timeText(d.NextAttemptAt)
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, d.Payload, "", "  ") == nil {
		v.Payload = pretty.String()
	}
	for _, a := range attempts {
		v.Attempts = append(v.Attempts, attemptView{a, h.timeText(a.At), a.Latency.Round(time.Millisecond).String()})
	}
	t, err := h.Store.DeliveryTarget(ctx, q.caller.Tenant.ID(), d.Kind)
	if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
		return err
	}
	if d.OrderID != 0 {
		invoices, err := h.Store.OrderInvoices(ctx, q.caller.Tenant, []int64{d.OrderID})
		if err != nil {
			return err
		}
		v.Invoice = invoices[d.OrderID]
	}
	if t != nil {
		v.Target = t.URL
		v.Signed = q.caller.May(recon.ActionManageNotifications)
		v.Curl = curlCommand(t, d, h.now(), v.Signed)
	}
	h.render(w, r, http.StatusOK, "delivery", h.data(r, q, "delivery", v))
	return nil
}

// Placeholders of the cURL command for what it must not show.
const (
	signaturePlaceholder = "v1=<SIGNATURE>"
	standardPlaceholder  = "v1,<SIGNATURE>" // of webhook-signature (docs/design.md, D7, "Standard Webhooks.")
	secretPlaceholder    = "<SECRET_KEY>"
)

// curlCommand is the command that sends d's exact payload to t with the
// headers of an attempt made at now (recon.DeliveryHeaders). The signatures
// (X-Recon-Signature, webhook-signature) are real only when signed (the viewer may manage notifications); the
// X-Secret-Key of a SECRET_KEY target is never shown (the rest of Recon
// shows it only when it is made), only a placeholder.
func curlCommand(t *recon.Target, d *recon.Delivery, now time.Time, signed bool) string {
	var b strings.Builder
	b.WriteString("curl -X POST " + shellQuote(t.URL))
	for _, f := range recon.DeliveryHeaders(t, d, now) {
		switch {
		case f.Name == recon.HeaderSignature && !signed:
			f.Value = signaturePlaceholder
		case f.Name == recon.HeaderWebhookSignature && !signed:
			f.Value = standardPlaceholder
		case f.Name == recon.HeaderSecretKey:
			f.Value = secretPlaceholder
		}
		b.WriteString(" \\\n  -H " + shellQuote(f.Name+": "+f.Value))
	}
	b.WriteString(" \\\n  --data-binary " + shellQuote(string(d.Payload)))
	return b.String()
}

// shellQuote quotes s for a POSIX shell: in single quotes, each ' written '\”.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// replayDelivery serves POST /dashboard/notifications/{id}/replay, once
// confirmed: the delivery is pending and due at once
// (recon.DeliveryStore.ReplayDelivery).
func (h *Handler) replayDelivery(w http.ResponseWriter, r *http.Request, q *request) error {
	if !confirmed(r) {
		return h.confirmReplay(w, r, q)
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := h.Store.ReplayDelivery(r.Context(), q.caller.Tenant, id, h.now()); err != nil {
		return err
	}
	h.kick()
	http.Redirect(w, r, "/dashboard/notifications/"+strconv.FormatInt(id, 10)+"?replayed=1", http.StatusSeeOther)
	return nil
}

// failedFilter reads the replay's fields: since (a local date and time,
// required) and kind ("" for any).
func (h *Handler) failedFilter(form url.Values) (recon.FailedFilter, error) {
	f := recon.FailedFilter{Kind: form.Get("kind")}
	if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
		return f, err
	}
	since := strings.TrimSpace(form.Get("since"))
	if since == "" {
		return f, recon.FieldError("since", "since is required: replay the failed notifications created since then")
	}
	var err error
	for _, layout := range []string{datetimeLocal, datetimeLocal + ":05", recon.DateTimeLayout} {
		if f.Since, err = time.ParseInLocation(layout, since, h.Location); err == nil {
			return f, nil
		}
	}
	return f, recon.FieldError("since", "since must be a date and time, YYYY-MM-DDTHH:MM")
}

// replayFailed serves POST /dashboard/notifications/replay, once confirmed:
// every failed delivery (dead, or waiting for a retry) created since the
// time, of the kind or any, is made due now (recon.DeliveryOpsStore.ReplayFailed).
func (h *Handler) replayFailed(w http.ResponseWriter, r *http.Request, q *request) error {
	if !confirmed(r) {
		return h.replayFailedStep(w, r, q, r.PostForm)
	}
	f, err := h.failedFilter(r.PostForm)
	if err != nil {
		return err
	}
	n, err := h.Store.ReplayFailed(r.Context(), q.caller.Tenant, f, h.now())
	if err != nil {
		return err
	}
	if n > 0 {
		h.kick()
	}
	http.Redirect(w, r, "/dashboard/notifications?replayed="+strconv.FormatInt(n, 10), http.StatusSeeOther)
	return nil
}

func (h *Handler) kick() {
	if h.Kick != nil {
		h.Kick()
	}
}

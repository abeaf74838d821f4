package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"recon"
	"recon/alerts"
	"recon/web"
)

// The alerts page (docs/dashboard.md, Alerts): one's own switches (which
// alerts come by e-mail), the company's thresholds, daily hour and chat
// webhook (Admin), and the latest alerts, which the dashboard always
// shows whether or not e-mail is configured.

func (h *Handler) registerAlerts(mux *web.Mux) {
	mux.Handle("GET /dashboard/alerts", h.page(recon.ActionReadMoney, h.alertsPage))
	mux.HandleLimited("POST /dashboard/alerts/mine", h.form(recon.ActionReadMoney, h.saveAlertPrefs), formLimit)
	mux.HandleLimited("POST /dashboard/alerts/settings", h.form(recon.ActionManageCompany, h.saveAlertSettings), formLimit)
}

type alertRow struct {
	When, Kind, Subject, Text string
	Sent                      bool
	Error                     string
}

type alertsView struct {
	Prefs      *recon.AlertPrefs
	Settings   *recon.AlertSettings
	ChatMasked string
	MayCompany bool
	Mail       bool // e-mail is configured
	Rows       []alertRow
	Saved      string // a message key
	Error      string
	ErrorField string
	Hours      []int
	ChatKinds  []string
}

const alertRows = 30

func (h *Handler) alertsPage(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.renderAlerts(w, r, q, http.StatusOK, &alertsView{Saved: map[string]string{"mine": "al_saved_mine", "settings": "al_saved_settings"}[r.URL.Query().Get("saved")]})
}

func (h *Handler) renderAlerts(w http.ResponseWriter, r *http.Request, q *request, status int, v *alertsView) error {
	ctx := r.Context()
	var err error
	if v.Prefs == nil {
		if v.Prefs, err = h.Store.AlertPrefs(ctx, q.caller.User.ID); err != nil {
			return err
		}
	}
	v.MayCompany = q.caller.May(recon.ActionManageCompany)
	if v.MayCompany && v.Settings == nil {
		if v.Settings, err = h.Store.AlertSettings(ctx, q.session.Company); err != nil {
			return err
		}
	}
	if v.Settings != nil {
		v.ChatMasked = recon.MaskSecret(v.Settings.ChatURL)
	}
	v.Mail = h.Team != nil && h.Team.Mail != nil
	v.Hours = make([]int, 24)
	for i := range v.Hours {
		v.Hours[i] = i
	}
	v.ChatKinds = recon.ChatKinds
	events, err := h.Store.AlertEvents(ctx, recon.LiveTenant(q.session.Company), alertRows)
	if err != nil {
		return err
	}
	for _, e := range events {
		subject, text := alerts.Message(string(q.lang), e)
		v.Rows = append(v.Rows, alertRow{When: h.timeText(e.CreatedAt), Kind: q.lang.T("al_kind_" + e.Kind), Subject: subject, Text: text,
			Sent: !e.SentAt.IsZero(), Error: e.LastError})
	}
	h.render(w, r, status, "alerts", h.data(r, q, "alerts", v))
	return nil
}

// saveAlertPrefs serves POST /dashboard/alerts/mine: the signed-in user's
// own switches.
func (h *Handler) saveAlertPrefs(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.PostForm
	p := &recon.AlertPrefs{UserID: q.caller.User.ID, Failing: f.Get("failing") == "1", Queue: f.Get("queue") == "1", Daily: f.Get("daily") == "1"}
	if err := h.Store.SetAlertPrefs(r.Context(), p); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/alerts?saved=mine", http.StatusSeeOther)
	return nil
}

// saveAlertSettings serves POST /dashboard/alerts/settings: the company's
// thresholds, daily hour and chat webhook (its URL through the SSRF checks
// of every target; left empty, the stored one is kept), audited.
func (h *Handler) saveAlertSettings(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := r.Context()
	before, err := h.Store.AlertSettings(ctx, q.session.Company)
	if err != nil {
		return err
	}
	f := r.PostForm
	s := *before
	num := func(field string, into *int64) {
		if err != nil {
			return
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(f.Get(field)), 10, 64)
		if perr != nil {
			err = recon.FieldError(field, "%s must be a whole number", field)
		}
		*into = n
	}
	var attempts, threshold, hour int64
	num("failing_attempts", &attempts)
	num("queue_threshold", &threshold)
	num("daily_hour", &hour)
	s.FailingAttempts, s.QueueThreshold, s.DailyHour = int(attempts), threshold, int(hour)
	if attempts > 1000 || hour > 1000 || hour < -1000 {
		s.FailingAttempts, s.DailyHour = 0, 0 // refused below, not wrapped
	}
	s.ChatKind, s.ChatID = f.Get("chat_kind"), f.Get("chat_id")
	if u := strings.TrimSpace(f.Get("chat_url")); u != "" || s.ChatKind == "" {
		s.ChatURL = u
	}
	if err == nil {
		check := func(string) error { return recon.Errorf(recon.EINVALID, "no chat webhook on this server") }
		if h.IPN != nil && h.IPN.CheckURL != nil {
			check = h.IPN.CheckURL
		}
		err = s.Validate(check)
	}
	if err != nil {
		if recon.ErrorCode(err) != recon.EINVALID {
			return err
		}
		field := errField(err)
		return h.renderAlerts(w, r, q, http.StatusBadRequest, &alertsView{Settings: &s, Error: q.lang.T("al_bad_" + field), ErrorField: field})
	}
	changes := recon.AuditDiff([]string{"failing_attempts", "queue_threshold", "daily_hour", "chat_kind", "chat_id", "chat_url"},
		alertFields(before), alertFields(&s), "chat_url")
	action := recon.AuditAlertsUpdate
	if before.ChatURL != s.ChatURL || before.ChatKind != s.ChatKind {
		action = recon.AuditChatUpdate
	}
	err = h.audit(r, q, action, "", changes, func(ctx context.Context) error { return h.Store.SetAlertSettings(ctx, &s) })
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/alerts?saved=settings", http.StatusSeeOther)
	return nil
}

func alertFields(s *recon.AlertSettings) map[string]string {
	return map[string]string{"failing_attempts": strconv.Itoa(s.FailingAttempts), "queue_threshold": strconv.FormatInt(s.QueueThreshold, 10),
		"daily_hour": strconv.Itoa(s.DailyHour), "chat_kind": s.ChatKind, "chat_id": s.ChatID, "chat_url": s.ChatURL}
}

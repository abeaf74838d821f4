package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"recon"
	"recon/web"
)

// Endpoint health on the settings page's targets card (docs/dashboard.md,
// Settings; docs/design.md, D7): a target Recon disabled after 3 days of
// failures says so, when (business time zone), why and how many
// notifications wait, with [Re-enable] and [Re-enable and replay N], each
// through a confirmation page.

// healthStore is what the card needs of storage (sqlstore/endpointhealth.go).
type healthStore interface {
	TargetHealths(ctx context.Context, tenant recon.TenantID) ([]*recon.TargetHealth, error)
	EnableTarget(ctx context.Context, tenant recon.TenantID, kind string, replay bool, now time.Time) (int64, error)
}

// healthView is a disabled target's lines on the card.
type healthView struct {
	At, Why string
	Held    int64
}

// fillHealth adds the targets' health to the settings page: the disabled
// ones' lines, and the notice of a target just re-enabled.
func (h *Handler) fillHealth(r *http.Request, q *request, v *settingsView) error {
	list, err := h.Store.TargetHealths(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	v.Health = map[string]*healthView{}
	for _, t := range list {
		if t.DisabledByRecon() {
			v.Health[t.Kind] = &healthView{At: h.timeText(t.DisabledAt), Why: t.DisabledWhy, Held: t.Held}
		}
	}
	if k := r.URL.Query().Get("enabled"); k != "" && recon.CheckTargetKind(k) == nil {
		v.Enabled = k
		v.Replayed = r.URL.Query().Get("replayed")
	}
	return nil
}

// enableTarget serves POST /dashboard/settings/enable-target {kind,
// replay}: without confirm=yes the confirmation page (the target, why it was
// disabled, how many notifications wait and whether they will be sent);
// with it, the target is active again, its streak anew, and with replay=1
// what it missed is due at once, in its order; audited.
func (h *Handler) enableTarget(w http.ResponseWriter, r *http.Request, q *request) error {
	kind, replay := r.PostForm.Get("kind"), r.PostForm.Get("replay") == "1"
	if err := recon.CheckTargetKind(kind); err != nil {
		return err
	}
	list, err := h.Store.TargetHealths(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	var t *recon.TargetHealth
	for _, x := range list {
		if x.Kind == kind {
			t = x
		}
	}
	if t == nil {
		return recon.Errorf(recon.ENOTFOUND, "no %s target is configured", kind)
	}
	if !confirmed(r) {
		items := []confirmItem{{"c_target", q.lang.T("tk_"+kind) + " → " + t.URL, "c-target"}}
		if t.DisabledByRecon() {
			items = append(items, confirmItem{"eh_disabled_at", h.timeText(t.DisabledAt), "c-disabled-at"}, confirmItem{"eh_why", t.DisabledWhy, "c-why"})
		}
		button, intro := "eh_enable", "eh_enable_intro"
		if replay {
			items = append(items, confirmItem{"eh_waiting", strconv.FormatInt(t.Held, 10), "c-held"})
			button, intro = "eh_enable_replay", "eh_enable_replay_intro"
		}
		fields := [][2]string{{"kind", kind}}
		if replay {
			fields = append(fields, [2]string{"replay", "1"})
		}
		return h.renderConfirm(w, r, q, &confirmView{Title: button, Intro: intro, Items: items,
			Action: "/dashboard/settings/enable-target", Fields: fields, Button: button, Back: "/dashboard/settings#targets"})
	}
	changes := []recon.AuditChange{{Field: "active", Before: strconv.FormatBool(t.Active), After: "true"}}
	if replay {
		changes = append(changes, recon.AuditChange{Field: "replay", After: strconv.FormatInt(t.Held, 10)})
	}
	var n int64
	err = h.audit(r, q, recon.AuditTargetEnabled, kind, changes, func(ctx context.Context) error {
		var err error
		n, err = h.Store.EnableTarget(ctx, q.caller.Tenant, kind, replay, h.now())
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 && h.Kick != nil {
		h.Kick()
	}
	http.Redirect(w, r, "/dashboard/settings?enabled="+url.QueryEscape(kind)+"&replayed="+strconv.FormatInt(n, 10)+"#targets", http.StatusSeeOther)
	return nil
}

func (h *Handler) healthRoutes(mux *web.Mux) {
	mux.HandleLimited("POST /dashboard/settings/enable-target", h.form(recon.ActionManageNotifications, h.enableTarget), formLimit)
}

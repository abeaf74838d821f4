package dashboard

import (
	"net/http"
	"slices"

	"recon"
)

// The hub webhook of the settings screen (manage notifications: Admin and
// SuperAdmin): URL, active, the events it takes, and the secret's rotation.
// Every change goes through the hub's own rules and store
// (Hub.SaveWebhook, linking.Service.SaveWebhook: POST /v1/webhook's), so the
// form and the API give the same result for the same input.

// webhookForm is the webhook form as typed, shown again when refused.
type webhookForm struct {
	URL     string
	Active  bool
	Events  []string
	Ordered bool // ordered of POST /v1/webhook (i18n_ordered.go)
}

// Has reports whether the form checks the event ("*": all of them).
func (f webhookForm) Has(event string) bool { return slices.Contains(f.Events, event) }

// showWebhook fills the webhook part of the settings view.
func (h *Handler) showWebhook(r *http.Request, q *request, v *settingsView) error {
	if h.Hub == nil {
		return nil
	}
	v.HasHub, v.HubEvents = true, recon.HubEvents
	wh, err := h.Store.HubWebhook(r.Context(), q.caller.Tenant)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		if v.WebhookForm == nil {
			v.WebhookForm = &webhookForm{Active: true, Events: []string{"*"}}
		}
		return nil
	} else if err != nil {
		return err
	}
	v.Webhook, v.WebhookMasked, v.WebhookSigningMasked = wh, recon.MaskSecret(wh.Secret), recon.MaskSecret(wh.SigningSecret)
	v.WebhookWhsecMasked, v.WebhookPrevious = recon.MaskSecret(recon.WhsecSecret(wh.SigningSecret)), wh.PreviousUntilText(h.Location)
	if v.WebhookForm == nil {
		v.WebhookForm = &webhookForm{URL: wh.URL, Active: wh.Active, Events: wh.AllowEvents, Ordered: wh.Ordered}
	}
	return nil
}

// saveWebhook serves POST /dashboard/settings/hub-webhook: the form is the
// body {"webhook_url", "active", "allow_events", "ordered"} of POST /v1/webhook (every
// event unchecked: none, as []), saved by the hub's SaveWebhook.
func (h *Handler) saveWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	f := &webhookForm{URL: r.PostForm.Get("webhook_url"), Active: r.PostForm.Get("active") == "1", Events: r.PostForm["event"],
		Ordered: r.PostForm.Get("ordered") == "1"}
	ch := recon.HubWebhookChange{URL: &f.URL, Active: &f.Active, AllowEvents: f.Events, AllowEventsSet: true, Ordered: &f.Ordered}
	if ch.AllowEvents == nil {
		ch.AllowEvents = []string{}
	}
	before, _ := h.Store.HubWebhook(r.Context(), q.caller.Tenant) // nil: none yet
	wh, created, err := h.Hub.SaveWebhook(r.Context(), q.caller.Tenant, ch)
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditWebhookUpdate, "webhook", recon.AuditWebhookChanges(before, wh))
	}
	if recon.ErrorCode(err) == recon.EINVALID {
		return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{WebhookForm: f, WebhookErr: recon.ErrorMessage(err)})
	} else if err != nil {
		return err
	}
	if created { // a new webhook's secrets were made now: this answer shows them once
		return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSecret: wh.Secret, SecretWhat: "webhook_secret",
			NewSigning: wh.SigningSecret, SigningWhat: "webhook_signing"})
	}
	http.Redirect(w, r, "/dashboard/settings?saved=webhook#hub-webhook", http.StatusSeeOther)
	return nil
}

// rotateWebhookSecret serves POST /dashboard/settings/hub-webhook-secret: a
// new secret_key (recon.NewSecret, as the hub makes one), saved by the
// hub's SaveWebhook and shown this once.
func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	cur, err := h.Store.HubWebhook(r.Context(), q.caller.Tenant)
	if err != nil {
		return err // none yet: 404 (the form makes one, with a new secret)
	}
	secret := recon.NewSecretFrom(h.Rand)
	wh, _, err := h.Hub.SaveWebhook(r.Context(), q.caller.Tenant, recon.HubWebhookChange{Secret: &secret})
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditSecretRotate, "webhook", recon.AuditWebhookChanges(cur, wh))
	}
	if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSecret: wh.Secret, SecretWhat: "webhook_secret"})
}

// rotateWebhookSigning serves POST /dashboard/settings/hub-webhook-signing-secret:
// a new signing secret for the webhook (rotate_signing_secret of POST
// /v1/webhook), through a confirmation page, shown this once.
func (h *Handler) rotateWebhookSigning(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	cur, err := h.Store.HubWebhook(r.Context(), q.caller.Tenant)
	if err != nil {
		return err // none yet: 404 (the form makes one, with its signing secret)
	}
	if !confirmed(r) {
		return h.confirmSigningRotation(w, r, q, "/dashboard/settings/hub-webhook-signing-secret", recon.DeliveryWebhook, cur.URL, recon.MaskSecret(cur.SigningSecret), "#hub-webhook")
	}
	wh, _, err := h.Hub.SaveWebhook(r.Context(), q.caller.Tenant, recon.HubWebhookChange{RotateSigningSecret: true})
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditSecretRotate, "webhook", recon.AuditWebhookChanges(cur, wh))
	}
	if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSigning: wh.SigningSecret, SigningWhat: "webhook_signing"})
}

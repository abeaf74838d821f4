package gateway

import (
	"encoding/json"
	"net/http"

	"recon"
	"recon/ipn"
	"recon/web"
)

// getIPN serves GET /v1/ipn: the IPN settings with the secrets masked, or
// data null when none are set.
func (h *Handler) getIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	t, err := h.Store.DeliveryTarget(r.Context(), m.Tenant.ID(), recon.DeliveryIPN)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		web.WriteJSON(w, http.StatusOK, struct {
			Data any `json:"data"`
		}{nil})
		return nil
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data any `json:"data"`
	}{ipn.JSON(t, false, false, h.location())})
	return nil
}

// ipnInput is the body of PUT /v1/ipn.
type ipnInput struct {
	IPNURL              *string         `json:"ipn_url"`
	AuthType            *string         `json:"auth_type"`
	SecretKey           *string         `json:"secret_key"`
	Active              json.RawMessage `json:"active"`
	RotateSigningSecret *bool           `json:"rotate_signing_secret"`
	// NotificationTypes absent (or null) keeps what the target had
	// (docs/api-v2.md, Notifications).
	NotificationTypes *[]string `json:"notification_types"`
	// Ordered true delivers the notifications one at a time, in enqueue
	// order (docs/design.md, D7, "Ordered targets"); absent or null keeps it.
	Ordered *bool `json:"ordered"`
}

// putIPN serves PUT /v1/ipn: replaces the IPN settings through h.IPN
// (ipn.Service.Save, the rules). notification_types, when given, replaces
// the types the target receives; without it the target keeps its own.
func (h *Handler) putIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	var in ipnInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	c := ipn.Change{AuthType: recon.AuthSecretKey, Active: true, SecretKey: in.SecretKey, Ordered: in.Ordered}
	if in.IPNURL != nil {
		c.URL = *in.IPNURL
	}
	if in.AuthType != nil {
		c.AuthType = *in.AuthType
	}
	if in.Active != nil {
		switch string(in.Active) {
		case "1":
		case "0":
			c.Active = false
		default:
			return recon.FieldError("active", "active must be 0 or 1")
		}
	}
	if in.RotateSigningSecret != nil {
		c.RotateSigningSecret = *in.RotateSigningSecret
	}
	if in.NotificationTypes != nil {
		c.NotificationTypes = *in.NotificationTypes
		if c.NotificationTypes == nil { // []: refused by the service, not kept
			c.NotificationTypes = []string{}
		}
	}
	before, _ := h.Store.DeliveryTarget(r.Context(), m.Tenant.ID(), recon.DeliveryIPN) // nil: none yet
	saved, err := h.IPN.Save(r.Context(), m.Tenant, c)
	if err == nil {
		// The merchant's credentials act: the log names them as a client.
		err = h.Store.AppendAudit(r.Context(), &recon.AuditEntry{Tenant: m.Tenant, At: h.now(), Action: recon.AuditIPNUpdate, Object: "ipn",
			Changes: recon.AuditTargetChanges(before, saved.Target),
			Actor:   recon.AuditActor{ClientID: m.MerchantID, Via: recon.AuditViaAPI, IP: web.RemoteIP(r), UserAgent: r.UserAgent()}})
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data any `json:"data"`
	}{ipn.JSON(saved.Target, saved.NewSecret, saved.NewSigningSecret, h.location())})
	return nil
}

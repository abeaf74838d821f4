package hub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"recon"
	"recon/web"
)

// webhookJSON is the configuration of spec §2.6 (docs/hub.md, The webhook API),
// and the signing secret of X-Recon-Signature (Recon's own, like the IPN's
// signing_secret).
type webhookJSON struct {
	WebhookURL    string `json:"webhook_url"`
	AuthType      string `json:"auth_type"`
	SecretKey     string `json:"secret_key"`
	SigningSecret string `json:"signing_secret"`
	// SigningSecretWhsec is the signing secret in the whsec_ form of the
	// Standard Webhooks libraries, masked where signing_secret is; and
	// PreviousSigningSecretUntil when the secret a rotation replaced stops
	// signing, null when none does (docs/hub.md, The webhook API).
	SigningSecretWhsec         string   `json:"signing_secret_whsec"`
	PreviousSigningSecretUntil *string  `json:"previous_signing_secret_until"`
	RequestContentType         string   `json:"request_content_type"`
	Active                     int      `json:"active"`
	AllowEvents                []string `json:"allow_events"`
	// Ordered: deliveries one at a time, in enqueue order (docs/hub.md,
	// The webhook API; docs/design.md, D7, "Ordered targets").
	Ordered bool `json:"ordered"`
}

// toWebhookJSON renders the webhook with its secrets masked but those this
// answer set (showSecret, showSigning): a secret is shown in full only in
// the answer that made or rotated it (docs/hub.md, The webhook API).
func toWebhookJSON(w *recon.HubWebhook, showSecret, showSigning bool, loc *time.Location) webhookJSON {
	out := webhookJSON{WebhookURL: w.URL, AuthType: w.AuthType, SecretKey: w.Secret, SigningSecret: w.SigningSecret,
		SigningSecretWhsec: recon.WhsecSecret(w.SigningSecret), RequestContentType: w.ContentType, AllowEvents: w.AllowEvents, Ordered: w.Ordered}
	if until := w.PreviousUntilText(loc); until != "" {
		out.PreviousSigningSecretUntil = &until
	}
	if out.AllowEvents == nil {
		out.AllowEvents = []string{}
	}
	if w.Active {
		out.Active = 1
	}
	if !showSecret {
		out.SecretKey = recon.MaskSecret(w.Secret)
	}
	if !showSigning {
		out.SigningSecret = recon.MaskSecret(w.SigningSecret)
		out.SigningSecretWhsec = recon.MaskSecret(out.SigningSecretWhsec)
	}
	return out
}

// getWebhook serves GET /v1/webhook: the configuration with the secret
// masked, or data null when none is set.
func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	wh, err := h.Store.HubWebhook(r.Context(), c.Tenant)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		writeEnvelope(w, http.StatusOK, "", []string{"No webhook is configured"}, nil, nil)
		return nil
	}
	if err != nil {
		return err
	}
	writeEnvelope(w, http.StatusOK, "", []string{"Webhook configuration"}, nil, toWebhookJSON(wh, false, false, h.location()))
	return nil
}

// webhookInput is the body of POST /v1/webhook. RawMessage tells an absent
// field (nil) from an explicit null ("null").
type webhookInput struct {
	WebhookURL         json.RawMessage `json:"webhook_url"`
	AuthType           json.RawMessage `json:"auth_type"`
	SecretKey          json.RawMessage `json:"secret_key"`
	RequestContentType json.RawMessage `json:"request_content_type"`
	Active             json.RawMessage `json:"active"`
	AllowEvents        json.RawMessage `json:"allow_events"`
	// RotateSigningSecret true replaces the signing secret.
	RotateSigningSecret json.RawMessage `json:"rotate_signing_secret"`
	// Ordered is a JSON boolean (true or false; absent or null keeps it).
	Ordered json.RawMessage `json:"ordered"`
}

var jsonNull = []byte("null")

// optString decodes a string field: nil when absent or null.
func optString(name string, raw json.RawMessage) (*string, error) {
	if raw == nil || bytes.Equal(raw, jsonNull) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, recon.FieldError(name, "%s must be a string", name)
	}
	return &s, nil
}

// optBool decodes a boolean field: nil when absent or null; anything but
// true or false (a string "true", 1) is EINVALID naming the field.
func optBool(name string, raw json.RawMessage) (*bool, error) {
	if raw == nil || bytes.Equal(raw, jsonNull) {
		return nil, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, recon.FieldError(name, "%s must be true or false", name)
	}
	return &b, nil
}

// postWebhook serves POST /v1/webhook (spec §4.4; docs/hub.md, The webhook API;
// docs/design.md, D8): a partial upsert. A field absent (or null, except
// allow_events) keeps its stored value; allow_events null or [] subscribes to
// nothing. On create, webhook_url is required, auth_type defaults to
// SECRET_KEY, active to 1, allow_events to ["*"], a missing secret_key is
// generated (48 characters), and so is the signing secret, which
// rotate_signing_secret: true replaces; ordered (a boolean, false on
// create) delivers the events one at a time (docs/design.md, D7). The answer shows the whole
// configuration, each secret in full only when this request set it (given,
// made, rotated), masked otherwise: a POST that changes the URL does not
// re-show the secrets. Nothing is stored unless every field is valid.
func (h *Handler) postWebhook(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in webhookInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	var ch recon.HubWebhookChange
	var err error
	if ch.URL, err = optString("webhook_url", in.WebhookURL); err != nil {
		return err
	}
	if ch.AuthType, err = optString("auth_type", in.AuthType); err != nil {
		return err
	}
	if ch.Secret, err = optString("secret_key", in.SecretKey); err != nil {
		return err
	}
	if ch.ContentType, err = optString("request_content_type", in.RequestContentType); err != nil {
		return err
	}
	if in.Active != nil && !bytes.Equal(in.Active, jsonNull) {
		var active bool
		switch string(bytes.TrimSpace(in.Active)) {
		case "1", "true", `"1"`:
			active = true
		case "0", "false", `"0"`:
		default:
			return recon.FieldError("active", "active must be 1 or 0")
		}
		ch.Active = &active
	}
	if in.AllowEvents != nil {
		ch.AllowEventsSet = true
		if !bytes.Equal(in.AllowEvents, jsonNull) {
			if err := json.Unmarshal(in.AllowEvents, &ch.AllowEvents); err != nil {
				return recon.FieldError("allow_events", "allow_events must be an array of event names, [\"*\"], [] or null")
			}
		}
	}
	if in.RotateSigningSecret != nil && !bytes.Equal(in.RotateSigningSecret, jsonNull) {
		if err := json.Unmarshal(in.RotateSigningSecret, &ch.RotateSigningSecret); err != nil {
			return recon.FieldError("rotate_signing_secret", "rotate_signing_secret must be true or false")
		}
	}
	if ch.Ordered, err = optBool("ordered", in.Ordered); err != nil {
		return err
	}
	before, _ := h.Store.HubWebhook(r.Context(), c.Tenant) // nil: none yet
	wh, created, err := h.Links.SaveWebhook(r.Context(), c.Tenant, ch)
	if err == nil {
		action := recon.AuditWebhookUpdate
		if ch.Secret != nil || ch.RotateSigningSecret {
			action = recon.AuditSecretRotate
		}
		err = h.Store.AppendAudit(r.Context(), &recon.AuditEntry{Tenant: c.Tenant, At: h.now(), Action: action, Object: "webhook",
			Changes: recon.AuditWebhookChanges(before, wh), Actor: recon.AuditActorOf(c, recon.AuditViaAPI, web.RemoteIP(r), r.UserAgent())})
	}
	if err != nil {
		return err
	}
	msg := "Webhook updated"
	if created {
		msg = "Webhook created"
	}
	writeEnvelope(w, http.StatusOK, "", []string{msg}, nil,
		toWebhookJSON(wh, created || ch.Secret != nil, created || ch.RotateSigningSecret, h.location()))
	return nil
}

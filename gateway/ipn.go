package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"recon"
	"recon/web"
)

// ipnJSON is the merchant's IPN settings. A secret is shown in full only in
// the answer that created or rotated it, masked everywhere else.
type ipnJSON struct {
	IPNURL        string  `json:"ipn_url"`
	AuthType      string  `json:"auth_type"`
	SecretKey     *string `json:"secret_key"`
	SigningSecret string  `json:"signing_secret"`
	Active        int     `json:"active"`
}

// IPNJSON renders IPN settings as GET and PUT /v1/ipn (and recon ipn set
// --json) show them: secret_key (null with auth type NONE) and
// signing_secret masked unless showSecret or showSigning.
func IPNJSON(t *recon.Target, showSecret, showSigning bool) any {
	out := ipnJSON{IPNURL: t.URL, AuthType: t.AuthType, SigningSecret: t.SigningSecret}
	if t.Active {
		out.Active = 1
	}
	if t.AuthType == recon.AuthSecretKey {
		s := t.Secret
		if !showSecret {
			s = recon.MaskSecret(s)
		}
		out.SecretKey = &s
	}
	if !showSigning {
		out.SigningSecret = recon.MaskSecret(out.SigningSecret)
	}
	return out
}

// getIPN serves GET /v1/ipn: the IPN settings with the secrets masked, or
// data null when none are set.
func (h *Handler) getIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	t, err := h.Store.DeliveryTarget(r.Context(), m.Tenant().ID(), recon.DeliveryIPN)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		web.WriteJSON(w, http.StatusOK, struct {
			Data *ipnJSON `json:"data"`
		}{nil})
		return nil
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data any `json:"data"`
	}{IPNJSON(t, false, false)})
	return nil
}

// ipnInput is the body of PUT /v1/ipn.
type ipnInput struct {
	IPNURL              *string         `json:"ipn_url"`
	AuthType            *string         `json:"auth_type"`
	SecretKey           *string         `json:"secret_key"`
	Active              json.RawMessage `json:"active"`
	RotateSigningSecret *bool           `json:"rotate_signing_secret"`
}

// putIPN serves PUT /v1/ipn: replaces the IPN settings (see SaveIPN).
func (h *Handler) putIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	var in ipnInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	c := IPNChange{AuthType: recon.AuthSecretKey, Active: true, SecretKey: in.SecretKey}
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
	saved, err := h.SaveIPN(r.Context(), m.Tenant(), c)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data any `json:"data"`
	}{IPNJSON(saved.Target, saved.NewSecret, saved.NewSigningSecret)})
	return nil
}

// IPNChange is new IPN settings, from PUT /v1/ipn or recon ipn set.
type IPNChange struct {
	URL      string
	AuthType string // recon.AuthSecretKey or recon.AuthNone
	// SecretKey is the X-Secret-Key secret the merchant chose; nil keeps
	// the stored one, or makes one when there is none.
	SecretKey *string
	Active    bool
	// RotateSigningSecret replaces the signing secret of X-Recon-Signature.
	RotateSigningSecret bool
}

// IPNSaved is what SaveIPN stored, and which of its secrets are new: only
// those are shown in full.
type IPNSaved struct {
	Target                      *recon.Target
	NewSecret, NewSigningSecret bool
}

// SaveIPN checks c and replaces the company's IPN settings with it: the
// one implementation of the rules, for the API and the CLI. The URL is
// required and checked (length, then h.CheckURL); auth_type is SECRET_KEY or
// NONE; a secret_key has 1 to 500 characters and only goes with
// SECRET_KEY. With SECRET_KEY and no secret_key the stored secret is kept,
// or a new one made (recon.NewSecret) when there is none. The signing secret
// is kept, made for a new target, or replaced when c.RotateSigningSecret.
func (h *Handler) SaveIPN(ctx context.Context, tenant recon.TenantID, c IPNChange) (*IPNSaved, error) {
	if c.URL == "" {
		return nil, recon.FieldError("ipn_url", "ipn_url is required")
	}
	if err := recon.CheckTargetURL("ipn_url", c.URL, h.CheckURL, h.Blocked); err != nil {
		return nil, err
	}
	if c.AuthType != recon.AuthSecretKey && c.AuthType != recon.AuthNone {
		return nil, recon.FieldError("auth_type", "auth_type must be SECRET_KEY or NONE")
	}
	if c.SecretKey != nil {
		if *c.SecretKey == "" || utf8.RuneCountInString(*c.SecretKey) > recon.MaxSecretLen {
			return nil, recon.FieldError("secret_key", "secret_key must be 1 to %d characters", recon.MaxSecretLen)
		}
		if c.AuthType == recon.AuthNone {
			return nil, recon.FieldError("secret_key", "secret_key is not used with auth_type NONE")
		}
	}
	old, err := h.Store.DeliveryTarget(ctx, tenant.ID(), recon.DeliveryIPN)
	if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
		return nil, err
	}
	saved := &IPNSaved{Target: &recon.Target{URL: c.URL, AuthType: c.AuthType, Active: c.Active}}
	t := saved.Target
	if c.AuthType == recon.AuthSecretKey && c.SecretKey != nil {
		t.Secret = *c.SecretKey
	}
	if c.RotateSigningSecret {
		t.SigningSecret = recon.NewSecretFrom(h.random())
	}
	// Secrets left empty are kept or made by the store, under the row's
	// lock (two saves at once agree); t comes back with what is stored.
	if err := h.Store.SetIPN(ctx, tenant, t); err != nil {
		return nil, err
	}
	// A secret is shown in full when this save set it: given, rotated, or
	// made because there was none (what it replaced, read before, differs).
	saved.NewSecret = c.AuthType == recon.AuthSecretKey &&
		(c.SecretKey != nil || old == nil || old.AuthType != recon.AuthSecretKey || old.Secret != t.Secret)
	saved.NewSigningSecret = c.RotateSigningSecret || old == nil || old.SigningSecret != t.SigningSecret
	return saved, nil
}

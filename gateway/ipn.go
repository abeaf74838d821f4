package gateway

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"unicode/utf8"

	"recon"
	"recon/web"
)

// IPN settings limits (spec §8, decisions.md §6: as the hub webhook).
const (
	maxIPNURLLen    = 2000
	maxSecretLen    = 500
	generatedSecret = 48
)

// ipnJSON is the merchant's IPN settings.
type ipnJSON struct {
	IPNURL    string  `json:"ipn_url"`
	AuthType  string  `json:"auth_type"`
	SecretKey *string `json:"secret_key"`
	Active    int     `json:"active"`
}

func toIPNJSON(t *recon.Target, mask bool) ipnJSON {
	out := ipnJSON{IPNURL: t.URL, AuthType: t.AuthType}
	if t.Active {
		out.Active = 1
	}
	if t.AuthType == recon.AuthSecretKey {
		s := t.Secret
		if mask {
			s = maskSecret(s)
		}
		out.SecretKey = &s
	}
	return out
}

// maskSecret shows three asterisks and the last 4 characters (only the
// asterisks for a secret of 8 characters or fewer, which 4 would half reveal).
func maskSecret(s string) string {
	if utf8.RuneCountInString(s) <= 8 {
		return "***"
	}
	r := []rune(s)
	return "***" + string(r[len(r)-4:])
}

// getIPN serves GET /v1/ipn: the IPN settings with the secret masked, or
// data null when none are set.
func (h *Handler) getIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	t, err := h.Store.DeliveryTarget(r.Context(), m.CompanyID, recon.DeliveryIPN)
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
		Data ipnJSON `json:"data"`
	}{toIPNJSON(t, true)})
	return nil
}

// ipnInput is the body of PUT /v1/ipn.
type ipnInput struct {
	IPNURL    *string         `json:"ipn_url"`
	AuthType  *string         `json:"auth_type"`
	SecretKey *string         `json:"secret_key"`
	Active    json.RawMessage `json:"active"`
}

// putIPN serves PUT /v1/ipn: replaces the IPN settings. ipn_url is required;
// auth_type defaults to SECRET_KEY, active to 1. With SECRET_KEY and no
// secret_key, the stored secret is kept, or 48 random characters are made
// when there is none. The answer shows the secret in full, once.
func (h *Handler) putIPN(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	var in ipnInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.IPNURL == nil || *in.IPNURL == "" {
		return recon.FieldError("ipn_url", "ipn_url is required")
	}
	if err := h.checkIPNURL(*in.IPNURL); err != nil {
		return err
	}
	t := &recon.Target{URL: *in.IPNURL, AuthType: recon.AuthSecretKey, Active: true}
	if in.AuthType != nil {
		t.AuthType = *in.AuthType
		if t.AuthType != recon.AuthSecretKey && t.AuthType != recon.AuthNone {
			return recon.FieldError("auth_type", "auth_type must be SECRET_KEY or NONE")
		}
	}
	if in.Active != nil {
		switch string(in.Active) {
		case "1":
		case "0":
			t.Active = false
		default:
			return recon.FieldError("active", "active must be 0 or 1")
		}
	}
	if in.SecretKey != nil {
		if *in.SecretKey == "" || utf8.RuneCountInString(*in.SecretKey) > maxSecretLen {
			return recon.FieldError("secret_key", "secret_key must be 1 to %d characters", maxSecretLen)
		}
		if t.AuthType == recon.AuthNone {
			return recon.FieldError("secret_key", "secret_key is not used with auth_type NONE")
		}
	}
	ctx := r.Context()
	if t.AuthType == recon.AuthSecretKey {
		switch {
		case in.SecretKey != nil:
			t.Secret = *in.SecretKey
		default:
			old, err := h.Store.DeliveryTarget(ctx, m.CompanyID, recon.DeliveryIPN)
			switch {
			case err == nil && old.Secret != "":
				t.Secret = old.Secret
			case err == nil || recon.ErrorCode(err) == recon.ENOTFOUND:
				t.Secret = randomSecret(generatedSecret)
			default:
				return err
			}
		}
	}
	if err := h.Store.SetIPN(ctx, m.CompanyID, t); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data ipnJSON `json:"data"`
	}{toIPNJSON(t, false)})
	return nil
}

// checkIPNURL applies the save-time URL rules: length, then h.CheckURL (or,
// without one, any absolute http(s) URL). Its error carries the reason
// INVALID_URL or BLOCKED_ADDRESS.
func (h *Handler) checkIPNURL(raw string) error {
	invalid := func(msg string) error {
		return &reasonError{err: recon.FieldError("ipn_url", "%s", msg), reason: "INVALID_URL"}
	}
	if len(raw) > maxIPNURLLen {
		return invalid("ipn_url must be at most 2000 characters")
	}
	if h.CheckURL == nil {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("ipn_url must be an absolute http or https URL")
		}
		return nil
	}
	err := h.CheckURL(raw)
	if err == nil {
		return nil
	}
	if h.Blocked != nil && h.Blocked(err) {
		return &reasonError{err: recon.FieldError("ipn_url", "ipn_url points to an internal address, which is blocked: %s", urlProblem(err)), reason: "BLOCKED_ADDRESS"}
	}
	return invalid("ipn_url is not usable: " + urlProblem(err))
}

// urlProblem is the text of a URL check's error: the message of an
// *recon.Error, or the error's own text (it is about the client's URL).
func urlProblem(err error) string {
	var re *recon.Error
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// randomSecret returns n random letters and digits.
func randomSecret(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand does not fail
		}
		// 248 = 4*62: rejection keeps the letters uniform.
		if buf[0] < 248 {
			b[i] = alphabet[buf[0]%62]
			i++
		}
	}
	return string(b)
}

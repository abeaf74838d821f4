// Package ipn is the service of a merchant's IPN settings (docs/api.md,
// Payment gateway, "IPN settings"): the one place their rules and secrets are
// made, called by PUT /v1/ipn (gateway), the dashboard's settings page and
// the CLI's `recon ipn set` and `recon hub ipn set`. It speaks no HTTP; its
// callers decode their input into a Change and render what it saved
// (ARCHITECTURE.md, "The dependency rule": services).
package ipn

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"recon"
)

// Store is the storage the service needs: the target of one kind of
// notification (`recon hub ipn set` gives it the hub IPN's).
type Store interface {
	// recon.DeliveryStore's:
	DeliveryTarget(ctx context.Context, companyID int64, kind string) (*recon.Target, error)
	// recon.MerchantStore's:
	SetIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error
}

// Service saves IPN settings.
type Service struct {
	Store Store
	// CheckURL checks an IPN URL when it is saved (scheme, SSRF ranges:
	// delivery.CheckURL with the server's sandbox and allow-private
	// settings). nil accepts any absolute http(s) URL.
	CheckURL func(raw string) error
	// Blocked reports whether a CheckURL error means "internal address
	// blocked" rather than "invalid URL". May be nil.
	Blocked func(err error) bool
	// Rand is the randomness of rotated signing secrets (default
	// crypto/rand).
	Rand io.Reader
}

// Change is new IPN settings, from PUT /v1/ipn, the dashboard or recon ipn set.
type Change struct {
	URL      string
	AuthType string // recon.AuthSecretKey or recon.AuthNone
	// SecretKey is the X-Secret-Key secret the merchant chose; nil keeps
	// the stored one, or makes one when there is none.
	SecretKey *string
	Active    bool
	// RotateSigningSecret replaces the signing secret of X-Recon-Signature.
	RotateSigningSecret bool
	// NotificationTypes are the notification types the target receives
	// (recon.ParseIPNTypes checks them). nil keeps what the target had:
	// recon.DefaultIPNTypes for a target saved before API v2 or never given
	// any (docs/api-v2.md, Notifications).
	NotificationTypes []string
	// Ordered sets recon.Target.Ordered: one delivery at a time, in
	// enqueue order (docs/design.md, D7, "Ordered targets"). nil keeps what
	// the target had (false for a new one).
	Ordered *bool
}

// Saved is what Save stored, and which of its secrets are new: only those
// are shown in full.
type Saved struct {
	Target                      *recon.Target
	NewSecret, NewSigningSecret bool
}

// Save checks c and replaces the company's IPN settings with it. The URL is
// required and checked (length, then s.CheckURL); auth_type is SECRET_KEY or
// NONE; a secret_key has 1 to 500 characters and only goes with
// SECRET_KEY. With SECRET_KEY and no secret_key the stored secret is kept,
// or a new one made (recon.NewSecret) when there is none. The signing secret
// is kept, made for a new target, or replaced when c.RotateSigningSecret.
// Notification types, when given, replace those in the target's settings
// JSON, whose other keys are kept; when not given the stored settings stay as
// they are (the store keeps them under the row's lock).
func (s *Service) Save(ctx context.Context, tenant recon.TenantID, c Change) (*Saved, error) {
	if c.URL == "" {
		return nil, recon.FieldError("ipn_url", "ipn_url is required")
	}
	if err := recon.CheckTargetURL("ipn_url", c.URL, s.CheckURL, s.Blocked); err != nil {
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
	var types []string
	if c.NotificationTypes != nil {
		var err error
		if types, err = recon.ParseIPNTypes(c.NotificationTypes); err != nil {
			return nil, err
		}
	}
	old, err := s.Store.DeliveryTarget(ctx, tenant.ID(), recon.DeliveryIPN)
	if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
		return nil, err
	}
	saved := &Saved{Target: &recon.Target{URL: c.URL, AuthType: c.AuthType, Active: c.Active}}
	t := saved.Target
	if c.Ordered != nil {
		t.Ordered = *c.Ordered
	} else if old != nil {
		t.Ordered = old.Ordered
	}
	if c.AuthType == recon.AuthSecretKey && c.SecretKey != nil {
		t.Secret = *c.SecretKey
	}
	if c.RotateSigningSecret {
		t.SigningSecret = recon.NewSecretFrom(s.random())
	}
	if types != nil {
		stored := "{}"
		if old != nil && old.Settings != "" {
			stored = old.Settings
		}
		if t.Settings, err = withTypes(stored, types); err != nil {
			return nil, err
		}
	}
	// Secrets left empty are kept or made by the store, under the row's
	// lock (two saves at once agree); t comes back with what is stored.
	if err := s.Store.SetIPN(ctx, tenant, t); err != nil {
		return nil, err
	}
	// A secret is shown in full when this save set it: given, rotated, or
	// made because there was none (what it replaced, read before, differs).
	saved.NewSecret = c.AuthType == recon.AuthSecretKey &&
		(c.SecretKey != nil || old == nil || old.AuthType != recon.AuthSecretKey || old.Secret != t.Secret)
	saved.NewSigningSecret = c.RotateSigningSecret || old == nil || old.SigningSecret != t.SigningSecret
	return saved, nil
}

// withTypes returns the settings JSON stored with its notification_types
// replaced by types, every other key kept as it was.
func withTypes(stored string, types []string) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stored), &m); err != nil {
		return "", fmt.Errorf("ipn: the stored IPN target settings are not a JSON object: %w", err)
	}
	if m == nil { // "null"
		m = map[string]json.RawMessage{}
	}
	b, err := json.Marshal(types)
	if err != nil {
		return "", err
	}
	m["notification_types"] = b
	out, err := json.Marshal(m)
	return string(out), err
}

func (s *Service) random() io.Reader {
	if s.Rand == nil {
		return rand.Reader
	}
	return s.Rand
}

// settingsJSON is the merchant's IPN settings. A secret is shown in full
// only in the answer that created or rotated it, masked everywhere else.
type settingsJSON struct {
	IPNURL        string  `json:"ipn_url"`
	AuthType      string  `json:"auth_type"`
	SecretKey     *string `json:"secret_key"`
	SigningSecret string  `json:"signing_secret"`
	// SigningSecretWhsec is the signing secret in the whsec_ form of the
	// Standard Webhooks libraries, masked where signing_secret is
	// (docs/design.md, D7, "Standard Webhooks.").
	SigningSecretWhsec string `json:"signing_secret_whsec"`
	// PreviousSigningSecretUntil is when the signing secret a rotation
	// replaced stops signing (YYYY-MM-DD HH:MM:SS, business time zone);
	// null when none signs any more.
	PreviousSigningSecretUntil *string `json:"previous_signing_secret_until"`
	Active                     int     `json:"active"`
	// NotificationTypes are the types the target chose; left out while it
	// never chose (it receives recon.DefaultIPNTypes), so a merchant who
	// never used API v2 reads the v1 answer unchanged (docs/api-v2.md,
	// Notifications).
	NotificationTypes []string `json:"notification_types,omitempty"`
	// Ordered: one delivery at a time, in enqueue order; left out while
	// false, so that the v1 answer of a merchant who never set it is
	// unchanged (docs/design.md, D7, "Ordered targets").
	Ordered bool `json:"ordered,omitempty"`
}

// JSON renders IPN settings as GET and PUT /v1/ipn (and recon ipn set
// --json) show them: secret_key (null with auth type NONE) and
// signing_secret (and its whsec_ form) masked unless showSecret or
// showSigning; previous_signing_secret_until in loc; notification_types
// the types the target chose (left out while it never chose, and when its
// settings cannot be read, which no save makes).
func JSON(t *recon.Target, showSecret, showSigning bool, loc *time.Location) any {
	out := targetJSON(t, showSecret, showSigning, loc)
	if st, err := recon.ParseIPNSettings(t.Settings); err == nil {
		out.NotificationTypes = st.NotificationTypes
	}
	return out
}

// TargetJSON renders a notification target that has no notification types
// (the hub IPN: `recon hub ipn set --json`) as JSON does, without
// notification_types.
func TargetJSON(t *recon.Target, showSecret, showSigning bool, loc *time.Location) any {
	return targetJSON(t, showSecret, showSigning, loc)
}

func targetJSON(t *recon.Target, showSecret, showSigning bool, loc *time.Location) settingsJSON {
	out := settingsJSON{IPNURL: t.URL, AuthType: t.AuthType, SigningSecret: t.SigningSecret, Ordered: t.Ordered,
		SigningSecretWhsec: recon.WhsecSecret(t.SigningSecret), PreviousSigningSecretUntil: nullable(t.PreviousUntilText(loc))}
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
		out.SigningSecretWhsec = recon.MaskSecret(out.SigningSecretWhsec)
	}
	return out
}

// nullable is s, or nil (JSON null) when it is "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

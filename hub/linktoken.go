package hub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"recon"
	"recon/web"
)

// linkTokenInput is the body of POST /v1/link-token/create.
type linkTokenInput struct {
	CompanyXID            *string         `json:"company_xid"`
	Purpose               *string         `json:"purpose"`
	CompletionRedirectURI *string         `json:"completion_redirect_uri"`
	IsMobileApp           json.RawMessage `json:"is_mobile_app"`
	Language              *string         `json:"language"`
	BankAccountXID        *string         `json:"bank_account_xid"`
}

// createLinkToken serves POST /v1/link-token/create (docs/design.md, D8) →
// 201 {xid, link_token, hosted_link_url, expires_at}, and
// LINK_TOKEN_CREATED in the same transaction.
func (h *Handler) createLinkToken(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in linkTokenInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.CompanyXID == nil || *in.CompanyXID == "" {
		return recon.FieldError("company_xid", "company_xid is required")
	}
	if in.Purpose == nil || *in.Purpose == "" {
		return recon.FieldError("purpose", "purpose is required: %s or %s", recon.LinkPurposeLink, recon.LinkPurposeUnlink)
	}
	t := &recon.LinkToken{Tenant: c.Tenant, CustomerXID: *in.CompanyXID, Purpose: *in.Purpose, Language: "vi",
		Sandbox: !c.Livemode() || h.Sandbox}
	if in.CompletionRedirectURI != nil {
		t.RedirectURI = *in.CompletionRedirectURI
	}
	if in.Language != nil {
		t.Language = *in.Language
	}
	if in.BankAccountXID != nil {
		t.BankAccountXID = *in.BankAccountXID
	}
	if in.IsMobileApp != nil && !bytes.Equal(in.IsMobileApp, jsonNull) {
		switch string(bytes.TrimSpace(in.IsMobileApp)) {
		case "1", "true", `"1"`:
			t.IsMobileApp = true
		case "0", "false", `"0"`:
		default:
			return recon.FieldError("is_mobile_app", "is_mobile_app must be 0 or 1")
		}
	}
	url, err := h.Links.CreateLinkToken(r.Context(), t)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, struct {
		XID           string `json:"xid"`
		LinkToken     string `json:"link_token"`
		HostedLinkURL string `json:"hosted_link_url"`
		ExpiresAt     string `json:"expires_at"`
	}{t.XID, t.Token, url, h.localTime(t.ExpiresAt)})
	return nil
}

// linkTokenXIDInput is the body of get and revoke.
type linkTokenXIDInput struct {
	LinkTokenXID *string `json:"link_token_xid"`
}

func readLinkTokenXID(r *http.Request) (string, error) {
	var in linkTokenXIDInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return "", err
	}
	if in.LinkTokenXID == nil || *in.LinkTokenXID == "" {
		return "", recon.FieldError("link_token_xid", "link_token_xid is required")
	}
	if !recon.ValidXID(*in.LinkTokenXID) {
		return "", recon.Errorf(recon.ENOTFOUND, "link token %s not found", *in.LinkTokenXID)
	}
	return *in.LinkTokenXID, nil
}

type linkSessionJSON struct {
	XID            string  `json:"xid"`
	Status         string  `json:"status"`
	State          string  `json:"state"`
	BrandName      string  `json:"brand_name"`
	AccountType    string  `json:"account_type"`
	AccountNumber  string  `json:"account_number"`
	HolderName     string  `json:"account_holder_name"`
	BankAccountXID *string `json:"bank_account_xid"`
	Reason         *string `json:"reason"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
	EndedAt        *string `json:"ended_at"`
}

type linkTokenJSON struct {
	XID                   string            `json:"xid"`
	CompanyXID            string            `json:"company_xid"`
	Purpose               string            `json:"purpose"`
	Status                string            `json:"status"`
	BankAccountXID        *string           `json:"bank_account_xid"`
	CompletionRedirectURI *string           `json:"completion_redirect_uri"`
	IsMobileApp           int               `json:"is_mobile_app"`
	Language              string            `json:"language"`
	Sandbox               bool              `json:"sandbox"`
	CreatedAt             string            `json:"created_at"`
	ExpiresAt             string            `json:"expires_at"`
	EndedAt               *string           `json:"ended_at"`
	Sessions              []linkSessionJSON `json:"sessions"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t interface{ IsZero() bool }, s string) *string {
	if t.IsZero() {
		return nil
	}
	return &s
}

// LinkTokenJSON is a link token and its sessions as link-token/get shows
// them (also for the CLI), their times in loc.
func LinkTokenJSON(t *recon.LinkToken, sessions []*recon.LinkSession, loc *time.Location) linkTokenJSON {
	out := linkTokenJSON{XID: t.XID, CompanyXID: t.CustomerXID, Purpose: t.Purpose, Status: t.Status,
		BankAccountXID: strOrNil(t.BankAccountXID), CompletionRedirectURI: strOrNil(t.RedirectURI), Language: t.Language,
		Sandbox: t.Sandbox, CreatedAt: localTime(t.CreatedAt, loc), ExpiresAt: localTime(t.ExpiresAt, loc),
		EndedAt: optTime(t.EndedAt, localTime(t.EndedAt, loc)), Sessions: []linkSessionJSON{}}
	if t.IsMobileApp {
		out.IsMobileApp = 1
	}
	for _, s := range sessions {
		out.Sessions = append(out.Sessions, linkSessionJSON{XID: s.XID, Status: s.Status, State: s.State,
			BrandName: bankBrand(s.BankCode), AccountType: s.AccountType, AccountNumber: s.AccountNumber, HolderName: s.HolderName,
			BankAccountXID: strOrNil(s.BankAccountXID), Reason: strOrNil(s.Reason), CreatedAt: localTime(s.CreatedAt, loc),
			UpdatedAt: localTime(s.LastStepAt, loc), EndedAt: optTime(s.EndedAt, localTime(s.EndedAt, loc))})
	}
	return out
}

// getLinkToken serves POST /v1/link-token/get {link_token_xid}: the token,
// its status and its sessions. The token itself and the page's URL are shown
// only by create (only their hash is stored).
func (h *Handler) getLinkToken(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	xid, err := readLinkTokenXID(r)
	if err != nil {
		return err
	}
	t, sessions, err := h.Store.LinkToken(r.Context(), c.Tenant, xid)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: LinkTokenJSON(t, sessions, h.location())})
	return nil
}

// revokeLinkToken serves POST /v1/link-token/revoke {link_token_xid}: at
// once and for good; the page open with it stops at its next request.
// Revoking a token that is not active is 404.
func (h *Handler) revokeLinkToken(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	xid, err := readLinkTokenXID(r)
	if err != nil {
		return err
	}
	if _, err := h.Store.RevokeLinkToken(r.Context(), c.Tenant, xid); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Code: http.StatusOK, Message: "Link token revoked", Data: nil})
	return nil
}

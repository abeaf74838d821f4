package dashboard

import (
	"context"
	"net/http"
	"strings"

	"recon"
)

// The branding card of the settings screen
// (docs/dashboard.md, Settings, bank accounts and sandbox): the name, logo
// and colours of the hosted pages (the gateway's checkout page, the hub's
// link page), recon.HubBranding, which POST /v1/merchant-config sets too.
// Branding is the tenant's, as the hub stores it: live and test data each
// have their own. The form goes through a confirmation page;
// recon.HubBranding.Validate, the hub's rules, refuses before the
// confirmation and again in the store, which writes nothing on a refusal.

// brandForm is the branding's form, as stored or as typed when refused.
type brandForm struct {
	DisplayName, LogoURL, PrimaryColor, SecondaryColor string
}

func brandFormOf(b *recon.HubBranding) *brandForm {
	return &brandForm{b.DisplayName, b.LogoURL, b.PrimaryColor, b.SecondaryColor}
}

func (f *brandForm) branding() *recon.HubBranding {
	return &recon.HubBranding{DisplayName: f.DisplayName, LogoURL: f.LogoURL, PrimaryColor: f.PrimaryColor, SecondaryColor: f.SecondaryColor}
}

// brandFields are the form's fields, as the audit entry names them.
var brandFields = []string{"display_name", "logo_url", "primary_color", "secondary_color"}

func (f *brandForm) values() []string {
	return []string{f.DisplayName, f.LogoURL, f.PrimaryColor, f.SecondaryColor}
}

// showBranding fills the card from the store, unless v holds the form as typed.
func (h *Handler) showBranding(r *http.Request, q *request, v *settingsView) error {
	if v.Brand != nil {
		return nil
	}
	b, err := h.Store.HubBranding(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	v.Brand = brandFormOf(b)
	v.BrandSaved = r.URL.Query().Get("saved") == "branding"
	return nil
}

// saveBranding serves POST /dashboard/settings/branding: without confirm=yes
// the confirmation page (or the refusal), with it the save.
func (h *Handler) saveBranding(w http.ResponseWriter, r *http.Request, q *request) error {
	get := func(name string) string { return strings.TrimSpace(r.PostForm.Get(name)) }
	f := &brandForm{get("display_name"), get("logo_url"), get("primary_color"), get("secondary_color")}
	b := f.branding()
	refused := func(err error) error {
		if recon.ErrorCode(err) != recon.EINVALID {
			return err
		}
		return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{Brand: f, BrandErr: q.lang.ErrorText(err)})
	}
	if err := b.Validate(); err != nil {
		return refused(err)
	}
	before, err := h.Store.HubBranding(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	if !confirmed(r) {
		v := &confirmView{Title: "c_branding", Intro: "c_branding_intro", Action: "/dashboard/settings/branding", Button: "br_save",
			Back: "/dashboard/settings#branding"}
		for i, name := range brandFields {
			shown := f.values()[i]
			if shown == "" {
				shown = q.lang.T("br_none")
			}
			v.Items = append(v.Items, confirmItem{"br_" + name, shown, "c-" + name})
			v.Fields = append(v.Fields, [2]string{name, f.values()[i]})
		}
		return h.renderConfirm(w, r, q, v)
	}
	var changes []recon.AuditChange
	was := brandFormOf(before).values()
	for i, name := range brandFields {
		if was[i] != f.values()[i] {
			changes = append(changes, recon.AuditChange{Field: name, Before: was[i], After: f.values()[i]})
		}
	}
	err = h.audit(r, q, recon.AuditBrandingUpdate, "", changes, func(ctx context.Context) error {
		return h.Store.SetHubBranding(ctx, q.caller.Tenant, b) // validates again: nothing written on a refusal
	})
	if err != nil {
		return refused(err)
	}
	http.Redirect(w, r, "/dashboard/settings?saved=branding#branding", http.StatusSeeOther)
	return nil
}

package dashboard

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"recon"
	"recon/ipn"
	"recon/web"
)

// The settings screen (Admin and SuperAdmin, as GET /api/v1/company):
// payment-code formats with the memo tester, the notification targets with
// a test notification and the rotation of the IPN's secret and signing
// secret, the merchant credentials, users and roles. Every change is a form
// of its own; a new secret is shown once, in the answer to the form that
// made it: the X-Secret-Key secret and the signing secret (the key of
// X-Recon-Signature, which the merchant's server needs to verify a
// notification) alike.

// formatRow is one row of the formats form, as typed.
type formatRow struct {
	Prefix, SuffixFrom, SuffixTo, CharacterType string
	Active                                      bool
}

type targetView struct {
	Kind          string
	Target        *recon.Target
	Masked        string
	MaskedSigning string
	// MaskedWhsec is the signing secret's whsec_ form, masked;
	// PreviousUntil when the secret a rotation replaced stops signing, ""
	// when none does (docs/design.md, D7, "Standard Webhooks.").
	MaskedWhsec, PreviousUntil string
}

type settingsView struct {
	Formats      []formatRow
	FormatsErr   string
	Saved        bool // formats saved
	CanEdit      bool // formats editable: live mode
	CanRotateIPN bool
	Memo         string
	Explanation  *recon.CodeExplanation
	MemoErr      string
	Targets      []targetView
	// Health: the targets Recon disabled, by kind; Enabled, the kind just
	// re-enabled, Replayed how many it replayed (health.go).
	Health            map[string]*healthView
	Enabled, Replayed string
	TestSent          string // kind of the test notification just enqueued
	TargetErr         string
	IPNForm           *ipnForm // the IPN target's form, as stored or as typed when refused
	IPNTypes          []ipnTypeView
	IPNErr            string
	IPNSaved          bool
	MerchantID        string
	NewSecret         string // a secret just made: shown this once
	SecretWhat        string // message key of what NewSecret is
	NewSigning        string // a signing secret just made or rotated: shown this once
	SigningWhat       string // message key of what NewSigning is
	NewSigningWhsec   string // NewSigning's whsec_ form (renderSettings)
	NewPrevious       string // when the signing secret NewSigning replaced stops signing, "" when none does (renderSettings)
	Users             []*recon.User
	UsersPager        pager
	UserErr           string
	Roles             []recon.Role
	Permissions       []string
	CharTypes         []string

	// OAuth clients (client.go): shown when the server can register them.
	HasClients   bool
	Clients      []*recon.Client
	ClientsPager pager
	ClientForm   clientForm
	ClientErr    string
	NewClientID  string // the client just made (its secret is NewSecret)
	Revoked      bool
	Scopes       []string
	// The hub webhook (webhook.go): shown with the hub.
	HasHub        bool
	Webhook       *recon.HubWebhook
	WebhookMasked string
	// WebhookSigningMasked is the webhook's signing secret, masked;
	// WebhookWhsecMasked its whsec_ form, masked; WebhookPrevious when the
	// one a rotation replaced stops signing ("" when none does).
	WebhookSigningMasked                string
	WebhookWhsecMasked, WebhookPrevious string
	WebhookForm                         *webhookForm
	WebhookErr                          string
	WebhookSaved                        bool
	HubEvents                           []string
	// The refund approval threshold (refunds.go): shown with refunds.
	HasRefunds     bool
	Threshold      int64
	ThresholdForm  *string // as typed when refused
	ThresholdErr   string
	ThresholdSaved bool
	// The seller (seller.go).
	Seller         *sellerForm
	SellerErr      string
	SellerErrField string
	SellerSaved    bool
	// The branding of the hosted pages (brand.go).
	Brand      *brandForm    // as stored or as typed when refused
	BrandErr   template.HTML // the refusal, in the page's language (lang.ErrorText)
	BrandSaved bool
}

// settings serves GET /dashboard/settings.
func (h *Handler) settings(w http.ResponseWriter, r *http.Request, q *request) error {
	query := r.URL.Query()
	v := &settingsView{Saved: query.Get("saved") == "formats", WebhookSaved: query.Get("saved") == "webhook", Revoked: query.Get("revoked") == "1"}
	if k := query.Get("sent"); slices.Contains(recon.DeliveryKinds, k) {
		v.TestSent = k
	}
	return h.renderSettings(w, r, q, http.StatusOK, v)
}

// renderSettings fills what v does not hold yet from the store and renders
// the page.
func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, q *request, status int, v *settingsView) error {
	ctx := r.Context()
	v.CanEdit, v.CanRotateIPN = q.caller.Livemode(), h.IPN != nil
	v.Roles, v.Permissions = recon.GrantableRoles(q.caller.User), recon.Permissions
	v.CharTypes = []string{string(recon.NumberOnly), string(recon.NumberAndLetter)}
	if v.Formats == nil {
		for _, f := range q.company.Config.PaymentCodeFormats {
			v.Formats = append(v.Formats, formatRow{f.Prefix, strconv.Itoa(f.SuffixFrom), strconv.Itoa(f.SuffixTo), string(f.CharacterType), f.IsActive})
		}
	}
	if v.CanEdit && len(v.Formats) < recon.MaxPaymentCodeFormats {
		v.Formats = append(v.Formats, formatRow{CharacterType: string(recon.NumberOnly), Active: true}) // a blank row adds one
	}
	for _, kind := range []string{recon.DeliveryIPN, recon.DeliveryWebhook, recon.DeliveryHubIPN} {
		t, err := h.Store.DeliveryTarget(ctx, q.caller.Tenant.ID(), kind)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		masked := ""
		if t.Secret != "" {
			masked = recon.MaskSecret(t.Secret)
		}
		v.Targets = append(v.Targets, targetView{kind, t, masked, recon.MaskSecret(t.SigningSecret),
			recon.MaskSecret(recon.WhsecSecret(t.SigningSecret)), t.PreviousUntilText(h.Location)})
		if v.NewSigning != "" && v.NewSigning == t.SigningSecret {
			v.NewSigningWhsec, v.NewPrevious = recon.WhsecSecret(t.SigningSecret), t.PreviousUntilText(h.Location)
		}
		if kind == recon.DeliveryIPN && v.IPNForm == nil {
			st, err := recon.ParseIPNSettings(t.Settings)
			if err != nil {
				return err
			}
			v.IPNForm = &ipnForm{URL: t.URL, AuthType: t.AuthType, Active: t.Active, Types: st.Types(), Ordered: t.Ordered}
		}
	}
	if err := h.fillHealth(r, q, v); err != nil { // endpoint health (health.go)
		return err
	}
	if v.IPNForm == nil {
		v.IPNForm = &ipnForm{AuthType: recon.AuthSecretKey, Active: true, Types: recon.DefaultIPNTypes}
	}
	v.IPNTypes = ipnTypeViews(v.IPNForm.Types)
	v.IPNSaved = r.URL.Query().Get("saved") == "ipn"
	m, err := h.Store.MerchantOf(ctx, q.caller.Tenant)
	if err == nil {
		v.MerchantID = m.MerchantID
	} else if recon.ErrorCode(err) != recon.ENOTFOUND {
		return err
	}
	page, err := pageParam(r.URL.Query(), "users_page")
	if err != nil {
		page = 1
	}
	var total int64
	if v.Users, total, err = h.Store.Users(ctx, q.session.Company, (page-1)*userPerPage, userPerPage); err != nil {
		return err
	}
	v.UsersPager = newPager("/dashboard/settings", url.Values{}, "users_page", page, userPerPage, total)
	if err := h.listClients(r, q, v); err != nil {
		return err
	}
	if err := h.showWebhook(r, q, v); err != nil {
		return err
	}
	if v.Seller == nil {
		v.Seller = sellerFormOf(&q.company.Config)
	}
	v.SellerSaved = r.URL.Query().Get("saved") == "seller"
	if err := h.showBranding(r, q, v); err != nil {
		return err
	}
	if v.HasRefunds = h.Refunds != nil; v.HasRefunds {
		if v.Threshold, err = h.Refunds.Threshold(ctx, q.caller); err != nil {
			return err
		}
		v.ThresholdSaved = r.URL.Query().Get("saved") == "threshold"
	}
	h.render(w, r, status, "settings", h.data(r, q, "settings", v))
	return nil
}

const userPerPage = 20

// pageParam reads a page number (1 when absent).
func pageParam(q url.Values, name string) (int, error) {
	p := q.Get(name)
	if p == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > recon.MaxTransactionPage {
		return 1, recon.FieldError(name, "%s must be an integer from 1 to %d", name, recon.MaxTransactionPage)
	}
	return n, nil
}

// formatsForm reads the formats form: rows f0_prefix, f0_suffix_from, ...
// A row left blank is dropped (that is how a format is removed). The rows
// come back as typed, for the page, and as the rules' input.
func formatsForm(form url.Values) ([]formatRow, []recon.FormatInput) {
	var rows []formatRow
	var in []recon.FormatInput
	for i := range recon.MaxPaymentCodeFormats + 1 {
		p := "f" + strconv.Itoa(i) + "_"
		row := formatRow{strings.TrimSpace(form.Get(p + "prefix")), strings.TrimSpace(form.Get(p + "suffix_from")),
			strings.TrimSpace(form.Get(p + "suffix_to")), form.Get(p + "character_type"), form.Get(p+"active") == "1"}
		if row.Prefix == "" && row.SuffixFrom == "" && row.SuffixTo == "" {
			continue
		}
		f := recon.FormatInput{Prefix: row.Prefix, CharacterType: row.CharacterType, Bad: map[string]string{}}
		for name, dst := range map[string]*int64{"suffix_from": &f.SuffixFrom, "suffix_to": &f.SuffixTo} {
			raw := map[string]string{"suffix_from": row.SuffixFrom, "suffix_to": row.SuffixTo}[name]
			n, err := strconv.ParseInt(raw, 10, 64)
			if raw == "" {
				f.Bad[name] = "missing"
			} else if err != nil {
				f.Bad[name] = "type"
			}
			*dst = n
		}
		if row.Active {
			f.IsActive = 1
		}
		rows, in = append(rows, row), append(in, f)
	}
	return rows, in
}

func (h *Handler) maxPrefixLen() int {
	if h.MaxPrefixLen > 0 {
		return h.MaxPrefixLen
	}
	return recon.DefaultPrefixMaxLen
}

// saveFormats serves POST /dashboard/settings/formats: the rules and the
// store call of PATCH /api/v1/company/configurations, which test mode may
// not make (the formats are the company's, shared by both modes).
func (h *Handler) saveFormats(w http.ResponseWriter, r *http.Request, q *request) error {
	if !q.caller.Livemode() {
		return recon.Errorf(recon.EFORBIDDEN, "payment code formats are settings of the company, shared by its live and test modes: switch to live data to change them")
	}
	rows, in := formatsForm(r.PostForm)
	v := &settingsView{Formats: rows}
	formats, err := recon.ValidateFormats(in, h.maxPrefixLen())
	if err == nil {
		change := []recon.AuditChange{{Field: "formats", Before: recon.AuditFormats(q.company.Config.PaymentCodeFormats), After: recon.AuditFormats(formats)}}
		err = h.audit(r, q, recon.AuditFormatsUpdate, "", change, func(ctx context.Context) error {
			_, err := h.Store.ReplacePaymentCodeFormats(ctx, q.caller.Tenant.ID(), formats)
			return err
		})
		if err == nil {
			http.Redirect(w, r, "/dashboard/settings?saved=formats#formats", http.StatusSeeOther)
			return nil
		}
	}
	if recon.ErrorCode(err) != recon.EINVALID {
		return err
	}
	v.FormatsErr = recon.ErrorMessage(err)
	return h.renderSettings(w, r, q, http.StatusBadRequest, v)
}

// tryMemo serves POST /dashboard/settings/try-memo: recon.ExplainCode on
// the memo, with the formats of the form (being edited) when it has any,
// else the company's, as POST /api/v1/company/try-memo.
func (h *Handler) tryMemo(w http.ResponseWriter, r *http.Request, q *request) error {
	v := &settingsView{Memo: r.PostForm.Get("memo")}
	rows, in := formatsForm(r.PostForm)
	formats := q.company.Config.PaymentCodeFormats
	var err error
	if len(rows) > 0 {
		v.Formats = rows
		formats, err = recon.ValidateFormats(in, h.maxPrefixLen())
	}
	switch {
	case len(v.Memo) > 2000:
		v.MemoErr = "memo must be at most 2000 bytes, as a transaction_content"
	case err != nil:
		v.MemoErr = recon.ErrorMessage(err)
	default:
		e := recon.ExplainCode(v.Memo, formats)
		v.Explanation = &e
	}
	status := http.StatusOK
	if v.MemoErr != "" {
		status = http.StatusBadRequest
	}
	return h.renderSettings(w, r, q, status, v)
}

// sendTest serves POST /dashboard/settings/test-notification: a test
// notification to the active target of the kind (recon.DeliveryOpsStore,
// as POST /api/v1/deliveries/test).
func (h *Handler) sendTest(w http.ResponseWriter, r *http.Request, q *request) error {
	kind := r.PostForm.Get("kind")
	v := &settingsView{}
	if _, err := h.Store.SendTestNotification(r.Context(), q.caller.Tenant, kind); err != nil {
		if c := recon.ErrorCode(err); c != recon.EINVALID && c != recon.ENOTFOUND && c != recon.ECONFLICT {
			return err
		}
		v.TargetErr = recon.ErrorMessage(err)
		return h.renderSettings(w, r, q, http.StatusBadRequest, v)
	}
	if h.Kick != nil {
		h.Kick()
	}
	http.Redirect(w, r, "/dashboard/settings?sent="+url.QueryEscape(kind)+"#targets", http.StatusSeeOther)
	return nil
}

// ipnForm is the IPN target's form: the fields of PUT /v1/ipn but the
// secret, which is kept, or made when SECRET_KEY has none yet. Types are
// its notification types, one checkbox each.
type ipnForm struct {
	URL, AuthType string
	Active        bool
	Types         []string
	// Ordered: one notification at a time, in order (i18n_ordered.go).
	Ordered bool
}

// saveIPN serves POST /dashboard/settings/ipn: the IPN target's URL, auth
// type, state and notification types, saved through h.IPN (the rules of PUT
// /v1/ipn: the URL's SSRF check, the auth types). A secret this save made
// (SECRET_KEY chosen where there was none) and the signing secret of a
// target this save made are shown this once.
func (h *Handler) saveIPN(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.IPN == nil {
		return errNotFound()
	}
	f := &ipnForm{URL: strings.TrimSpace(r.PostForm.Get("ipn_url")), AuthType: r.PostForm.Get("auth_type"), Active: r.PostForm.Get("active") == "1",
		Ordered: r.PostForm.Get("ordered") == "1"}
	c := ipn.Change{URL: f.URL, AuthType: f.AuthType, Active: f.Active, Ordered: &f.Ordered}
	// The form's checkboxes (notification_types=shown marks them: none
	// checked is a choice, refused by the rules, not "keep").
	if r.PostForm.Get("notification_types") == "shown" {
		c.NotificationTypes = append([]string{}, r.PostForm["notification_type"]...)
		f.Types = c.NotificationTypes
	}
	before, _ := h.Store.DeliveryTarget(r.Context(), q.caller.Tenant.ID(), recon.DeliveryIPN) // nil: none yet
	saved, err := h.IPN.Save(r.Context(), q.caller.Tenant, c)
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditIPNUpdate, "ipn", recon.AuditTargetChanges(before, saved.Target))
	}
	if recon.ErrorCode(err) == recon.EINVALID {
		return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{IPNForm: f, IPNErr: recon.ErrorMessage(err)})
	} else if err != nil {
		return err
	}
	if saved.NewSecret || saved.NewSigningSecret {
		v := &settingsView{}
		if saved.NewSecret {
			v.NewSecret, v.SecretWhat = saved.Target.Secret, "ipn_secret"
		}
		if saved.NewSigningSecret {
			v.NewSigning, v.SigningWhat = saved.Target.SigningSecret, "ipn_signing"
		}
		return h.renderSettings(w, r, q, http.StatusOK, v)
	}
	http.Redirect(w, r, "/dashboard/settings?saved=ipn#targets", http.StatusSeeOther)
	return nil
}

// rotateIPNSecret serves POST /dashboard/settings/ipn-secret: a new
// X-Secret-Key for the IPN target, saved through h.IPN (the
// one implementation of the IPN rules) and shown this once.
func (h *Handler) rotateIPNSecret(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.IPN == nil {
		return errNotFound()
	}
	t, err := h.Store.DeliveryTarget(r.Context(), q.caller.Tenant.ID(), recon.DeliveryIPN)
	if err != nil {
		return err
	}
	if t.AuthType != recon.AuthSecretKey {
		return recon.Errorf(recon.ECONFLICT, "the IPN target uses auth_type %s: it has no secret to rotate", t.AuthType)
	}
	secret := recon.NewSecretFrom(h.Rand)
	saved, err := h.IPN.Save(r.Context(), q.caller.Tenant, ipn.Change{URL: t.URL, AuthType: t.AuthType, SecretKey: &secret, Active: t.Active})
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditSecretRotate, "ipn", recon.AuditTargetChanges(t, saved.Target))
	}
	if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSecret: saved.Target.Secret, SecretWhat: "ipn_secret"})
}

// rotateIPNSigning serves POST /dashboard/settings/ipn-signing-secret: a
// new signing secret (the key of X-Recon-Signature) for the IPN target,
// through a confirmation page (the receiver must change its key at once),
// saved through h.IPN (rotate_signing_secret of PUT
// /v1/ipn) and shown this once.
func (h *Handler) rotateIPNSigning(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.IPN == nil {
		return errNotFound()
	}
	t, err := h.Store.DeliveryTarget(r.Context(), q.caller.Tenant.ID(), recon.DeliveryIPN)
	if err != nil {
		return err
	}
	if !confirmed(r) {
		return h.confirmSigningRotation(w, r, q, "/dashboard/settings/ipn-signing-secret", recon.DeliveryIPN, t.URL, recon.MaskSecret(t.SigningSecret), "#targets")
	}
	// The stored target as it is, its secret kept (SecretKey nil).
	saved, err := h.IPN.Save(r.Context(), q.caller.Tenant, ipn.Change{URL: t.URL, AuthType: t.AuthType, Active: t.Active, RotateSigningSecret: true})
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditSecretRotate, "ipn", recon.AuditTargetChanges(t, saved.Target))
	}
	if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSigning: saved.Target.SigningSecret, SigningWhat: "ipn_signing"})
}

// confirmSigningRotation is the confirmation page of a signing secret's
// rotation: which target, and the current secret, masked.
func (h *Handler) confirmSigningRotation(w http.ResponseWriter, r *http.Request, q *request, action, kind, url, masked, section string) error {
	return h.renderConfirm(w, r, q, &confirmView{Title: "c_rotate_signing", Intro: "c_rotate_signing_intro",
		Items:  []confirmItem{{"c_target", kind + " → " + url, "c-target"}, {"signing_secret", masked, "c-signing"}},
		Action: action, Button: "rotate_signing", Back: "/dashboard/settings" + section})
}

// rotateMerchantSecret serves POST /dashboard/settings/merchant-secret: a
// new secret key of the tenant's merchant credentials (as `recon merchant
// credentials --rotate`), shown this once.
func (h *Handler) rotateMerchantSecret(w http.ResponseWriter, r *http.Request, q *request) error {
	m, err := h.Store.MerchantOf(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	m.SecretKey = recon.NewMerchantSecret(h.Rand, !q.caller.Livemode())
	err = h.audit(r, q, recon.AuditMerchantRotate, m.MerchantID, []recon.AuditChange{{Field: "secret_key", After: recon.AuditRotated}},
		func(ctx context.Context) error { return h.Store.SetMerchant(ctx, m) })
	if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewSecret: m.SecretKey, SecretWhat: "merchant_secret"})
}

// roleForm reads a role and permissions, refusing a role above the user's own.
func roleForm(q *request, form url.Values) (recon.Role, []string, error) {
	role, err := recon.ParseRole(form.Get("role"))
	if err != nil {
		return "", nil, err
	}
	if err := recon.CheckGrant(q.caller.User, nil, role); err != nil {
		return "", nil, err
	}
	var perms []string
	for _, p := range form["permission"] {
		if !slices.Contains(recon.Permissions, p) {
			return "", nil, recon.FieldError("permission", "unknown permission %q (known: %s)", p, strings.Join(recon.Permissions, ", "))
		}
		perms = append(perms, p)
	}
	return role, perms, nil
}

// createUser serves POST /dashboard/settings/users: a user of the company
// (the rules of `recon user create`: a valid address, a known role, a
// password of at least 8 characters).
func (h *Handler) createUser(w http.ResponseWriter, r *http.Request, q *request) error {
	role, perms, err := roleForm(q, r.PostForm)
	u := &recon.User{Company: q.session.Company, Email: r.PostForm.Get("email"), Role: role, Permissions: perms}
	pw := r.PostForm.Get("password")
	if err == nil {
		err = u.Validate()
	}
	if err == nil && (utf8.RuneCountInString(pw) < 8 || len(pw) > 72) {
		err = recon.FieldError("password", "the password must have 8 to 72 bytes, at least 8 characters")
	}
	if err == nil {
		u.PasswordHash, err = h.HashPassword(pw)
	}
	if err == nil {
		err = h.audit(r, q, recon.AuditUserCreate, u.Email, []recon.AuditChange{{Field: "role", After: string(u.Role)}, {Field: "permissions", After: strings.Join(u.Permissions, ", ")}},
			func(ctx context.Context) error { return h.Store.CreateUser(ctx, u) })
	}
	return h.afterUserChange(w, r, q, err)
}

// setRole serves POST /dashboard/settings/user-role: the user's role and
// permissions. The company keeps at least one Admin or SuperAdmin: the last
// one cannot be demoted (nor demote themselves).
func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := strconv.ParseInt(r.PostForm.Get("user"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	target, err := h.Store.User(r.Context(), id)
	if err != nil || target.Company != q.session.Company {
		return errNotFound()
	}
	role, perms, err := roleForm(q, r.PostForm)
	if err == nil {
		err = recon.CheckGrant(q.caller.User, target, role) // the role was checked: this is who may change target
	}
	if err == nil {
		err = h.audit(r, q, recon.AuditUserRole, target.Email, recon.AuditRoleChanges(target, role, perms), func(ctx context.Context) error {
			return h.Store.ChangeUserRole(ctx, q.session.Company, target.ID, role, perms) // keeps an Admin
		})
	}
	return h.afterUserChange(w, r, q, err)
}

func (h *Handler) afterUserChange(w http.ResponseWriter, r *http.Request, q *request, err error) error {
	switch recon.ErrorCode(err) {
	case "":
		http.Redirect(w, r, "/dashboard/settings#users", http.StatusSeeOther)
		return nil
	case recon.EINVALID, recon.ECONFLICT:
		status := http.StatusBadRequest
		if recon.ErrorCode(err) == recon.ECONFLICT {
			status = http.StatusConflict
		}
		return h.renderSettings(w, r, q, status, &settingsView{UserErr: recon.ErrorMessage(err)})
	}
	return err
}

// registerSettings adds the routes of the settings, bank accounts and
// sandbox screens.
func (h *Handler) registerSettings(mux *web.Mux) {
	mux.Handle("GET /dashboard/settings", h.page(recon.ActionManageCompany, h.settings))
	mux.HandleLimited("POST /dashboard/settings/formats", h.form(recon.ActionManageCompany, h.saveFormats), formLimit)
	mux.HandleLimited("POST /dashboard/settings/seller", h.form(recon.ActionManageCompany, h.saveSeller), formLimit)
	mux.HandleLimited("POST /dashboard/settings/branding", h.form(recon.ActionManageCompany, h.saveBranding), formLimit)
	mux.HandleLimited("POST /dashboard/settings/try-memo", h.form(recon.ActionManageCompany, h.tryMemo), formLimit)
	mux.HandleLimited("POST /dashboard/settings/test-notification", h.form(recon.ActionManageNotifications, h.sendTest), formLimit)
	mux.HandleLimited("POST /dashboard/settings/ipn", h.form(recon.ActionManageNotifications, h.saveIPN), formLimit)
	mux.HandleLimited("POST /dashboard/settings/ipn-secret", h.form(recon.ActionManageNotifications, h.rotateIPNSecret), formLimit)
	mux.HandleLimited("POST /dashboard/settings/ipn-signing-secret", h.form(recon.ActionManageNotifications, h.rotateIPNSigning), formLimit)
	mux.HandleLimited("POST /dashboard/settings/merchant-secret", h.form(recon.ActionManageNotifications, h.rotateMerchantSecret), formLimit)
	mux.HandleLimited("POST /dashboard/settings/users", h.form(recon.ActionManageCompany, h.createUser), formLimit)
	mux.HandleLimited("POST /dashboard/settings/user-role", h.form(recon.ActionManageCompany, h.setRole), formLimit)
	mux.HandleLimited("POST /dashboard/settings/clients", h.form(recon.ActionManageCompany, h.createClient), formLimit)
	mux.HandleLimited("POST /dashboard/settings/clients/revoke", h.form(recon.ActionManageCompany, h.revokeClient), formLimit)
	mux.HandleLimited("POST /dashboard/settings/hub-webhook", h.form(recon.ActionManageNotifications, h.saveWebhook), formLimit)
	mux.HandleLimited("POST /dashboard/settings/hub-webhook-secret", h.form(recon.ActionManageNotifications, h.rotateWebhookSecret), formLimit)
	mux.HandleLimited("POST /dashboard/settings/hub-webhook-signing-secret", h.form(recon.ActionManageNotifications, h.rotateWebhookSigning), formLimit)
	h.healthRoutes(mux) // endpoint health (health.go)
	mux.Handle("GET /dashboard/bank-accounts", h.page(recon.ActionReadMoney, h.bankAccounts))
	// A form (checked for NUL like the others) whose multipart file is read by the handler.
	mux.HandleLimited("POST /dashboard/bank-accounts/statement", h.refuseLargeStatement(h.form(recon.ActionWriteTransactions, h.uploadStatement)), statementBodyLimit)
	mux.HandleLimited("POST /dashboard/bank-accounts/statement/confirm", h.form(recon.ActionWriteTransactions, h.confirmStatement), formLimit)
	mux.HandleLimited("POST /dashboard/bank-accounts/mapping", h.form(recon.ActionWriteTransactions, h.saveMapping), formLimit)
	mux.Handle("GET /dashboard/static/upload.js", h.public(serveUploadJS))
	mux.HandleLimited("POST /dashboard/bank-accounts/link", h.form(recon.ActionHub, h.linkBank), formLimit)
	mux.Handle("GET /dashboard/sandbox", h.page(recon.ActionWriteTransactions, h.sandbox))
	mux.HandleLimited("POST /dashboard/sandbox/transfer", h.form(recon.ActionWriteTransactions, h.sandboxTransfer), formLimit)
	mux.HandleLimited("POST /dashboard/sandbox/hub-event", h.form(recon.ActionHub, h.sandboxHubEvent), formLimit)
}

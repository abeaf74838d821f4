package recon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The audit log (docs/dashboard.md, Audit log): who changed what, when and
// from where, for the changes of settings, users and roles, secrets, targets,
// refunds and exception decisions. An entry never holds a secret's value: a
// new secret is the change AuditRotated.

// Audit actions, "family.verb". The family is what the log's filter selects
// (AuditFamilies).
const (
	AuditCompanyUpdate     = "company.update"    // name, status, retention…
	AuditFormatsUpdate     = "formats.update"    // payment-code formats
	AuditSellerUpdate      = "seller.update"     // the e-invoices' seller
	AuditBrandingUpdate    = "branding.update"   // the hosted pages' name and logo (per mode)
	AuditIPNUpdate         = "target.ipn_update" // the IPN target
	AuditWebhookUpdate     = "target.webhook"    // the hub webhook
	AuditIPNTypesUpdate    = "target.ipn_types"  // the notification types
	AuditChatUpdate        = "target.chat"       // the alerts' chat webhook
	AuditMerchantRotate    = "secret.merchant"   // merchant credentials
	AuditSecretRotate      = "secret.rotate"     // a target's signing secret
	AuditClientCreate      = "secret.client_new" // an OAuth2 client
	AuditClientDelete      = "secret.client_del" // an OAuth2 client deleted
	AuditUserCreate        = "user.create"       // a user added
	AuditUserRole          = "user.role"         // role or permissions
	AuditUserInvite        = "user.invite"       // an invitation sent
	AuditUserDeactivate    = "user.deactivate"   // a user deactivated
	AuditUserReactivate    = "user.reactivate"   // a user reactivated
	AuditUserPassword      = "user.password"     // a password changed or reset
	AuditRefundRequest     = "refund.request"    // a refund asked for
	AuditRefundApprove     = "refund.approve"    // approved (four eyes)
	AuditRefundReject      = "refund.reject"     // rejected
	AuditRefundCancel      = "refund.cancel"     // cancelled
	AuditRefundThreshold   = "refund.threshold"  // the approval threshold
	AuditExceptionDecision = "exception.decide"  // an exception resolved
	AuditAlertsUpdate      = "company.alerts"    // the company's alert thresholds
	AuditTestDataWipe      = "company.wipe_test" // test data deleted
	// Endpoint health (docs/design.md, D7): Recon disabled a target that
	// failed for 3 days (actor AuditViaRecon); a person re-enabled it.
	AuditTargetDisabled = "target.disabled"
	AuditTargetEnabled  = "target.enabled"
)

// AuditActions lists every action, in the order the log's filter shows
// their families.
var AuditActions = []string{AuditCompanyUpdate, AuditFormatsUpdate, AuditSellerUpdate, AuditBrandingUpdate, AuditAlertsUpdate, AuditTestDataWipe,
	AuditIPNUpdate, AuditWebhookUpdate, AuditIPNTypesUpdate, AuditChatUpdate, AuditTargetDisabled, AuditTargetEnabled,
	AuditMerchantRotate, AuditSecretRotate, AuditClientCreate, AuditClientDelete,
	AuditUserCreate, AuditUserRole, AuditUserInvite, AuditUserDeactivate, AuditUserReactivate, AuditUserPassword,
	AuditRefundRequest, AuditRefundApprove, AuditRefundReject, AuditRefundCancel, AuditRefundThreshold,
	AuditExceptionDecision}

// AuditFamilies are the families of AuditActions: settings of the company
// and its formats, seller and branding, targets (IPN, webhook, chat), secrets, users,
// refunds and exceptions.
var AuditFamilies = []string{"company", "formats", "seller", "branding", "target", "secret", "user", "refund", "exception"}

// AuditFamily is the family of an action ("user" of "user.role").
func AuditFamily(action string) string {
	f, _, _ := strings.Cut(action, ".")
	return f
}

// AuditRotated is what an entry says of a secret that changed: never the
// value, old or new.
const AuditRotated = "rotated"

// Where an audited change came from.
const (
	AuditViaDashboard = "dashboard"
	AuditViaAPI       = "api"
	AuditViaCLI       = "cli"
	// AuditViaRecon: Recon itself (the maintenance loop), no person.
	AuditViaRecon = "recon"
)

// AuditActor is who made a change: a user (through the dashboard or a
// user's token), an API client acting for the company (client credentials,
// no user), or an operator at the command line.
type AuditActor struct {
	UserID   int64
	Email    string
	ClientID string
	Via      string // AuditViaDashboard, AuditViaAPI, AuditViaCLI
	// IP and UserAgent say from where: the request's remote address and
	// User-Agent header ("" at the command line).
	IP, UserAgent string
}

// AuditActorOf is the actor behind an authenticated caller, through via.
func AuditActorOf(c *Caller, via, ip, userAgent string) AuditActor {
	a := AuditActor{ClientID: c.ClientID, Via: via, IP: ip, UserAgent: userAgent}
	if c.User != nil {
		a.UserID, a.Email = c.User.ID, c.User.Email
	}
	return a
}

// AuditChange is one field's before and after, as a person reads them
// (AuditRotated for a secret).
type AuditChange struct {
	Field  string `json:"field"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// AuditEntry is one change in the audit log.
type AuditEntry struct {
	ID     int64
	Tenant TenantID
	At     time.Time
	Actor  AuditActor
	Action string // one of AuditActions
	// Object names what changed, as the log shows it ("user a@b.vn",
	// "refund rf_…", "order SM-01126"); "" for the company itself.
	Object  string
	Changes []AuditChange
}

// Bounds of an entry's text (longer text is cut, never refused: the change
// it records has been made).
const (
	auditTextMax      = 500
	auditMaxChanges   = 50
	auditUserAgentMax = 300
)

// Normalize checks the action and cuts over-long text, so that any change
// can be recorded. An unknown action is EINVALID: a programming error.
func (e *AuditEntry) Normalize() error {
	if !slices.Contains(AuditActions, e.Action) {
		return Errorf(EINVALID, "unknown audit action %q", e.Action)
	}
	if e.Tenant == (TenantID{}) {
		return Errorf(EINVALID, "an audit entry needs its tenant")
	}
	e.Object = cutText(e.Object, auditTextMax)
	e.Actor.Email = cutText(e.Actor.Email, 254)
	e.Actor.ClientID = cutText(e.Actor.ClientID, 200)
	e.Actor.IP = cutText(e.Actor.IP, 64)
	e.Actor.UserAgent = cutText(e.Actor.UserAgent, auditUserAgentMax)
	if len(e.Changes) > auditMaxChanges {
		e.Changes = e.Changes[:auditMaxChanges]
	}
	for i := range e.Changes {
		c := &e.Changes[i]
		c.Field, c.Before, c.After = cutText(c.Field, 100), cutText(c.Before, auditTextMax), cutText(c.After, auditTextMax)
	}
	return nil
}

// cutText returns s cut to at most max bytes on a rune boundary, with
// invalid UTF-8 replaced.
func cutText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// AuditDiff returns the changes between before and after, field by field
// in the order of fields (fields equal in both are left out). A field in
// secret is a secret: it is AuditRotated when it changed, its value never
// appears.
func AuditDiff(fields []string, before, after map[string]string, secret ...string) []AuditChange {
	var out []AuditChange
	for _, f := range fields {
		b, a := before[f], after[f]
		if b == a {
			continue
		}
		if slices.Contains(secret, f) {
			out = append(out, AuditChange{Field: f, After: AuditRotated})
			continue
		}
		out = append(out, AuditChange{Field: f, Before: b, After: a})
	}
	return out
}

// AuditFilter selects entries of the log: by family (AuditFamilies) or
// action, by actor (an e-mail address or a client id), and by business day
// (YYYY-MM-DD, in Location); page Page (from 1) of PerPage, newest first.
type AuditFilter struct {
	Family, Action string
	Actor          string
	From, To       string
	Location       *time.Location
	Page, PerPage  int
}

// AuditMaxLimit is the largest page of the log.
const AuditMaxLimit = 200

// Validate checks the filter's values, with the names of the query
// parameters (family, action, actor, from, to).
func (f *AuditFilter) Validate() error {
	if f.Family != "" && !slices.Contains(AuditFamilies, f.Family) {
		return FieldError("family", "family must be one of %s", strings.Join(AuditFamilies, ", "))
	}
	if f.Action != "" && !slices.Contains(AuditActions, f.Action) {
		return FieldError("action", "unknown action %q", f.Action)
	}
	if len(f.Actor) > 254 {
		return FieldError("actor", "actor is at most 254 characters")
	}
	for _, d := range []struct{ name, v string }{{"from", f.From}, {"to", f.To}} {
		if d.v == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, d.v); err != nil {
			return FieldError(d.name, "%s must be a date YYYY-MM-DD", d.name)
		}
	}
	if f.PerPage <= 0 || f.PerPage > AuditMaxLimit {
		return FieldError("per_page", "per_page must be 1 to %d", AuditMaxLimit)
	}
	if f.Page < 1 || f.Page > 100000 {
		return FieldError("page", "page must be 1 to 100000")
	}
	return nil
}

// AuditStore keeps the audit log.
type AuditStore interface {
	// AppendAudit records e (after Normalize) and sets its ID and, when
	// zero, At. Inside Audited's change, the store records the entry in
	// the change's own transaction instead (PendingAudit).
	AppendAudit(ctx context.Context, e *AuditEntry) error
	// AuditEntries lists the tenant's entries that f selects, newest
	// first, with how many it selects in all.
	AuditEntries(ctx context.Context, tenant TenantID, f AuditFilter) ([]*AuditEntry, int64, error)
}

// AuditAppender is the store method Audited needs.
type AuditAppender interface {
	AppendAudit(ctx context.Context, e *AuditEntry) error
}

type auditKey struct{}

type pendingAudit struct {
	e       *AuditEntry
	written atomic.Bool
}

// Audited runs change with a context that carries e, so that a store write
// made in a database transaction records e in that same transaction (the
// change and its entry commit together, PendingAudit); when change made no
// such write, e is appended right after it succeeded. Nothing is recorded
// when change fails.
func Audited(ctx context.Context, store AuditAppender, e *AuditEntry, change func(ctx context.Context) error) error {
	if err := e.Normalize(); err != nil {
		return err
	}
	p := &pendingAudit{e: e}
	if err := change(context.WithValue(ctx, auditKey{}, p)); err != nil {
		return err
	}
	if p.written.Load() {
		return nil
	}
	return store.AppendAudit(ctx, e)
}

// PendingAudit is, for a store about to commit a write transaction, the
// entry ctx carries that no transaction recorded yet (nil when none), and
// the function to call once the transaction that records it committed.
func PendingAudit(ctx context.Context) (*AuditEntry, func()) {
	p, _ := ctx.Value(auditKey{}).(*pendingAudit)
	if p == nil || p.written.Load() {
		return nil, nil
	}
	return p.e, func() { p.written.Store(true) }
}

// auditCompanyFields are the company's settings as its entries name them,
// in the order they are listed.
var auditCompanyFields = []string{"full_name", "short_name", "status", "subscription", "begin_date", "end_date",
	"data_storage_days", "bank_sub_account", "paycode", "formats",
	"seller_legal_name", "seller_tax_code", "seller_address", "seller_phone", "seller_email", "seller_bank_name", "seller_bank_account",
	"invoice_template", "invoice_series", "auto_invoice", "duplicate_window_days"}

// auditCompany is the company's settings as text, for AuditDiff.
func auditCompany(c *Company) map[string]string {
	cf, s := &c.Config, &c.Config.Seller
	return map[string]string{"full_name": c.FullName, "short_name": c.ShortName, "status": c.Status, "subscription": c.Subscription,
		"begin_date": c.BeginDate, "end_date": c.EndDate, "data_storage_days": strconv.Itoa(cf.DataStorageDays),
		"bank_sub_account": strconv.FormatBool(cf.BankSubAccount), "paycode": strconv.FormatBool(cf.Paycode), "formats": AuditFormats(cf.PaymentCodeFormats),
		"seller_legal_name": s.LegalName, "seller_tax_code": s.TaxCode, "seller_address": s.Address, "seller_phone": s.Phone,
		"seller_email": s.Email, "seller_bank_name": s.BankName, "seller_bank_account": s.BankAcct,
		"invoice_template": cf.Invoicing.Template, "invoice_series": cf.Invoicing.Series, "auto_invoice": strconv.FormatBool(cf.Invoicing.AutoInvoice),
		"duplicate_window_days": strconv.Itoa(cf.DuplicateWindowDays)}
}

// AuditCompanyChanges are the changes of a company's settings between
// before and after (a copy of the company taken before the change).
func AuditCompanyChanges(before, after *Company) []AuditChange {
	return AuditDiff(auditCompanyFields, auditCompany(before), auditCompany(after))
}

// AuditFormats is payment-code formats on one line, as the log shows them:
// "DH 5-8 NumberOnly, SM 4-6 Any (off)".
func AuditFormats(fs []PaymentCodeFormat) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %d-%d %s", f.Prefix, f.SuffixFrom, f.SuffixTo, f.CharacterType)
		if !f.IsActive {
			parts[i] += " (off)"
		}
	}
	return strings.Join(parts, ", ")
}

// AuditingCompany runs update (a CompanyStore.UpdateCompany's function)
// and sets the changes it made to the company's settings on the audit
// entry ctx carries (recon.Audited): the entry then records before and
// after as they were under the store's lock.
func AuditingCompany(ctx context.Context, update func(c *Company) error) func(c *Company) error {
	return func(c *Company) error {
		before := *c
		before.Config.PaymentCodeFormats = slices.Clone(c.Config.PaymentCodeFormats)
		if err := update(c); err != nil {
			return err
		}
		if p, _ := ctx.Value(auditKey{}).(*pendingAudit); p != nil && !p.written.Load() {
			p.e.Changes = AuditCompanyChanges(&before, c)
		}
		return nil
	}
}

// auditTargetFields are a notification target's settings as its entries
// name them; secret_key and signing_secret are secrets (AuditRotated).
var auditTargetFields = []string{"url", "auth_type", "active", "ordered", "notification_types", "events", "secret_key", "signing_secret"}

func auditTarget(t *Target, events []string) map[string]string {
	if t == nil {
		return nil
	}
	m := map[string]string{"url": t.URL, "auth_type": t.AuthType, "active": strconv.FormatBool(t.Active),
		"secret_key": t.Secret, "signing_secret": t.SigningSecret}
	if t.Ordered { // unset reads as never set: a target that is not ordered shows no change
		m["ordered"] = "true"
	}
	if events != nil {
		m["events"] = strings.Join(events, ", ")
	}
	if t.Settings != "" {
		var s IPNSettings
		if json.Unmarshal([]byte(t.Settings), &s) == nil {
			m["notification_types"] = strings.Join(s.Types(), ", ")
		}
	}
	return m
}

// AuditTargetChanges are the changes of an IPN target between before (nil
// when there was none) and after: its secrets only ever AuditRotated.
func AuditTargetChanges(before, after *Target) []AuditChange {
	return AuditDiff(auditTargetFields, auditTarget(before, nil), auditTarget(after, nil), "secret_key", "signing_secret")
}

// AuditWebhookChanges are AuditTargetChanges of the hub webhook, with its
// events.
func AuditWebhookChanges(before, after *HubWebhook) []AuditChange {
	var b, a map[string]string
	if before != nil {
		b = auditTarget(&before.Target, append([]string{}, before.AllowEvents...))
	}
	if after != nil {
		a = auditTarget(&after.Target, append([]string{}, after.AllowEvents...))
	}
	return AuditDiff(auditTargetFields, b, a, "secret_key", "signing_secret")
}

// AuditResolution is an exception's resolution as its entry records it:
// the decision, the order matched, the note, a refund's amount.
func AuditResolution(in ResolveInput, o *Order) []AuditChange {
	out := []AuditChange{{Field: "decision", After: in.Action}}
	if o != nil {
		out = append(out, AuditChange{Field: "order", After: o.InvoiceNumber})
	}
	if in.Amount != 0 {
		out = append(out, AuditChange{Field: "amount", After: strconv.FormatInt(in.Amount, 10)})
	}
	if in.Note != "" {
		out = append(out, AuditChange{Field: "note", After: in.Note})
	}
	return out
}

// AuditRefundRequested is a new refund as its entry records it.
func AuditRefundRequested(r *Refund) []AuditChange {
	out := []AuditChange{{Field: "amount", After: strconv.FormatInt(r.Amount, 10)}, {Field: "status", After: r.Status}, {Field: "reason", After: r.Reason}}
	if r.OrderPublicID != "" {
		out = append(out, AuditChange{Field: "order", After: r.OrderPublicID})
	}
	return out
}

// AuditRoleChanges are the changes of a user's role and permissions.
func AuditRoleChanges(before *User, role Role, perms []string) []AuditChange {
	return AuditDiff([]string{"role", "permissions"}, map[string]string{"role": string(before.Role), "permissions": strings.Join(before.Permissions, ", ")},
		map[string]string{"role": string(role), "permissions": strings.Join(perms, ", ")})
}

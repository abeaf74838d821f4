package recon

import "slices"

// Action is something a caller may do through the APIs. Which roles,
// permissions and callers may do each is the matrix of docs/design.md, D9,
// written once here; every endpoint names the action it performs, and the
// authorization server grants only the scopes whose action the user may do.
type Action string

// Actions of docs/design.md, D9.
const (
	// ActionManageCompany reads and changes the company and its payment-code formats.
	ActionManageCompany Action = "manage the company"
	// ActionReadMoney reads money data: transactions, bank accounts and
	// balances, balance discontinuities, the reconciliation report,
	// deliveries and their payloads.
	ActionReadMoney Action = "read money data"
	// ActionWriteTransactions adds transactions: bank-feed push, statement
	// upload, sandbox transfers.
	ActionWriteTransactions Action = "write transactions"
	// ActionManageNotifications replays deliveries and changes IPN and
	// webhook settings and merchant credentials.
	ActionManageNotifications Action = "manage notifications"
	// ActionResolveExceptions resolves an exception of the queue by hand
	// (match to an order, refunded outside Recon, ignore): Admin,
	// SuperAdmin and the Accountant role (issue 11), never a Member, and
	// only a token issued to a user, who the decision records.
	ActionResolveExceptions Action = "resolve exceptions"
	// ActionReadOrders reads orders, their virtual accounts and payments
	// (API v2): the money-reading rule.
	ActionReadOrders Action = "read orders"
	// ActionWriteOrders creates and cancels orders and their virtual
	// accounts (API v2): Admin and SuperAdmin.
	ActionWriteOrders Action = "write orders"
	// ActionReadRefunds reads refunds (API v2): the money-reading rule.
	ActionReadRefunds Action = "read refunds"
	// ActionRequestRefunds requests and cancels refunds (API v2): Admin,
	// SuperAdmin or the create_refunds permission.
	ActionRequestRefunds Action = "request refunds"
	// ActionApproveRefunds approves or rejects a refund waiting for a second
	// person (four eyes, API v2): Admin and SuperAdmin, only through a token
	// issued to a user, never the refund's requester.
	ActionApproveRefunds Action = "approve refunds"
	// ActionReadInvoices reads e-invoices, their XML and PDF
	// (docs/invoices.md): the money-reading rule.
	ActionReadInvoices Action = "read invoices"
	// ActionIssueInvoices creates, issues, replaces, adjusts and cancels
	// e-invoices: Admin, SuperAdmin or the issue_invoices permission.
	ActionIssueInvoices Action = "issue invoices"
	// ActionNone needs no role: the profile and offline_access scopes.
	ActionNone Action = ""
)

// Permission names the user permission that lets a role without the action
// do it anyway; "" when only Admin and SuperAdmin may.
func (a Action) Permission() string {
	switch a {
	case ActionReadMoney:
		return PermViewTransactions
	case ActionWriteTransactions:
		return PermCreateTransactions
	case ActionReadOrders, ActionReadRefunds:
		return PermViewTransactions
	case ActionRequestRefunds:
		return PermCreateRefunds
	case ActionReadInvoices:
		return PermViewTransactions
	case ActionIssueInvoices:
		return PermIssueInvoices
	}
	return ""
}

// May reports whether the user may do the action: Admin and SuperAdmin may
// do everything; other roles only what a permission they hold allows.
func (u *User) May(a Action) bool {
	if a == ActionNone || u.Role.Administers() {
		return true
	}
	if a == ActionResolveExceptions {
		return u.Role == RoleAccountant
	}
	p := a.Permission()
	return p != "" && u.Can(p)
}

// May reports whether the caller may do the action. A token issued to a
// user may do what the user may (loaded fresh on every request, so a role
// change applies at once). A token with no user (client credentials of the
// company's own client: a bank feed, a shop's server) may write
// transactions, use the bank-linking hub when it holds the hub scope, and
// use API v2's orders and refunds as the company's server does (read and
// write orders, read and request refunds); approving a refund always needs a
// person.
func (c *Caller) May(a Action) bool {
	if c.User != nil {
		return c.User.May(a)
	}
	switch a {
	case ActionNone, ActionWriteTransactions, ActionReadOrders, ActionWriteOrders, ActionReadRefunds, ActionRequestRefunds,
		ActionReadInvoices, ActionIssueInvoices:
		return true
	}
	return a == ActionHub && c.HasScope(ScopeHub)
}

// Authorize is May as an error: EFORBIDDEN naming what is missing.
func (c *Caller) Authorize(a Action) error {
	if c.May(a) {
		return nil
	}
	if c.User == nil && a == ActionHub {
		return Errorf(EFORBIDDEN, "to %s a token with no user needs the %s scope", a, ScopeHub)
	}
	if c.User == nil {
		return Errorf(EFORBIDDEN, "only a token issued to a user may %s; this token has no user", a)
	}
	if a == ActionResolveExceptions {
		return Errorf(EFORBIDDEN, "to %s you need role Admin, SuperAdmin or Accountant; your role is %s", a, c.User.Role).
			Saying("forbidden_accountant", string(c.User.Role))
	}
	if p := a.Permission(); p != "" {
		return Errorf(EFORBIDDEN, "to %s you need role Admin or SuperAdmin or the %s permission; your role is %s", a, p, c.User.Role).
			Saying("forbidden_permission", string(c.User.Role), p)
	}
	return Errorf(EFORBIDDEN, "to %s you need role Admin or SuperAdmin; your role is %s", a, c.User.Role).
		Saying("forbidden_admin", string(c.User.Role))
}

// ScopeAction is the action a scope lets its holder attempt.
func ScopeAction(scope string) Action {
	switch scope {
	case ScopeCompany:
		return ActionManageCompany
	case ScopeTransactionRead, ScopeBankAccountRead, ScopeDeliveryRead:
		return ActionReadMoney
	case ScopeTransactionWrite:
		return ActionWriteTransactions
	case ScopeWebhookRead, ScopeWebhookWrite, ScopeDeliveryWrite:
		return ActionManageNotifications
	case ScopeHub:
		return ActionHub
	case ScopeExceptionWrite:
		return ActionResolveExceptions
	case ScopeOrderRead:
		return ActionReadOrders
	case ScopeOrderWrite:
		return ActionWriteOrders
	case ScopeRefundRead:
		return ActionReadRefunds
	case ScopeRefundWrite:
		return ActionRequestRefunds
	case ScopeInvoiceRead:
		return ActionReadInvoices
	case ScopeInvoiceWrite:
		return ActionIssueInvoices
	}
	return ActionNone
}

// GrantableScopes returns the scopes of requested that the user's role and
// permissions allow, in the requested order, or nil when none is allowed
// (offline_access alone grants nothing to use): such a request is refused.
func (u *User) GrantableScopes(requested []string) []string {
	var granted []string
	for _, s := range requested {
		if u.May(ScopeAction(s)) && !slices.Contains(granted, s) {
			granted = append(granted, s)
		}
	}
	if !slices.ContainsFunc(granted, func(s string) bool { return s != ScopeOfflineAccess }) {
		return nil
	}
	return granted
}

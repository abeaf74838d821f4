package linking

import (
	"context"
	"fmt"
	"slices"
	"time"

	"recon"
)

// Simulation is what Simulate made: the link tokens it drove (their
// timelines hold the events) and the account it linked or unlinked.
type Simulation struct {
	Event      string
	Customer   *recon.HubCustomer
	LinkTokens []string // xids, in the order they were made
	AccountXID string
	// ExpiresAt is set for the time-driven events: the token expires then,
	// and the sweep of a running `recon serve` (every node, every 15
	// seconds) makes the event.
	ExpiresAt time.Time
}

// simulationCustomer is the merchant's company Simulate links for.
const simulationCustomer = "Recon trigger (sandbox)"

// Simulate makes the hub event happen in the tenant (a test tenant, or any
// on a sandbox server) through the production paths: a link token made as
// the API makes one (CreateLinkToken), then its session stepped as the
// hosted page steps it for a customer's browser (ReadStep, the store's
// StepLinkSession, the sandbox bank answering), so the events on the way
// fire too (BANK_ACCOUNT_LINKED comes
// with its state changes and LINK_SESSION_COMPLETED). `recon trigger` uses
// it. LINK_TOKEN_EXPIRED and LINK_SESSION_EXPIRED come from a token that
// lives one second: the sweep of a running server ends it.
func (s *Service) Simulate(ctx context.Context, tenant recon.TenantID, sandbox bool, event string) (*Simulation, error) {
	if event == "BANK_ACCOUNT_INACTIVED" {
		event = recon.EventBankAccountInactivated
	}
	if !slices.Contains(recon.HubEvents, event) {
		return nil, recon.Errorf(recon.EINVALID, "%q is not a hub event", event)
	}
	if _, err := s.Connector(sandbox); err != nil { // before making anything
		return nil, err
	}
	cu, err := s.simulationCustomer(ctx, tenant)
	if err != nil {
		return nil, err
	}
	sim := &Simulation{Event: event, Customer: cu}
	b := &browser{s: s, sim: sim, tenant: tenant, sandbox: sandbox}
	switch event {
	case recon.EventLinkTokenCreated:
		_, err = b.token(ctx, recon.LinkPurposeLink, "", 0)
	case recon.EventLinkTokenRevoked:
		if _, err = b.token(ctx, recon.LinkPurposeLink, "", 0); err == nil {
			_, err = s.Store.RevokeLinkToken(ctx, tenant, sim.LinkTokens[0])
		}
	case recon.EventLinkTokenExpired, recon.EventLinkSessionExpired:
		var p *page
		if p, err = b.token(ctx, recon.LinkPurposeLink, "", time.Second); err == nil && event == recon.EventLinkSessionExpired {
			err = p.open(ctx)
		}
	case recon.EventLinkSessionInitialized, recon.EventLinkSessionReinitialized, recon.EventLinkSessionAbandoned,
		recon.EventLinkSessionStateChanged:
		var p *page
		if p, err = b.token(ctx, recon.LinkPurposeLink, "", 0); err != nil {
			break
		}
		err = p.open(ctx)
		switch {
		case err != nil:
		case event == recon.EventLinkSessionReinitialized:
			err = p.open(ctx)
		case event == recon.EventLinkSessionAbandoned:
			err = p.post(ctx, recon.StepClose)
		case event == recon.EventLinkSessionStateChanged:
			err = p.post(ctx, recon.StepPickBank, "bank", "MB", "account_type", recon.AccountIndividual)
		}
	case recon.EventLinkSessionFailed:
		err = b.link(ctx, failing(FailBankDown))
	case recon.EventLinkSessionCompleted, recon.EventBankAccountLinked:
		var id SandboxIdentity
		if id, err = b.unlinkedIdentity(ctx); err == nil {
			err = b.link(ctx, id)
		}
	case recon.EventBankAccountUnlinked, recon.EventBankAccountInactivated:
		err = b.unlink(ctx, map[bool]string{true: "bank", false: "here"}[event == recon.EventBankAccountUnlinked])
	}
	if err != nil {
		return nil, err
	}
	return sim, nil
}

// simulationCustomer finds or makes the merchant's company Simulate uses.
func (s *Service) simulationCustomer(ctx context.Context, tenant recon.TenantID) (*recon.HubCustomer, error) {
	list, _, err := s.Store.HubCustomers(ctx, tenant, recon.HubCustomerFilter{Q: simulationCustomer, Page: 1, PerPage: 1})
	if err != nil {
		return nil, err
	}
	if len(list) > 0 && list[0].FullName == simulationCustomer {
		return list[0], nil
	}
	cu := &recon.HubCustomer{Tenant: tenant, FullName: simulationCustomer, ShortName: "TRIGGER", Status: recon.HubCustomerActive}
	return cu, s.Store.CreateHubCustomer(ctx, cu)
}

func failing(kind string) SandboxIdentity {
	for _, id := range SandboxIdentities() {
		if id.Fail == kind {
			return id
		}
	}
	panic("linking: no sandbox identity fails with " + kind)
}

// browser makes the tokens of one simulation and steps their sessions.
type browser struct {
	s       *Service
	sim     *Simulation
	tenant  recon.TenantID
	sandbox bool
}

// token makes a link token as POST /v1/link-token/create does (ttl 0: the
// service's lifetime).
func (b *browser) token(ctx context.Context, purpose, accountXID string, ttl time.Duration) (*page, error) {
	t := &recon.LinkToken{Tenant: b.tenant, CustomerXID: b.sim.Customer.XID, Purpose: purpose, Language: "en",
		BankAccountXID: accountXID, Sandbox: b.sandbox}
	links := *b.s
	if ttl > 0 {
		links.LinkTTL = ttl
	}
	if _, err := links.CreateLinkToken(ctx, t); err != nil {
		return nil, err
	}
	b.sim.LinkTokens = append(b.sim.LinkTokens, t.XID)
	if ttl > 0 {
		b.sim.ExpiresAt = t.ExpiresAt
	}
	return &page{s: b.s, token: t.Token}, nil
}

// unlinkedIdentity is the first sandbox identity the tenant has not linked.
func (b *browser) unlinkedIdentity(ctx context.Context) (SandboxIdentity, error) {
	linked, err := b.linkedNumbers(ctx)
	if err != nil {
		return SandboxIdentity{}, err
	}
	for _, id := range SandboxIdentities() {
		if id.Fail == "" && !linked[id.BankCode+" "+id.AccountNumber] {
			return id, nil
		}
	}
	return SandboxIdentity{}, recon.Errorf(recon.ECONFLICT, "every sandbox identity is linked in this mode already: unlink one first")
}

func (b *browser) linkedNumbers(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	for p := 1; ; p++ {
		list, total, err := b.s.Store.HubBankAccounts(ctx, b.tenant, recon.HubAccountFilter{Page: p, PerPage: 100})
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			if a.LinkState == recon.AccountLinked {
				out[a.BankCode+" "+a.AccountNumber] = true
			}
		}
		if int64(p*100) >= total || len(list) == 0 {
			return out, nil
		}
	}
}

// link runs the link path with the identity, to its end.
func (b *browser) link(ctx context.Context, id SandboxIdentity) error {
	p, err := b.token(ctx, recon.LinkPurposeLink, "", 0)
	if err != nil {
		return err
	}
	steps := [][]string{
		{recon.StepPickBank, "bank", id.BankCode, "account_type", id.AccountType},
		{recon.StepDetails, "account_number", id.AccountNumber, "national_id", id.NationalID, "phone", id.Phone},
	}
	if id.Fail == "" {
		steps = append(steps, []string{recon.StepLinkOTP, "otp", id.OTP})
	}
	if err := p.open(ctx); err != nil {
		return err
	}
	for _, s := range steps {
		if err := p.post(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	if id.Fail == "" {
		_, sessions, err := b.s.Store.LinkToken(ctx, b.tenant, b.sim.LinkTokens[len(b.sim.LinkTokens)-1])
		if err != nil {
			return err
		}
		if s := sessions[len(sessions)-1]; s.Status != recon.LinkSessionCompleted {
			return recon.Errorf(recon.ECONFLICT, "the sandbox link of %s %s ended %s (%s)", id.BankCode, id.AccountNumber, s.Status, s.Reason)
		}
		b.sim.AccountXID = sessions[len(sessions)-1].BankAccountXID
	}
	return nil
}

// unlink ends the link of an account the tenant has linked (linking one
// first when there is none): at the bank, or here only.
func (b *browser) unlink(ctx context.Context, choice string) error {
	accounts, _, err := b.s.Store.HubBankAccounts(ctx, b.tenant, recon.HubAccountFilter{CustomerXID: b.sim.Customer.XID, Page: 1, PerPage: 100})
	if err != nil {
		return err
	}
	var xid string
	for _, a := range accounts {
		if a.LinkState == recon.AccountLinked {
			xid = a.XID
			break
		}
	}
	if xid == "" {
		id, err := b.unlinkedIdentity(ctx)
		if err != nil {
			return err
		}
		if err := b.link(ctx, id); err != nil {
			return err
		}
		xid = b.sim.AccountXID
	}
	p, err := b.token(ctx, recon.LinkPurposeUnlink, xid, 0)
	if err != nil {
		return err
	}
	a, err := b.s.Store.HubBankAccount(ctx, b.tenant, xid)
	if err != nil {
		return err
	}
	otp := ""
	for _, id := range SandboxIdentities() {
		if id.BankCode == a.BankCode && id.AccountNumber == a.AccountNumber {
			otp = id.OTP
		}
	}
	if err := p.open(ctx); err != nil {
		return err
	}
	for _, s := range [][]string{{recon.StepRequestUnlink}, {recon.StepUnlinkOTP, "otp", otp}, {recon.StepUnlinkChoice, "choice", choice}} {
		if err := p.post(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	b.sim.AccountXID = xid
	return nil
}

// page is one link token's hosted page as the simulation's browser sees
// it: the token and the session the page shows.
type page struct {
	s       *Service
	token   string
	session *recon.LinkSession
}

// open opens (or reopens) the page: GET /link/{token}.
func (p *page) open(ctx context.Context) error {
	return p.step(ctx, "open", func(*recon.LinkToken, *recon.LinkSession, recon.BankConnector) (recon.LinkStep, string, error) {
		return recon.LinkStep{Kind: recon.StepOpen}, "", nil
	})
}

// post sends a step's form as the page's own form does, to the session it
// shows.
func (p *page) post(ctx context.Context, action string, fields ...string) error {
	if p.session == nil {
		return fmt.Errorf("hub: the page has no session to post %s to", action)
	}
	f := StepForm{Action: action}
	for i := 0; i+1 < len(fields); i += 2 {
		dst := map[string]*string{"bank": &f.Bank, "account_type": &f.AccountType, "account_number": &f.AccountNumber,
			"national_id": &f.NationalID, "phone": &f.Phone, "otp": &f.OTP, "choice": &f.Choice}[fields[i]]
		if dst == nil {
			return fmt.Errorf("linking: the page has no field %s", fields[i])
		}
		*dst = fields[i+1]
	}
	return p.step(ctx, action, func(t *recon.LinkToken, s *recon.LinkSession, conn recon.BankConnector) (recon.LinkStep, string, error) {
		if s == nil || s.XID != p.session.XID {
			return recon.LinkStep{}, "", recon.ErrSessionMoved()
		}
		return p.s.ReadStep(ctx, t, s, conn, f)
	})
}

// step takes a step as the hosted page does (hub's linkPage): on an active
// token with a bank for its mode, the step read is recorded unless the bank
// refused what the user could correct (the page shows the refusal and the
// session stays) or it goes back. Then the page shows the session as it now is.
func (p *page) step(ctx context.Context, what string, read func(*recon.LinkToken, *recon.LinkSession, recon.BankConnector) (recon.LinkStep, string, error)) error {
	hash := recon.HashLinkToken(p.token)
	t, s, err := p.s.Store.LinkTokenByHash(ctx, hash)
	if err != nil {
		return p.refused(what, err)
	}
	if t.Status != recon.LinkTokenActive {
		return p.refused(what, recon.Errorf(recon.ECONFLICT, "the link token is %s", t.Status))
	}
	conn, err := p.s.Connector(t.Sandbox)
	if err != nil {
		return p.refused(what, err)
	}
	st, refusal, err := read(t, s, conn)
	if err != nil {
		return p.refused(what, err)
	}
	if refusal == "" && st.Kind != "back" {
		if _, _, err := p.s.Store.StepLinkSession(ctx, hash, st); err != nil {
			return p.refused(what, err)
		}
	}
	if _, s, err = p.s.Store.LinkTokenByHash(ctx, hash); err != nil {
		return err
	}
	if s != nil {
		p.session = s
	}
	return nil
}

// refused is the page's refusal of the step.
func (p *page) refused(what string, err error) error {
	return recon.Errorf(recon.ECONFLICT, "the hosted page refused the step %s: %s", what, recon.ErrorMessage(err))
}

package storetest

import (
	"fmt"
	"testing"
	"time"

	"recon"
)

// testHub runs the hub's storage behaviours: customers, webhook, link
// tokens and sessions, and the events they enqueue.
func testHub(t *testing.T, open Open) {
	run(t, "Customers", open, testHubCustomers)
	run(t, "CustomerIsolation", open, testHubCustomerIsolation)
	run(t, "TestTenant", open, testHubTestTenant)
	run(t, "Webhook", open, testHubWebhook)
	run(t, "LinkTokens", open, testHubLinkTokens)
	run(t, "EventsWanted", open, testHubEventsWanted)
	run(t, "Expiry", open, testHubExpiry)
	run(t, "BalanceChanges", open, testHubBalanceChanges)
}

func newHubCustomer(t *testing.T, s recon.Store, tenant recon.TenantID, name string) *recon.HubCustomer {
	t.Helper()
	c := &recon.HubCustomer{Tenant: tenant, FullName: name, Status: recon.HubCustomerActive}
	if err := s.CreateHubCustomer(t.Context(), c); err != nil {
		t.Fatalf("CreateHubCustomer: %v", err)
	}
	return c
}

func testHubCustomers(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1)
	c := &recon.HubCustomer{Tenant: co.Tenant(), FullName: "Công ty TNHH ABC", ShortName: "ABC", Status: recon.HubCustomerPending}
	if err := s.CreateHubCustomer(ctx, c); err != nil {
		t.Fatal(err)
	}
	if !recon.ValidXID(c.XID) || c.ID == 0 {
		t.Fatalf("created customer has id %d xid %q", c.ID, c.XID)
	}
	recent(t, "CreatedAt", c.CreatedAt)
	got, err := s.HubCustomer(ctx, co.Tenant(), c.XID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stored customer", c, got)

	// The name is unique per merchant.
	dup := &recon.HubCustomer{Tenant: co.Tenant(), FullName: "Công ty TNHH ABC", Status: recon.HubCustomerActive}
	wantCode(t, s.CreateHubCustomer(ctx, dup), recon.ECONFLICT, "")
	// Invalid input is refused before anything is written.
	wantCode(t, s.CreateHubCustomer(ctx, &recon.HubCustomer{Tenant: co.Tenant(), FullName: " ", Status: recon.HubCustomerActive}), recon.EINVALID, "full_name is required")
	wantCode(t, s.CreateHubCustomer(ctx, &recon.HubCustomer{Tenant: co.Tenant(), FullName: "X", Status: "Closed"}), recon.EINVALID, "")

	for i := range 4 {
		newHubCustomer(t, s, co.Tenant(), fmt.Sprintf("Shop %d", i))
	}
	list, total, err := s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if total != 5 || len(list) != 2 || list[0].FullName != "Shop 3" || list[1].FullName != "Shop 2" {
		t.Fatalf("page 1: total %d, %v", total, names(list))
	}
	list, _, err = s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 3, PerPage: 2})
	if err != nil || len(list) != 1 || list[0].XID != c.XID {
		t.Fatalf("page 3: %v %v", names(list), err)
	}
	list, total, err = s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10, Status: recon.HubCustomerPending})
	if err != nil || total != 1 || list[0].XID != c.XID {
		t.Fatalf("status filter: %d %v %v", total, names(list), err)
	}
	list, total, err = s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10, Q: "SHOP 1"})
	if err != nil || total != 1 || list[0].FullName != "Shop 1" {
		t.Fatalf("q filter: %d %v %v", total, names(list), err)
	}
	// LIKE's wildcards are searched for literally.
	if _, total, err = s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10, Q: "%"}); err != nil || total != 0 {
		t.Fatalf("q %%: %d %v", total, err)
	}
	list, _, err = s.HubCustomers(ctx, co.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 1, Ascending: true})
	if err != nil || list[0].XID != c.XID {
		t.Fatalf("ascending: %v %v", names(list), err)
	}

	upd, err := s.UpdateHubCustomer(ctx, co.Tenant(), c.XID, func(h *recon.HubCustomer) error {
		h.Status = recon.HubCustomerActive
		h.ShortName = "ABC2"
		return nil
	})
	if err != nil || upd.Status != recon.HubCustomerActive || upd.ShortName != "ABC2" || upd.FullName != c.FullName {
		t.Fatalf("update: %+v %v", upd, err)
	}
	// An update that fails validation or collides stores nothing.
	_, err = s.UpdateHubCustomer(ctx, co.Tenant(), c.XID, func(h *recon.HubCustomer) error { h.Status = "Gone"; return nil })
	wantCode(t, err, recon.EINVALID, "")
	_, err = s.UpdateHubCustomer(ctx, co.Tenant(), c.XID, func(h *recon.HubCustomer) error { h.FullName = "Shop 1"; h.ShortName = "X"; return nil })
	wantCode(t, err, recon.ECONFLICT, "")
	got, err = s.HubCustomer(ctx, co.Tenant(), c.XID)
	if err != nil || got.Status != recon.HubCustomerActive || got.ShortName != "ABC2" {
		t.Fatalf("after failed updates: %+v %v", got, err)
	}

	cnt, err := s.HubCustomerCounter(ctx, co.Tenant(), c.XID, "")
	if err != nil || cnt.BankAccounts != 0 || len(cnt.Days) != 0 || cnt.Total.Transactions != 0 {
		t.Fatalf("counter: %+v %v", cnt, err)
	}
	_, err = s.HubCustomerCounter(ctx, co.Tenant(), c.XID, "2026-13-01")
	wantCode(t, err, recon.EINVALID, "")
}

func names(list []*recon.HubCustomer) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.FullName)
	}
	return out
}

// testHubCustomerIsolation: one merchant never reaches another's customers,
// by xid, listing, update or counter (docs/design.md, D0, D8).
func testHubCustomerIsolation(t *testing.T, s recon.Store) {
	ctx := t.Context()
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	ca := newHubCustomer(t, s, a.Tenant(), "Same name")
	newHubCustomer(t, s, b.Tenant(), "Same name") // names are unique per merchant only
	_, err := s.HubCustomer(ctx, b.Tenant(), ca.XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = s.UpdateHubCustomer(ctx, b.Tenant(), ca.XID, func(*recon.HubCustomer) error { return nil })
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = s.HubCustomerCounter(ctx, b.Tenant(), ca.XID, "")
	wantCode(t, err, recon.ENOTFOUND, "")
	list, total, err := s.HubCustomers(ctx, b.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10})
	if err != nil || total != 1 || list[0].XID == ca.XID {
		t.Fatalf("b's list: %d %v %v", total, names(list), err)
	}
}

// testHubTestTenant: a test tenant's customers, link tokens and sessions
// read back with their tenant, its mode included (recon.TenantID, read from
// the tenant's row), and the live tenant does not reach them.
func testHubTestTenant(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1)
	tt, err := s.TestTenant(ctx, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	cu := newHubCustomer(t, s, tt.ID, "Khách thử")
	got, err := s.HubCustomer(ctx, tt.ID, cu.XID)
	if err != nil || got.Tenant != tt.ID || got.Tenant.Live() {
		t.Fatalf("test customer read back: %+v, %v", got, err)
	}
	_, err = s.HubCustomer(ctx, co.Tenant(), cu.XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	lt := newLinkToken(t, s, tt.ID, cu.XID, time.Minute)
	tok, _, err := s.LinkToken(ctx, tt.ID, lt.XID)
	if err != nil || tok.Tenant != tt.ID {
		t.Fatalf("test link token read back: %+v, %v", tok, err)
	}
	tok, sess, err := s.StepLinkSession(ctx, recon.HashLinkToken(lt.Token), recon.LinkStep{Kind: recon.StepOpen})
	if err != nil || tok.Tenant != tt.ID || sess == nil || sess.Tenant != tt.ID {
		t.Fatalf("test link session: %+v, %+v, %v", tok, sess, err)
	}
	if tok, sess, err = s.LinkTokenByHash(ctx, recon.HashLinkToken(lt.Token)); err != nil || tok.Tenant != tt.ID || sess == nil || sess.Tenant != tt.ID {
		t.Fatalf("test link token by hash: %+v, %+v, %v", tok, sess, err)
	}
	_, _, err = s.LinkToken(ctx, co.Tenant(), lt.XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	live := newHubCustomer(t, s, co.Tenant(), "Khách thật")
	if got, err := s.HubCustomer(ctx, co.Tenant(), live.XID); err != nil || got.Tenant != co.Tenant() || !got.Tenant.Live() {
		t.Fatalf("live customer read back: %+v, %v", got, err)
	}
}

func sptr[T any](v T) *T { return &v }

func testHubWebhook(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1)
	other := newCompany(t, s, 2)
	_, err := s.HubWebhook(ctx, co.Tenant())
	wantCode(t, err, recon.ENOTFOUND, "")

	// Create without a URL: refused, nothing stored.
	_, _, err = s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{Active: sptr(true)})
	wantCode(t, err, recon.EINVALID, "webhook_url is required")
	_, err = s.HubWebhook(ctx, co.Tenant())
	wantCode(t, err, recon.ENOTFOUND, "")

	w, created, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{URL: sptr("https://hooks.example.vn/hub")})
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	// Its own signing secret, not the secret every request carries.
	if len(w.Secret) != recon.SecretLen || len(w.SigningSecret) != recon.SecretLen || w.SigningSecret == w.Secret || w.AuthType != recon.AuthSecretKey || !w.Active ||
		w.ContentType != recon.HubContentType || len(w.AllowEvents) != 1 || w.AllowEvents[0] != "*" {
		t.Fatalf("created webhook: %+v", w)
	}
	got, err := s.HubWebhook(ctx, co.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stored webhook", w, got)

	// A partial change keeps every other field, the secret included.
	w2, created, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{Active: sptr(false)})
	if err != nil || created || w2.Active || w2.Secret != w.Secret || w2.SigningSecret != w.SigningSecret || w2.URL != w.URL || w2.AllowEvents[0] != "*" {
		t.Fatalf("partial change: %+v %v %v", w2, created, err)
	}
	// null allow_events is none; the alias is stored under the spec's name.
	w3, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{AllowEventsSet: true})
	if err != nil || len(w3.AllowEvents) != 0 || w3.AllowEvents == nil {
		t.Fatalf("null allow_events: %#v %v", w3.AllowEvents, err)
	}
	w4, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{AllowEventsSet: true,
		AllowEvents: []string{"BANK_ACCOUNT_INACTIVED", recon.EventLinkTokenCreated, recon.EventBankAccountInactivated}, Secret: sptr("s3cret-of-mine")})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "events", []string{recon.EventBankAccountInactivated, recon.EventLinkTokenCreated}, w4.AllowEvents)
	if w4.Secret != "s3cret-of-mine" || w4.SigningSecret != w.SigningSecret {
		t.Fatalf("secret: %q, signing secret %q: want the new secret, the signing secret kept", w4.Secret, w4.SigningSecret)
	}
	// Rotating the signing secret keeps the secret.
	w5, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{RotateSigningSecret: true})
	if err != nil || w5.Secret != w4.Secret || len(w5.SigningSecret) != recon.SecretLen || w5.SigningSecret == w4.SigningSecret {
		t.Fatalf("rotate the signing secret: %+v %v", w5, err)
	}
	w4 = w5
	// A bad event name stores nothing.
	_, _, err = s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{AllowEventsSet: true, AllowEvents: []string{"LINK_TOKEN_CREATED", "NOPE"}, Active: sptr(true)})
	var bad *recon.ErrInvalidEvent
	if err == nil || !asInvalidEvent(err, &bad) || bad.Name != "NOPE" {
		t.Fatalf("bad event: %v", err)
	}
	got, err = s.HubWebhook(ctx, co.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after a refused change", w4, got)
	// The delivery target is the webhook, for the dispatcher.
	tg, err := s.DeliveryTarget(ctx, co.Tenant().ID(), recon.DeliveryWebhook)
	if err != nil || tg.URL != w.URL || tg.Secret != "s3cret-of-mine" || tg.SigningSecret != w5.SigningSecret || tg.Active {
		t.Fatalf("delivery target: %+v %v", tg, err)
	}
	// Another merchant has none.
	_, err = s.HubWebhook(ctx, other.Tenant())
	wantCode(t, err, recon.ENOTFOUND, "")
}

func asInvalidEvent(err error, target **recon.ErrInvalidEvent) bool {
	e, ok := err.(*recon.ErrInvalidEvent)
	if ok {
		*target = e
	}
	return ok
}

package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
)

// hubEvent is a hub event as the outbox holds it.
type hubEvent struct {
	Name string
	Body recon.HubEventBody
}

// hubEventsOf lists the company's hub events in the order they were enqueued.
func hubEventsOf(t *testing.T, s recon.Store, tenant recon.TenantID) []hubEvent {
	t.Helper()
	list, err := s.Deliveries(t.Context(), tenant, recon.DeliveryFilter{Kind: recon.DeliveryWebhook, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(list)
	var out []hubEvent
	for _, d := range list {
		var b recon.HubEventBody
		if err := json.Unmarshal(d.Payload, &b); err != nil {
			t.Fatalf("payload %s: %v", d.Payload, err)
		}
		if b.Event != d.Event || b.Version != "1.0" || !recon.ValidXID(b.XID) || b.Timestamp == 0 {
			t.Fatalf("delivery %d: event %q, body %s", d.ID, d.Event, d.Payload)
		}
		out = append(out, hubEvent{d.Event, b})
	}
	return out
}

func eventNames(evs []hubEvent) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

// listenAll gives the company an active webhook subscribed to events.
func listenAll(t *testing.T, s recon.Store, tenant recon.TenantID, events ...string) {
	t.Helper()
	if len(events) == 0 {
		events = []string{"*"}
	}
	if _, _, err := s.ChangeHubWebhook(t.Context(), tenant, recon.HubWebhookChange{URL: sptr("https://hooks.example.vn/hub"),
		Active: sptr(true), AllowEventsSet: true, AllowEvents: events}); err != nil {
		t.Fatal(err)
	}
}

func newLinkToken(t *testing.T, s recon.Store, tenant recon.TenantID, customerXID string, ttl time.Duration) *recon.LinkToken {
	t.Helper()
	lt := &recon.LinkToken{Tenant: tenant, CustomerXID: customerXID, Purpose: recon.LinkPurposeLink, Language: "vi"}
	if err := s.CreateLinkToken(t.Context(), lt, ttl); err != nil {
		t.Fatalf("CreateLinkToken: %v", err)
	}
	return lt
}

func testHubLinkTokens(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co, other := newCompany(t, s, 1), newCompany(t, s, 2)
	cu := newHubCustomer(t, s, co.Tenant(), "Khách A")
	listenAll(t, s, co.Tenant())

	lt := newLinkToken(t, s, co.Tenant(), cu.XID, 30*time.Minute)
	if !recon.ValidXID(lt.XID) || len(lt.Token) < 40 || lt.TokenHash != recon.HashLinkToken(lt.Token) || lt.Status != recon.LinkTokenActive ||
		lt.CustomerID != cu.ID || lt.ExpiresAt.Sub(lt.CreatedAt) != 30*time.Minute {
		t.Fatalf("created: %+v", lt)
	}
	got, sessions, err := s.LinkToken(ctx, co.Tenant(), lt.XID)
	if err != nil || len(sessions) != 0 {
		t.Fatalf("LinkToken: %v %v", sessions, err)
	}
	want := *lt
	want.Token = ""
	diff(t, "stored token", &want, got)
	evs := hubEventsOf(t, s, co.Tenant())
	diff(t, "events", []string{recon.EventLinkTokenCreated}, eventNames(evs))
	if m := evs[0].Body.Metadata; m.LinkTokenXID != lt.XID || m.Purpose != recon.LinkPurposeLink || m.LinkSessionXID != nil {
		t.Fatalf("metadata: %+v", m)
	}

	// Refusals write nothing and enqueue nothing.
	for _, tc := range []struct {
		lt   recon.LinkToken
		code string
	}{
		{recon.LinkToken{Tenant: co.Tenant(), CustomerXID: cu.XID, Purpose: "LINK", Language: "vi"}, recon.EINVALID},
		{recon.LinkToken{Tenant: co.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeLink, Language: "fr"}, recon.EINVALID},
		{recon.LinkToken{Tenant: co.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeUnlink, Language: "vi"}, recon.EINVALID},
		{recon.LinkToken{Tenant: co.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeUnlink, Language: "vi", BankAccountXID: recon.NewXID()}, recon.ENOTFOUND},
		{recon.LinkToken{Tenant: co.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeLink, Language: "vi", RedirectURI: "javascript:alert(1)"}, recon.EINVALID},
		{recon.LinkToken{Tenant: other.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeLink, Language: "vi"}, recon.ENOTFOUND},
	} {
		err := s.CreateLinkToken(ctx, &tc.lt, time.Minute)
		wantCode(t, err, tc.code, "")
	}
	susp := newHubCustomer(t, s, co.Tenant(), "Suspended one")
	if _, err := s.UpdateHubCustomer(ctx, co.Tenant(), susp.XID, func(c *recon.HubCustomer) error { c.Status = recon.HubCustomerSuspended; return nil }); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreateLinkToken(ctx, &recon.LinkToken{Tenant: co.Tenant(), CustomerXID: susp.XID, Purpose: recon.LinkPurposeLink, Language: "vi"}, time.Minute), recon.EINVALID, "")
	diff(t, "events after refusals", []string{recon.EventLinkTokenCreated}, eventNames(hubEventsOf(t, s, co.Tenant())))

	// Another merchant can neither read nor revoke it.
	_, _, err = s.LinkToken(ctx, other.Tenant(), lt.XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = s.RevokeLinkToken(ctx, other.Tenant(), lt.XID)
	wantCode(t, err, recon.ENOTFOUND, "")

	rv, err := s.RevokeLinkToken(ctx, co.Tenant(), lt.XID)
	if err != nil || rv.Status != recon.LinkTokenRevoked || rv.EndedAt.IsZero() {
		t.Fatalf("revoke: %+v %v", rv, err)
	}
	_, err = s.RevokeLinkToken(ctx, co.Tenant(), lt.XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	evs = hubEventsOf(t, s, co.Tenant())
	diff(t, "events", []string{recon.EventLinkTokenCreated, recon.EventLinkTokenRevoked}, eventNames(evs))
	if m := evs[1].Body.Metadata; m.LinkTokenXID != lt.XID || m.Reason == "" {
		t.Fatalf("revoked metadata: %+v", m)
	}
	// A revoked token does not expire again.
	if n, _, err := s.ExpireHubLinks(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("expire after revoke: %d %v", n, err)
	}
}

// testHubEventsWanted: an event is enqueued only when the webhook exists, is
// active and subscribes to it at that moment.
func testHubEventsWanted(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1)
	cu := newHubCustomer(t, s, co.Tenant(), "Khách A")
	newLinkToken(t, s, co.Tenant(), cu.XID, time.Minute) // no webhook: nothing
	listenAll(t, s, co.Tenant(), recon.EventLinkTokenRevoked)
	a := newLinkToken(t, s, co.Tenant(), cu.XID, time.Minute) // not subscribed
	if _, err := s.RevokeLinkToken(ctx, co.Tenant(), a.XID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{Active: sptr(false)}); err != nil {
		t.Fatal(err)
	}
	b := newLinkToken(t, s, co.Tenant(), cu.XID, time.Minute)
	if _, err := s.RevokeLinkToken(ctx, co.Tenant(), b.XID); err != nil { // inactive: nothing
		t.Fatal(err)
	}
	if _, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{Active: sptr(true), AllowEventsSet: true, AllowEvents: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	c := newLinkToken(t, s, co.Tenant(), cu.XID, time.Minute)
	if _, _, err := s.ChangeHubWebhook(ctx, co.Tenant(), recon.HubWebhookChange{AllowEventsSet: true}); err != nil { // null: none
		t.Fatal(err)
	}
	if _, err := s.RevokeLinkToken(ctx, co.Tenant(), c.XID); err != nil {
		t.Fatal(err)
	}
	evs := hubEventsOf(t, s, co.Tenant())
	diff(t, "events", []string{recon.EventLinkTokenRevoked, recon.EventLinkTokenCreated}, eventNames(evs))
	if evs[0].Body.Metadata.LinkTokenXID != a.XID || evs[1].Body.Metadata.LinkTokenXID != c.XID {
		t.Fatalf("wrong tokens: %+v", evs)
	}
	// The timeline holds every event, wanted or not, each with the outbox
	// row that sends it when there is one.
	deliveries, err := s.Deliveries(ctx, co.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryWebhook, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token  *recon.LinkToken
		events []string
		sent   []int64
	}{
		{a, []string{recon.EventLinkTokenCreated, recon.EventLinkTokenRevoked}, []int64{0, deliveries[1].ID}},
		{b, []string{recon.EventLinkTokenCreated, recon.EventLinkTokenRevoked}, []int64{0, 0}},
		{c, []string{recon.EventLinkTokenCreated, recon.EventLinkTokenRevoked}, []int64{deliveries[0].ID, 0}},
	} {
		log, err := s.HubEventLog(ctx, co.Tenant(), strings.ToUpper(tc.token.XID))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var sent []int64
		for _, r := range log {
			names = append(names, r.Event)
			sent = append(sent, r.DeliveryID)
			if r.Metadata.LinkTokenXID != tc.token.XID || r.At.IsZero() {
				t.Fatalf("timeline of %s: %+v", tc.token.XID, r)
			}
		}
		diff(t, "timeline of "+tc.token.XID, tc.events, names)
		diff(t, "outbox rows of "+tc.token.XID, tc.sent, sent)
	}
	other := newCompany(t, s, 2)
	_, err = s.HubEventLog(ctx, other.Tenant(), a.XID)
	wantCode(t, err, recon.ENOTFOUND, "link token "+a.XID+" not found")
}

// testHubExpiry: tokens past their lifetime expire once, even with several
// sweepers at once; a used or revoked token never expires.
func testHubExpiry(t *testing.T, s recon.Store) {
	ctx := t.Context()
	co := newCompany(t, s, 1)
	cu := newHubCustomer(t, s, co.Tenant(), "Khách A")
	listenAll(t, s, co.Tenant(), recon.EventLinkTokenExpired)
	lts := make([]*recon.LinkToken, 5)
	for i := range lts {
		lts[i] = newLinkToken(t, s, co.Tenant(), cu.XID, time.Duration(i+1)*time.Minute)
	}
	start := lts[0].CreatedAt
	if n, _, err := s.ExpireHubLinks(ctx, start.Add(30*time.Second)); err != nil || n != 0 {
		t.Fatalf("before any expiry: %d %v", n, err)
	}
	// Eight sweepers at once past three expiries: each token ends once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 8 {
		wg.Go(func() {
			n, _, err := s.ExpireHubLinks(ctx, lts[2].ExpiresAt)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 3 {
		t.Fatalf("expired %d tokens, want 3", total)
	}
	evs := hubEventsOf(t, s, co.Tenant())
	diff(t, "events", []string{recon.EventLinkTokenExpired, recon.EventLinkTokenExpired, recon.EventLinkTokenExpired}, eventNames(evs))
	for i, e := range evs {
		if e.Body.Metadata.LinkTokenXID != lts[i].XID || e.Body.Metadata.Reason == "" {
			t.Fatalf("event %d: %+v", i, e.Body.Metadata)
		}
	}
	got, _, err := s.LinkToken(ctx, co.Tenant(), lts[0].XID)
	if err != nil || got.Status != recon.LinkTokenExpired {
		t.Fatalf("expired token: %+v %v", got, err)
	}
	_, err = s.RevokeLinkToken(ctx, co.Tenant(), lts[0].XID)
	wantCode(t, err, recon.ENOTFOUND, "")
	got, _, _ = s.LinkToken(ctx, co.Tenant(), lts[4].XID)
	if got.Status != recon.LinkTokenActive {
		t.Fatalf("unexpired token: %+v", got)
	}
}

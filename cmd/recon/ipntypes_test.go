package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// types reads notification_types of an ipn.JSON answer.
func types(v map[string]any) []string {
	var out []string
	list, _ := v["notification_types"].([]any)
	for _, t := range list {
		s, _ := t.(string)
		out = append(out, s)
	}
	return out
}

// TestIPNSetNotificationTypes: `recon ipn set --notification-types` saves
// the types by the rules of PUT /v1/ipn (docs/api-v2.md, Notifications),
// without it keeps the target's own (v1 types for a new one); a refused list
// changes nothing; `recon hub ipn set`, whose balance changes have no types,
// has no such flag and leaves the IPN target's types alone.
func TestIPNSetNotificationTypes(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := context.Background()
		dbURL := dbtest.NewURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
		set := func(extra ...string) map[string]any {
			t.Helper()
			return cliJSON(t, dbURL, append([]string{"ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn"}, extra...)...)
		}
		if got := types(set()); !slices.Equal(got, recon.DefaultIPNTypes) {
			t.Fatalf("a new target: notification_types %v, want %v", got, recon.DefaultIPNTypes)
		}
		if got := types(set("--notification-types", "ORDER_PAID, ORDER_PARTIALLY_PAID")); !slices.Equal(got, []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}) {
			t.Fatalf("--notification-types: %v", got)
		}
		if got := types(set("--rotate-signing-secret")); !slices.Equal(got, []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}) {
			t.Fatalf("a save without --notification-types: %v, want the target's own kept", got)
		}
		out, err := cli(t, dbURL, "ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn", "--notification-types", "ORDER_EXPIRED,REFUND_FAILED")
		if err != nil || !strings.Contains(out, "notification_types: ORDER_EXPIRED, REFUND_FAILED") {
			t.Fatalf("text output (%v):\n%s", err, out)
		}
		for _, c := range []struct{ value, want string }{
			{"ORDER_PAID,ORDER_SHIPPED", `unknown notification type "ORDER_SHIPPED" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED)`},
			{"", "notification_types needs at least one of"},
			{"ORDER_PAID,ORDER_PAID", `notification type "ORDER_PAID" is listed twice`},
		} {
			if out, err := cli(t, dbURL, "ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn2", "--notification-types", c.value); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("--notification-types %q: %v (%s), want %q", c.value, err, out, c.want)
			}
		}
		// The hub IPN: no flag, no types shown, the IPN target's kept.
		if _, err := cli(t, dbURL, "hub", "ipn", "set", "--company", co, "--url", "https://shop.example.vn/hub-ipn", "--notification-types", "ORDER_PAID"); err == nil ||
			!strings.Contains(err.Error(), "unknown flag: --notification-types") {
			t.Errorf("hub ipn set --notification-types: %v", err)
		}
		hub := cliJSON(t, dbURL, "hub", "ipn", "set", "--company", co, "--url", "https://shop.example.vn/hub-ipn")
		if _, ok := hub["notification_types"]; ok || hub["ipn_url"] != "https://shop.example.vn/hub-ipn" {
			t.Errorf("hub ipn set answered %v", hub)
		}
		db := dbtest.OpenURL(t, dbURL)
		var id int64
		fmt.Sscan(co, &id)
		target, err := db.DeliveryTarget(ctx, id, recon.DeliveryIPN)
		if err != nil || target.URL != "https://shop.example.vn/ipn" || target.Settings != `{"notification_types":["ORDER_EXPIRED","REFUND_FAILED"]}` {
			t.Fatalf("the IPN target after the refusals and the hub's save: %+v %v", target, err)
		}
	})
}

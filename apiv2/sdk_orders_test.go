package apiv2

import (
	"context"
	"errors"
	"testing"

	"github.com/recon-vn/recon/client"
	"recon"
	"recon/sqlstore/dbtest"
)

// TestSDKOrders drives the Go SDK's order calls (client/v2orders.go) against
// a real Handler: create (replayed with its idempotency key), get, list and
// iterate, add and cancel an account, cancel the order, and the 422
// invalid_state and 404 as *client.Error.
func TestSDKOrders(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	co, auth := company(t, db, "SM")
	_, srv := server(t, Config{Store: db, Auth: auth})
	c, err := client.New(srv.URL, client.WithTokenSource(client.StaticToken("admin")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acct := account(t, db, co.Tenant(), "0071000123456")
	v2 := c.V2()
	key := client.NewIdempotencyKey()
	in := client.V2OrderInput{OrderInvoiceNumber: "INV-1", Amount: 150000, BankAccountID: acct, Buyer: &client.V2Buyer{Email: "a@example.vn"},
		VA: &client.V2FirstVA{AmountMode: "open"}}
	o, err := v2.CreateOrder(ctx, in, client.WithIdempotencyKey(key))
	if err != nil || !recon.ValidXID(o.ID) || o.Status != "pending" || len(o.VirtualAccounts) != 1 || o.VirtualAccounts[0].Amount != nil || o.Buyer.Email != "a@example.vn" {
		t.Fatalf("CreateOrder: %+v %v", o, err)
	}
	var replayed bool
	again, err := v2.CreateOrder(ctx, in, client.WithIdempotencyKey(key), client.Replayed(&replayed))
	if err != nil || !replayed || again.ID != o.ID {
		t.Fatalf("replay: %+v %v (replayed %v)", again, err, replayed)
	}
	if got, err := v2.GetOrder(ctx, o.ID); err != nil || got.OrderInvoiceNumber != "INV-1" {
		t.Fatalf("GetOrder: %+v %v", got, err)
	}
	for i := 2; i <= 3; i++ {
		if _, err := v2.CreateOrder(ctx, client.V2OrderInput{OrderInvoiceNumber: "INV-" + string(rune('0'+i)), Amount: 1, BankAccountID: acct}); err != nil {
			t.Fatal(err)
		}
	}
	var invoices []string
	for o, err := range v2.Orders(ctx, client.V2OrderFilter{Status: "pending", PerPage: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		invoices = append(invoices, o.OrderInvoiceNumber)
	}
	if len(invoices) != 3 || invoices[0] != "INV-3" || invoices[2] != "INV-1" {
		t.Errorf("Orders: %v", invoices)
	}
	amount := int64(50000)
	va, err := v2.AddVirtualAccount(ctx, o.ID, client.V2VAOptions{Amount: &amount})
	if err != nil || va.AmountMode != "partial" || *va.Amount != 50000 || va.OrderID != o.ID {
		t.Fatalf("AddVirtualAccount: %+v %v", va, err)
	}
	if va, err = v2.CancelVirtualAccount(ctx, o.ID, va.VANumber); err != nil || va.Status != "cancelled" {
		t.Fatalf("CancelVirtualAccount: %+v %v", va, err)
	}
	list, meta, err := v2.ListVirtualAccounts(ctx, client.V2VAFilter{OrderID: o.ID}, 1)
	if err != nil || len(list) != 2 || meta.Total != 2 {
		t.Fatalf("ListVirtualAccounts: %+v %+v %v", list, meta, err)
	}
	if o, err = v2.CancelOrder(ctx, o.ID); err != nil || o.Status != "cancelled" {
		t.Fatalf("CancelOrder: %+v %v", o, err)
	}
	var e *client.Error
	if _, err = v2.CancelOrder(ctx, o.ID); !errors.As(err, &e) || e.StatusCode != 422 || e.Code != "invalid_state" {
		t.Errorf("cancel twice: %v", err)
	}
	if _, err = v2.GetOrder(ctx, recon.NewXID()); !errors.As(err, &e) || e.StatusCode != 404 || e.Code != client.CodeNotFound {
		t.Errorf("unknown order: %v", err)
	}
}

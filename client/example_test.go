package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/recon-vn/recon/client"
)

// A bank feed pushes transactions with a client credentials token; the
// token is fetched on first use and renewed before it expires.
func Example_bankFeed() {
	ctx := context.Background()
	c, err := client.New("https://recon.example.vn",
		client.WithClientCredentials(os.Getenv("RECON_CLIENT_ID"), os.Getenv("RECON_CLIENT_SECRET"), "transaction:write"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.PushTransactions(ctx, []client.TransactionInput{{
		BankAccountID: 3, TransactionDate: time.Now(), AmountIn: 150000,
		Content: "NGUYEN VAN A chuyen tien DH123456", ReferenceNumber: "FT25001123",
	}})
	var e *client.Error
	if errors.As(err, &e) {
		log.Fatalf("refused: %s %s %v (request %s)", e.Code, e.Message, e.Fields, e.RequestID)
	}
	fmt.Println(res[0].ID, res[0].Duplicate)
}

// Every transaction of January, page after page.
func ExampleClient_Transactions() {
	c, _ := client.New("https://recon.example.vn", client.WithTokenSource(client.StaticToken(os.Getenv("RECON_TOKEN"))))
	for tx, err := range c.Transactions(context.Background(), client.TransactionFilter{FromDate: "2025-01-01", ToDate: "2025-01-31", Limit: 100}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tx.TransactionDate, tx.AmountIn, tx.Code)
	}
}

// A user's tokens from the authorization code flow: the refresh token
// rotates at each refresh, and the new one must be stored.
func ExampleClient_RefreshTokenSource() {
	c, _ := client.New("https://recon.example.vn")
	saved := &client.Token{AccessToken: "…", RefreshToken: "…", Expiry: time.Now()}
	ts := c.RefreshTokenSource("rc_erp", "client-secret", saved, func(t *client.Token) {
		// store t.RefreshToken: the previous one no longer works
	})
	api, _ := client.New("https://recon.example.vn", client.WithTokenSource(ts))
	co, err := api.Company(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(co.ShortName, co.Role)
}

// The signature of a checkout form, over its signed fields in posting order.
func ExampleSignCheckout() {
	sig, err := client.SignCheckout("merchant-secret", []client.Field{
		{Name: "merchant", Value: "MC0001"}, {Name: "operation", Value: "PURCHASE"},
		{Name: "order_invoice_number", Value: "INV-1001"}, {Name: "order_amount", Value: "150000"},
		{Name: "currency", Value: "VND"}, {Name: "branch_code", Value: "not signed"},
	})
	fmt.Println(sig, err)

	// A signed value that could move a field boundary is refused, as the server does.
	_, err = client.SignCheckout("merchant-secret", []client.Field{{Name: "order_description", Value: "note,order_amount=1"}})
	fmt.Println(errors.Is(err, client.ErrBoundary))
	// Output:
	// JzvDXTcAZHMbpphqrOTjQZq0YnMabvMBiaOIU8wDPQg= <nil>
	// true
}

// A signed checkout form, to serve to the payer's browser (HTML) or post.
func ExampleNewCheckoutForm() {
	form, err := client.NewCheckoutForm("https://pay.example.vn", "merchant-secret", client.Checkout{
		MerchantID: "MC0001", InvoiceNumber: "INV-1001", Amount: 150000, Description: "Order 1001",
		SuccessURL: "https://shop.example.vn/paid",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(form.Action)
	for _, f := range form.Fields {
		fmt.Printf("%s=%s\n", f.Name, f.Value)
	}
	// Output:
	// https://pay.example.vn/v1/checkout/init
	// currency=VND
	// merchant=MC0001
	// operation=PURCHASE
	// order_amount=150000
	// order_description=Order 1001
	// order_invoice_number=INV-1001
	// payment_method=BANK_TRANSFER
	// signature=h1wXD0T8WvSCpmc1wQNWCuy2om6hflGXEYZQ9tJ68zw=
	// success_url=https://shop.example.vn/paid
}

// Cancelling an order that was paid meanwhile is a conflict.
func ExampleClient_CancelOrder() {
	c, _ := client.New("https://recon.example.vn", client.WithMerchant("MC0001", os.Getenv("RECON_MERCHANT_SECRET")))
	_, err := c.CancelOrder(context.Background(), "INV-1001")
	var e *client.Error
	if errors.As(err, &e) && e.Code == client.CodeConflict {
		if _, err := c.VoidOrder(context.Background(), "INV-1001"); err != nil {
			log.Fatal(err)
		}
	}
}

// Checking a notification by hand.
func ExampleVerifySignature() {
	body := []byte(`{"notification_type":"ORDER_PAID"}`)
	sig := "v1=cac166d32da34cf7775683df18334f47e8bc6ec48d9bce5d9d1ce327041f23d7"
	received := time.Unix(1735689600, 0).Add(30 * time.Second)
	fmt.Println(client.VerifySignature("whsec-example", "1735689600", sig, body, received, client.DefaultTolerance))
	err := client.VerifySignature("whsec-example", "1735689600", sig, body, received.Add(time.Hour), client.DefaultTolerance)
	fmt.Println(errors.Is(err, client.ErrSignature))
	// Output:
	// <nil>
	// true
}

// An IPN endpoint: only notifications signed with the signing secret reach
// the handler; others get 401.
func ExampleWebhookHandler() {
	h := client.WebhookHandler(os.Getenv("RECON_SIGNING_SECRET"), client.DefaultTolerance,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := client.NotificationFrom(r.Context())
			ipn, err := n.IPN()
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if ipn.NotificationType == client.IPNOrderPaid {
				// mark ipn.Order.OrderInvoiceNumber paid, once per n.DeliveryID
			}
			w.WriteHeader(http.StatusOK)
		}))
	http.Handle("POST /recon/ipn", h)
}

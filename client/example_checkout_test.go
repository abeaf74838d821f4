package client_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/recon-vn/recon/client"
)

// A shop's whole integration of the hosted checkout, from the signed form
// to a verified ORDER_PAID (docs/getting-started.md, docs/api.md, Payment
// gateway): the shop signs a checkout with its merchant credentials (`recon
// merchant credentials`), the payer's browser posts it and pays by bank
// transfer, and Recon POSTs an IPN, signed with the IPN target's signing
// secret (`recon ipn set` shows it once), which the shop verifies before it
// trusts a word of it.
//
// The example runs by itself: the IPN Recon would send is played by a
// request signed as the server signs it, so `go test` checks what it
// prints.
func Example_checkoutToVerifiedIPN() {
	const (
		recon         = "https://pay.example.vn" // the server's base URL
		merchantID    = "M26HOASEN"              // recon merchant credentials
		secretKey     = "merchant-secret"        // signs the checkout form
		signingSecret = "ipn-signing-secret"     // verifies the IPNs
	)

	// 1. The checkout: a form the payer's browser posts to /v1/checkout/init
	// (serve form.HTML(), which posts itself; or, server side,
	// c.CreateCheckout(ctx, form) returns the hosted page's URL).
	form, err := client.NewCheckoutForm(recon, secretKey, client.Checkout{
		MerchantID: merchantID, InvoiceNumber: "SHOP-1001", Amount: 250000,
		Description: "Áo dài lụa", CustomerID: "KH-42",
		SuccessURL: "https://shop.example.vn/thanks", CancelURL: "https://shop.example.vn/cart",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("post to", form.Action)
	for _, f := range form.Fields {
		if f.Name != "signature" {
			fmt.Printf("  %s=%s\n", f.Name, f.Value)
		}
	}

	// 2. The shop's IPN endpoint: only a notification signed with the
	// signing secret, within the replay window, reaches the function;
	// deduplicate on DeliveryID (a retry carries the same one).
	paid := make(chan string, 1)
	receiver := &client.Receiver{Secrets: []string{signingSecret}}
	endpoint := httptest.NewServer(receiver.HandleIPN(func(ctx context.Context, n *client.Notification, ipn *client.IPN) error {
		if ipn.NotificationType == client.IPNOrderPaid {
			paid <- ipn.Order.OrderInvoiceNumber + " " + ipn.Order.OrderStatus + " " + ipn.Transaction.TransactionAmount
		}
		return nil // 200: Recon stops sending it
	}))
	defer endpoint.Close()

	// 3. The payer transferred 250,000 VND with the order's payment code:
	// Recon sends ORDER_PAID (here played, signed as Recon signs it).
	body := `{"timestamp":1767225600,"notification_type":"ORDER_PAID",` +
		`"order":{"order_status":"CAPTURED","order_amount":"250000.00","order_invoice_number":"SHOP-1001"},` +
		`"transaction":{"transaction_status":"APPROVED","transaction_amount":"250000.00"}}`
	fmt.Println("forged:", post(endpoint.URL, body, "wrong-secret"))
	fmt.Println("signed:", post(endpoint.URL, body, signingSecret))
	fmt.Println("paid:", <-paid)

	// Output:
	// post to https://pay.example.vn/v1/checkout/init
	//   cancel_url=https://shop.example.vn/cart
	//   currency=VND
	//   customer_id=KH-42
	//   merchant=M26HOASEN
	//   operation=PURCHASE
	//   order_amount=250000
	//   order_description=Áo dài lụa
	//   order_invoice_number=SHOP-1001
	//   payment_method=BANK_TRANSFER
	//   success_url=https://shop.example.vn/thanks
	// forged: 401 Unauthorized
	// signed: 200 OK
	// paid: SHOP-1001 CAPTURED 250000.00
}

// post sends body to url as Recon sends a notification: X-Recon-Timestamp
// and X-Recon-Signature v1=hex(HMAC-SHA256(secret, timestamp + "." + body)).
func post(url, body, secret string) string {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + body))
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(client.HeaderTimestamp, ts)
	req.Header.Set(client.HeaderSignature, "v1="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set(client.HeaderDelivery, "01JH0000000000000000000000")
	req.Header.Set(client.HeaderEvent, client.IPNOrderPaid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	return resp.Status
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recon-vn/recon/client"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// sdkReceiver is a merchant's IPN endpoint built with the SDK: the real
// server's notifications go through client.WebhookHandler, whose signing
// secret is known only once `recon ipn set` has made it.
type sdkReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	handler  http.Handler
	verified []*client.Notification
	refused  int
}

func newSDKReceiver(t *testing.T) *sdkReceiver {
	rc := &sdkReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		h := rc.handler
		rc.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusUnauthorized {
			rc.mu.Lock()
			rc.refused++
			rc.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	rc.setSecret("not-yet-known")
	t.Cleanup(rc.Close)
	return rc
}

func (rc *sdkReceiver) setSecret(secret string) {
	h := client.WebhookHandler(secret, time.Minute, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, ok := client.NotificationFrom(r.Context())
		if !ok {
			http.Error(w, "no notification", 500)
			return
		}
		rc.mu.Lock()
		rc.verified = append(rc.verified, n)
		rc.mu.Unlock()
	}))
	rc.mu.Lock()
	rc.handler = h
	rc.mu.Unlock()
}

// notifications returns the verified notifications of the event.
func (rc *sdkReceiver) notifications(event string) []*client.Notification {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*client.Notification
	for _, n := range rc.verified {
		if n.Event == event {
			out = append(out, n)
		}
	}
	return out
}

// TestSDKEndToEnd drives a real server on both engines through the Go SDK
// (package client): OAuth2 client credentials, the /api/v1 surfaces with a
// user token, the gateway with a checkout form the SDK signs, and the
// real ORDER_PAID IPN verified by the SDK's WebhookHandler.
func TestSDKEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		rc := newSDKReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		rc.setSecret(m.signingSecret)
		var account int64
		fmt.Sscan(m.account, &account)

		cl := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "erp",
			"--scopes", "company transaction:read transaction:write bank-account:read delivery:read delivery:write")
		clientID, clientSecret := cl["client_id"].(string), cl["client_secret"].(string)

		// A bank feed: client credentials, fetched by the SDK's token source.
		feed, err := client.New(base, client.WithClientCredentials(clientID, clientSecret, "transaction:write"))
		if err != nil {
			t.Fatal(err)
		}
		day := time.Date(2025, 3, 1, 9, 0, 0, 0, time.FixedZone("ICT", 7*3600))
		var batch []client.TransactionInput
		for i := range 5 {
			batch = append(batch, client.TransactionInput{BankAccountID: account, TransactionDate: day.Add(time.Duration(i) * time.Minute),
				AmountIn: int64(10000 * (i + 1)), Content: fmt.Sprintf("chuyen tien %d", i), ReferenceNumber: fmt.Sprintf("FT-SDK-%d", i)})
		}
		pushed, err := feed.PushTransactions(ctx, batch)
		if err != nil || len(pushed) != 5 || pushed[0].Duplicate {
			t.Fatalf("push: %+v %v", pushed, err)
		}
		again, err := feed.PushTransactions(ctx, batch[:1])
		if err != nil || !again[0].Duplicate || again[0].ID != pushed[0].ID {
			t.Fatalf("push again: %+v %v", again, err)
		}
		// A bad item: the API's envelope, decoded with the field at fault.
		_, err = feed.PushTransactions(ctx, []client.TransactionInput{{BankAccountID: account, TransactionDate: day, ReferenceNumber: "FT-BAD"}})
		var e *client.Error
		if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != client.CodeValidation || len(e.Fields) != 1 || e.RequestID == "" {
			t.Fatalf("bad push: %#v", err)
		}
		// The feed token has no user: the company API refuses it.
		if _, err := feed.Company(ctx); !errors.As(err, &e) || e.StatusCode != 403 || e.Code != client.CodeForbidden {
			t.Fatalf("company with a feed token: %v", err)
		}

		// A user token (recon token issue) for the Admin.
		tok := cliJSON(t, dbURL, "token", "issue", "--client", clientID, "--user", "admin@saomai.vn",
			"--scopes", "company transaction:read bank-account:read delivery:read delivery:write")["access_token"].(string)
		api, err := client.New(base, client.WithTokenSource(client.StaticToken(tok)), client.WithMerchant(m.merchantID, m.secret))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for tx, err := range api.Transactions(ctx, client.TransactionFilter{FromDate: "2025-03-01", ToDate: "2025-03-01", Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tx.ID)
		}
		if len(ids) != 5 || ids[0] != pushed[4].ID || ids[4] != pushed[0].ID {
			t.Fatalf("iterated %v, pushed %+v", ids, pushed)
		}
		tx, err := api.GetTransaction(ctx, pushed[2].ID)
		if err != nil || tx.AmountIn != 30000 || tx.ReferenceNumber != "FT-SDK-2" || tx.TransactionDate != "2025-03-01 09:02:00" {
			t.Fatalf("transaction: %+v %v", tx, err)
		}

		co, err := api.Company(ctx)
		if err != nil || co.ShortName != "SAOMAI" || co.Role != "Admin" || len(co.Configurations.PaymentCodeFormats) != 1 {
			t.Fatalf("company: %+v %v", co, err)
		}
		formats := append(co.Configurations.PaymentCodeFormats, client.PaymentCodeFormat{Prefix: "hd", SuffixFrom: 4, SuffixTo: 6, CharacterType: client.NumberAndLetter, IsActive: false})
		cfg, err := api.SetPaymentCodeFormats(ctx, formats)
		if err != nil || len(cfg.PaymentCodeFormats) != 2 || cfg.PaymentCodeFormats[1].Prefix != "HD" || cfg.PaymentCodeFormats[1].IsActive {
			t.Fatalf("set formats: %+v %v", cfg, err)
		}
		bad := append(formats, client.PaymentCodeFormat{Prefix: "XY", SuffixFrom: 8, SuffixTo: 4, CharacterType: client.NumberOnly, IsActive: true})
		if _, err := api.SetPaymentCodeFormats(ctx, bad); !errors.As(err, &e) || e.StatusCode != 400 || e.Code != client.CodeValidation || !strings.HasPrefix(e.Message, "Format #3:") {
			t.Fatalf("refused format: %v", err)
		}

		accounts, err := api.BankAccounts(ctx)
		if err != nil || len(accounts) != 1 || accounts[0].ID != account || accounts[0].BankBrandName != "Vietcombank" {
			t.Fatalf("bank accounts: %+v %v", accounts, err)
		}

		// Statement upload (with the feed's transaction:write token).
		csv := "Transaction_Date,Amount_In,Amount_Out,Transaction_Content,Reference_Number\n" +
			"2025-03-02 08:00:00,70000,,tien hang,FT-STMT-1\n2025-03-02 09:00:00,,5000,phi,FT-STMT-2\n"
		imp, err := feed.UploadStatement(ctx, account, strings.NewReader(csv), client.StatementOptions{})
		if err != nil || imp.Imported != 2 || imp.Format != "csv" {
			t.Fatalf("upload: %+v %v", imp, err)
		}
		if imp, err = feed.UploadStatement(ctx, account, strings.NewReader(csv), client.StatementOptions{Format: client.FormatCSV}); err != nil || imp.Duplicates != 2 {
			t.Fatalf("upload again: %+v %v", imp, err)
		}

		// Gateway: a checkout form signed by the SDK, posted, paid.
		form, err := client.NewCheckoutForm(base, m.secret, client.Checkout{MerchantID: m.merchantID, InvoiceNumber: "SDK-1", Amount: 120000,
			Description: "Đơn hàng SDK-1, giao nhanh", CustomerID: "KH-SDK", SuccessURL: "https://shop.example.vn/ok", CustomData: `["gift"]`})
		if err != nil {
			t.Fatal(err)
		}
		page, err := api.CreateCheckout(ctx, form)
		if err != nil || !strings.HasPrefix(page, base+"/v1/checkout/"+m.merchantID+"/SDK-1?t=") {
			t.Fatalf("checkout: %q %v", page, err)
		}
		if resp, err := http.Get(page); err != nil || resp.StatusCode != 200 {
			t.Fatalf("hosted page: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		// The browser's way: url.Values posts the fields in the signed order too.
		form2, _ := client.NewCheckoutForm(base, m.secret, client.Checkout{MerchantID: m.merchantID, InvoiceNumber: "SDK-2", Amount: 50000})
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if resp, err := noFollow.PostForm(form2.Action, form2.Values()); err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("posting url.Values: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		// A form signed with another secret is refused in the gateway envelope.
		form3, _ := client.NewCheckoutForm(base, "wrong-secret", client.Checkout{MerchantID: m.merchantID, InvoiceNumber: "SDK-3", Amount: 1000})
		if _, err := api.CreateCheckout(ctx, form3); !errors.As(err, &e) || e.StatusCode != 400 || e.Code != client.CodeValidation || !strings.Contains(e.Message, "signature") {
			t.Fatalf("bad signature: %v", err)
		}

		order, err := api.GetOrder(ctx, "SDK-1")
		if err != nil || order.Status != client.OrderAwaitingPayment || order.Amount != "120000.00" || !strings.HasPrefix(order.Payment.Code, "DH") {
			t.Fatalf("order: %+v %v", order, err)
		}
		if _, err := feed.SimulateTransfer(ctx, client.SandboxTransfer{BankAccountID: account, Amount: 120000,
			Content: "thanh toan " + order.Payment.Code}); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "a verified ORDER_PAID", 10*time.Second, func() bool { return len(rc.notifications("ORDER_PAID")) > 0 })
		n := rc.notifications("ORDER_PAID")[0]
		ipn, err := n.IPN()
		if err != nil || ipn.NotificationType != client.IPNOrderPaid || ipn.Order.OrderInvoiceNumber != "SDK-1" ||
			ipn.Order.OrderStatus != client.OrderCaptured || ipn.Transaction.TransactionAmount != "120000.00" ||
			ipn.Customer.CustomerID != "KH-SDK" || string(ipn.Order.CustomData) != `["gift"]` || !ipn.Order.CustomDataSigned || n.DeliveryID == "" {
			t.Fatalf("IPN %+v %v (notification %+v)", ipn, err, n)
		}
		// The server's signer and the SDK's verifier agree; a wrong secret does not.
		ts := time.Now().Unix()
		if err := client.VerifySignature(m.signingSecret, fmt.Sprint(ts), delivery.Sign(m.signingSecret, ts, n.Body), n.Body, time.Now(), time.Minute); err != nil {
			t.Fatal(err)
		}
		// An unsigned post to the receiver is refused with 401.
		if resp, err := http.Post(rc.URL+"/ipn", "application/json", strings.NewReader(string(n.Body))); err != nil || resp.StatusCode != 401 {
			t.Fatalf("unsigned post: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}

		var invoices []string
		for o, err := range api.Orders(ctx, client.OrderFilter{PerPage: 1, Ascending: true}) {
			if err != nil {
				t.Fatal(err)
			}
			invoices = append(invoices, o.InvoiceNumber+":"+o.Status)
		}
		if got := strings.Join(invoices, " "); got != "SDK-1:CAPTURED SDK-2:AUTHENTICATION_NOT_NEEDED" {
			t.Fatalf("orders: %s", got)
		}
		if o, err := api.CancelOrder(ctx, "SDK-2"); err != nil || o.Status != client.OrderCancelled {
			t.Fatalf("cancel: %+v %v", o, err)
		}
		if _, err := api.CancelOrder(ctx, "SDK-1"); !errors.As(err, &e) || e.StatusCode != 409 || e.Code != client.CodeConflict || e.Message == "" {
			t.Fatalf("cancel a paid order: %v", err)
		}
		if o, err := api.VoidOrder(ctx, "SDK-1"); err != nil || o.Status != client.OrderCancelled {
			t.Fatalf("void: %+v %v", o, err)
		}
		if _, err := api.GetOrder(ctx, "NOPE"); !errors.As(err, &e) || e.StatusCode != 404 || e.Code != client.CodeNotFound {
			t.Fatalf("unknown order: %v", err)
		}
		testkit.WaitFor(t, "a verified TRANSACTION_VOID", 10*time.Second, func() bool { return len(rc.notifications("TRANSACTION_VOID")) > 0 })

		// Reconciliation: the order's transfer is matched.
		rep, err := api.Reconciliation(ctx, "", "")
		if err != nil || rep.Summary["matched"].Count != 1 || rep.Summary["matched"].Amount != 120000 {
			t.Fatalf("reconciliation: %+v %v", rep, err)
		}

		// Deliveries: both IPNs delivered; show one, replay it, and the
		// receiver gets it again with the same delivery id.
		var paid *client.Delivery
		count := 0
		for d, err := range api.Deliveries(ctx, client.DeliveryFilter{Kind: "ipn", Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			count++
			if d.Event == "ORDER_PAID" {
				paid = &d
			}
		}
		if count != 2 || paid == nil {
			t.Fatalf("%d deliveries, ORDER_PAID %v", count, paid)
		}
		testkit.WaitFor(t, "ORDER_PAID delivered", 10*time.Second, func() bool {
			d, err := api.GetDelivery(ctx, paid.ID)
			return err == nil && d.Status == "delivered"
		})
		d, err := api.GetDelivery(ctx, paid.ID)
		if err != nil || len(d.AttemptLog) != 1 || d.AttemptLog[0].StatusCode != 200 || !strings.Contains(string(d.Payload), `"SDK-1"`) {
			t.Fatalf("delivery: %+v %v", d, err)
		}
		if d, err = api.ReplayDelivery(ctx, paid.ID); err != nil || d.ID != paid.ID {
			t.Fatalf("replay: %+v %v", d, err)
		}
		testkit.WaitFor(t, "the replayed ORDER_PAID", 10*time.Second, func() bool { return len(rc.notifications("ORDER_PAID")) == 2 })
		if ns := rc.notifications("ORDER_PAID"); ns[1].DeliveryID != ns[0].DeliveryID {
			t.Fatalf("replay came with delivery id %s, first %s", ns[1].DeliveryID, ns[0].DeliveryID)
		}
		// The log's figures, a test notification, the memo tester.
		stats, err := api.GetDeliveryStats(ctx, "2000-01-01 00:00:00")
		if err != nil || len(stats) != 1 || stats[0].Kind != "ipn" || stats[0].Delivered < 1 || stats[0].SuccessRate <= 0 {
			t.Fatalf("stats: %+v %v", stats, err)
		}
		test, err := api.SendTestNotification(ctx, "ipn")
		if err != nil || test.Event != "TEST_NOTIFICATION" {
			t.Fatalf("test notification: %+v %v", test, err)
		}
		testkit.WaitFor(t, "the test notification", 10*time.Second, func() bool { return len(rc.notifications("TEST_NOTIFICATION")) == 1 })
		if n, err := api.ReplayFailed(ctx, "2000-01-01 00:00:00", "ipn"); err != nil || n != 0 {
			t.Fatalf("replay failed: %d %v (nothing failed)", n, err)
		}
		if _, err := api.ReplayFailed(ctx, "yesterday", ""); !errors.As(err, &e) || e.StatusCode != 400 {
			t.Fatalf("replay failed since yesterday: %v", err)
		}
		ex, err := api.TryMemo(ctx, "chuyen tien DH12345 nhe", []client.PaymentCodeFormat{{Prefix: "DH", SuffixFrom: 4, SuffixTo: 6, CharacterType: "NumberOnly", IsActive: true}})
		if err != nil || ex.Code == nil || *ex.Code != "DH12345" || len(ex.Candidates) != 1 || !ex.Candidates[0].Match {
			t.Fatalf("try memo: %+v %v", ex, err)
		}
		rc.mu.Lock()
		refused := rc.refused
		rc.mu.Unlock()
		if refused != 1 { // only the unsigned post above
			t.Fatalf("the receiver refused %d notifications", refused)
		}
	})
}

// TestSDKRefreshTokens runs the authorization code flow on a real server on
// both engines (the login page played by hand), exchanges the code with the
// SDK, and lets the SDK's refresh-token source renew an expired access
// token for concurrent callers: one refresh, the rotated refresh token
// handed to the application, the old one refused by the server.
func TestSDKRefreshTokens(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL)
		company := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Sao Mai", "--short-name", "SAOMAI")["id"])
		cliJSON(t, dbURL, "user", "create", "--company", company, "--email", "admin@saomai.vn", "--role", "Admin", "--password", "correct horse")
		const redirect = "https://erp.example.vn/callback"
		cl := cliJSON(t, dbURL, "client", "create", "--company", company, "--name", "erp", "--scopes", "company offline_access", "--redirect-uri", redirect)
		clientID, clientSecret := cl["client_id"].(string), cl["client_secret"].(string)

		// The browser's part: the login and consent form, posted with PKCE.
		verifier := "sdk-test-verifier-0123456789-0123456789-0123456789"
		sum := sha256.Sum256([]byte(verifier))
		form := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "scope": {"company offline_access"},
			"state": {"state-12345678"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
			"email": {"admin@saomai.vn"}, "password": {"correct horse"}, "consent": {"allow"}}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.PostForm(base+"/oauth/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
			t.Fatalf("consent: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}

		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := c.ExchangeCode(ctx, clientID, clientSecret, loc.Query().Get("code"), verifier, redirect)
		if err != nil || tok.RefreshToken == "" || tok.Expiry.IsZero() {
			t.Fatalf("exchange: %+v %v", tok, err)
		}
		first := tok.RefreshToken
		tok.Expiry = time.Now().Add(-time.Minute) // as if an hour had passed
		var mu sync.Mutex
		var rotated []*client.Token
		api, err := client.New(base, client.WithRefreshToken(clientID, clientSecret, tok, func(t *client.Token) {
			mu.Lock()
			rotated = append(rotated, t)
			mu.Unlock()
		}))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				if co, err := api.Company(ctx); err != nil || co.ShortName != "SAOMAI" {
					errs <- fmt.Errorf("company: %+v %v", co, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(rotated) != 1 || rotated[0].RefreshToken == "" || rotated[0].RefreshToken == first {
			t.Fatalf("rotations: %+v", rotated)
		}
		// The old refresh token was used up by the rotation.
		var e *client.Error
		if _, err := c.RefreshToken(ctx, clientID, clientSecret, first); !errors.As(err, &e) || e.StatusCode != 400 || e.Code != "invalid_grant" {
			t.Fatalf("old refresh token: %v", err)
		}
		// Revoking the grant ends it: the API refuses the current token.
		if err := c.RevokeToken(ctx, clientID, clientSecret, rotated[0].RefreshToken); err != nil {
			t.Fatal(err)
		}
		if _, err := api.Company(ctx); !errors.As(err, &e) || e.StatusCode != 401 || e.Code != client.CodeUnauthorized {
			t.Fatalf("after revocation: %v", err)
		}
	})
}

// Package demo seeds the data `recon serve --demo` shows (a company with
// its users, OAuth2 clients, merchant credentials, bank accounts, orders and
// a few hundred transactions, and its test mode) and prints the banner of
// ready-to-paste commands with working tokens (docs/testmode.md).
package demo

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"
	"time"

	"recon"
)

// The demo client has a fixed id so that a later `serve --demo` on the same
// database finds the demo company again and prints fresh tokens; so has its
// test-mode twin (docs/design.md, D10).
const (
	clientID       = "demo-erp"
	testClientID   = recon.TestClientPrefix + "demo-erp"
	testMerchantID = recon.TestMerchantPrefix + "DEMO-SAOMAI"
)

// The demo company's users, who all sign in to the dashboard (and the
// consent page) with their e-mail and password, printed in the banner: the
// Admin, the Accountant and the Member.
const (
	AdminEmail         = "admin@saomai.vn"
	AdminPassword      = "saomai-demo-admin"
	AccountantEmail    = "ketoan@saomai.vn"
	AccountantPassword = "saomai-demo-ketoan"
	MemberEmail        = "nhanvien@saomai.vn"
	MemberPassword     = "saomai-demo-nhanvien"
	memberEmail        = MemberEmail
)

// Store is what the demo reads and writes.
type Store interface {
	recon.IngestStore
	// Empty reports whether the database holds no company (sqlstore's
	// DB.Empty).
	Empty(ctx context.Context) (bool, error)
	CreateCompany(ctx context.Context, c *recon.Company) error
	ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []recon.PaymentCodeFormat) (*recon.CompanyConfig, error)
	TestTenant(ctx context.Context, companyID int64) (*recon.Tenant, error)
	CreateUser(ctx context.Context, u *recon.User) error
	Client(ctx context.Context, id string) (*recon.Client, error)
	SetMerchant(ctx context.Context, m *recon.Merchant) error
	MerchantOf(ctx context.Context, tenant recon.TenantID) (*recon.Merchant, error)
	CreateBankAccount(ctx context.Context, b *recon.BankAccount) error
	BankAccounts(ctx context.Context, tenant recon.TenantID) ([]*recon.BankAccount, error)
	CreateOrder(ctx context.Context, o *recon.Order) error
}

// Auth is what the demo asks of the authorization server (cmd/recon gives
// it oauth's): to register a confidential OAuth2 client, returning its
// secret; to hash a user's password; to issue an access token.
type Auth interface {
	RegisterClient(ctx context.Context, c *recon.Client) (secret string, err error)
	HashPassword(password string) (string, error)
	IssueToken(ctx context.Context, clientID, userEmail string, scopes []string, ttl time.Duration) (string, error)
}

// Options are what a Seed needs besides the store and the authorization
// server.
type Options struct {
	BaseURL  string         // the server's, in the printed commands
	Location *time.Location // the operator's time zone: the transactions' days (UTC when nil)
	Clock    recon.Clock    // today (recon.SystemClock when nil)
	Rand     io.Reader      // the merchant credentials' randomness (crypto/rand when nil)
	Out      io.Writer      // the banner
}

// Seed fills an empty database with a demo company, its users and an
// OAuth2 client, then prints curl commands with working tokens. On a database
// that already holds the demo it only prints fresh tokens; on any other
// non-empty database it seeds nothing.
func Seed(ctx context.Context, db Store, auth Auth, o Options) error {
	if o.Clock == nil {
		o.Clock = recon.SystemClock{}
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	baseURL, out := o.BaseURL, o.Out
	secret := ""
	client, err := db.Client(ctx, clientID)
	switch recon.ErrorCode(err) {
	case "":
	case recon.ENOTFOUND:
		empty, err := db.Empty(ctx)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintln(out, "recon: --demo: the database already holds data that is not the demo's; nothing seeded")
			return nil
		}
		if client, secret, err = seedData(ctx, db, auth, o.Rand, o.Location, o.Clock.Now()); err != nil {
			return err
		}
	default:
		return err
	}
	adminToken, err := auth.IssueToken(ctx, client.ID, AdminEmail, []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeBankAccountRead}, time.Hour)
	if err != nil {
		return err
	}
	// A Member's role allows neither the company API nor money data: its
	// token carries the profile scope only.
	memberToken, err := auth.IssueToken(ctx, client.ID, memberEmail, []string{recon.ScopeProfile}, time.Hour)
	if err != nil {
		return err
	}
	feedToken, err := auth.IssueToken(ctx, client.ID, "", []string{recon.ScopeTransactionWrite}, time.Hour)
	if err != nil {
		return err
	}
	merchant, err := db.MerchantOf(ctx, recon.LiveTenant(client.Company))
	if err != nil {
		return err
	}
	test, err := seedTestMode(ctx, db, auth, o.Rand, client.Company)
	if err != nil {
		return err
	}
	if err := banner.Execute(out, map[string]string{
		"Base": baseURL, "ClientID": client.ID, "Secret": secret,
		"Shown":      map[bool]string{true: secret, false: "(printed when the demo was first seeded)"}[secret != ""],
		"CurlSecret": map[bool]string{true: secret, false: "CLIENT_SECRET"}[secret != ""],
		"AdminEmail": AdminEmail, "AdminPassword": AdminPassword, "Company": strconv.FormatInt(client.Company, 10),
		"AccountantEmail": AccountantEmail, "AccountantPassword": AccountantPassword, "MemberEmail": MemberEmail, "MemberPassword": MemberPassword,
		"AdminToken": adminToken, "MemberToken": memberToken, "FeedToken": feedToken,
		"MerchantID": merchant.MerchantID, "MerchantSecret": merchant.SecretKey,
		"Scopes": strings.Join(client.Scopes, " "), "Redirect": client.RedirectURIs[0],
	}); err != nil {
		return err
	}
	test["Base"] = baseURL
	test["Company"] = strconv.FormatInt(client.Company, 10)
	return testBanner.Execute(out, test)
}

// seedTestMode gives the demo company its test mode (once: a later
// `serve --demo` finds it, and seeds it on a demo database made before test
// mode existed): a test OAuth2 client, test merchant credentials and a test
// bank account with the live first account's number. It returns what the
// test-mode part of the banner shows, with fresh tokens.
func seedTestMode(ctx context.Context, db Store, auth Auth, random io.Reader, companyID int64) (map[string]string, error) {
	tenant, err := db.TestTenant(ctx, companyID)
	if err != nil {
		return nil, err
	}
	secret := ""
	client, err := db.Client(ctx, testClientID)
	switch recon.ErrorCode(err) {
	case "":
	case recon.ENOTFOUND:
		client = &recon.Client{
			ID: testClientID, Company: companyID, Name: "Sao Mai ERP (demo, test mode)", Test: true,
			Scopes: recon.Scopes, RedirectURIs: []string{"http://127.0.0.1:9999/callback"},
		}
		if secret, err = auth.RegisterClient(ctx, client); err != nil {
			return nil, err
		}
		m := &recon.Merchant{Tenant: tenant.ID, MerchantID: testMerchantID, SecretKey: recon.NewMerchantSecret(random, true)}
		if err := db.SetMerchant(ctx, m); err != nil {
			return nil, err
		}
		b := &recon.BankAccount{CompanyID: tenant.ID.ID(), BankName: "Vietcombank", AccountNumber: "0071000123456", HolderName: "CONG TY TNHH THUONG MAI SAO MAI"}
		if err := db.CreateBankAccount(ctx, b); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	accounts, err := db.BankAccounts(ctx, tenant.ID)
	if err != nil {
		return nil, err
	}
	account := "BANK_ACCOUNT_ID"
	if len(accounts) > 0 {
		account = strconv.FormatInt(accounts[0].ID, 10)
	}
	merchant, err := db.MerchantOf(ctx, tenant.ID)
	if err != nil {
		return nil, err
	}
	adminToken, err := auth.IssueToken(ctx, client.ID, AdminEmail, []string{recon.ScopeCompany, recon.ScopeTransactionRead,
		recon.ScopeBankAccountRead, recon.ScopeDeliveryRead, recon.ScopeDeliveryWrite}, time.Hour)
	if err != nil {
		return nil, err
	}
	feedToken, err := auth.IssueToken(ctx, client.ID, "", []string{recon.ScopeTransactionWrite}, time.Hour)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"ClientID": client.ID,
		"Shown":    map[bool]string{true: secret, false: "(printed when the demo was first seeded)"}[secret != ""],
		"Token":    adminToken, "FeedToken": feedToken, "Account": account,
		"MerchantID": merchant.MerchantID, "MerchantSecret": merchant.SecretKey,
	}, nil
}

func seedData(ctx context.Context, db Store, auth Auth, random io.Reader, loc *time.Location, today time.Time) (*recon.Client, string, error) {
	co := &recon.Company{
		FullName: "Công ty TNHH Thương mại Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
		Subscription: "Business", BeginDate: today.AddDate(0, -3, 0).Format(recon.DateLayout),
		EndDate: today.AddDate(0, 9, 0).Format(recon.DateLayout),
		Config:  recon.CompanyConfig{Paycode: true, DataStorageDays: 365},
	}
	if err := db.CreateCompany(ctx, co); err != nil {
		return nil, "", err
	}
	if _, err := db.ReplacePaymentCodeFormats(ctx, co.ID, []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true},
		{Prefix: "SM", SuffixFrom: 6, SuffixTo: 10, CharacterType: recon.NumberAndLetter, IsActive: false},
	}); err != nil {
		return nil, "", err
	}
	for _, u := range []struct {
		u  *recon.User
		pw string
	}{
		{&recon.User{Company: co.ID, Email: AdminEmail, Role: recon.RoleAdmin, Permissions: []string{recon.PermViewTransactions}}, AdminPassword},
		{&recon.User{Company: co.ID, Email: AccountantEmail, Role: recon.RoleAccountant, Permissions: []string{recon.PermViewTransactions}}, AccountantPassword},
		{&recon.User{Company: co.ID, Email: MemberEmail, Role: recon.RoleMember}, MemberPassword},
	} {
		pw, err := auth.HashPassword(u.pw)
		if err != nil {
			return nil, "", err
		}
		u.u.PasswordHash = pw
		if err := db.CreateUser(ctx, u.u); err != nil {
			return nil, "", err
		}
	}
	client := &recon.Client{
		ID: clientID, Company: co.ID, Name: "Sao Mai ERP (demo)",
		Scopes: recon.Scopes, RedirectURIs: []string{"http://127.0.0.1:9999/callback"},
	}
	secret, err := auth.RegisterClient(ctx, client)
	if err != nil {
		return nil, "", err
	}
	if err := db.SetMerchant(ctx, &recon.Merchant{Tenant: co.Tenant(), MerchantID: "DEMO-SAOMAI", SecretKey: recon.NewSecretFrom(random)}); err != nil {
		return nil, "", err
	}
	if err := seedTransactions(ctx, db, co.Tenant(), loc, today); err != nil {
		return nil, "", err
	}
	return client, secret, nil
}

var banner = template.Must(template.New("demo").Parse(`
================ Recon demo ================
Company "Công ty TNHH Thương mại Sao Mai" (id {{.Company}}) and its users.
Dashboard: {{.Base}}/dashboard/  sign in with an e-mail and its password:
  {{.AdminEmail}}     / {{.AdminPassword}}     (Admin: everything, the team page)
  {{.AccountantEmail}}    / {{.AccountantPassword}}    (Accountant: the money)
  {{.MemberEmail}}  / {{.MemberPassword}}  (Member: the home page only)
OAuth2 client:  {{.ClientID}}   secret: {{.Shown}}
Admin login for the consent page: {{.AdminEmail}} / {{.AdminPassword}}

Tokens below are valid for one hour (new ones: restart with --demo, or
recon token issue --client {{.ClientID}} --user {{.AdminEmail}} --scopes company).

  export RECON={{.Base}}
  export TOKEN={{.AdminToken}}

  # the company and its payment-code formats (Admin token)
  curl -s $RECON/api/v1/company -H "Authorization: Bearer $TOKEN"

  # replace the payment-code formats
  curl -s -X PATCH $RECON/api/v1/company/configurations -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    -d '{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}'

  # bank accounts and transactions (newest first; filters: bank_account_id, account_number,
  # reference_number, from_date, to_date, amount_in, amount_out, page, limit)
  curl -s $RECON/api/v1/bank-accounts -H "Authorization: Bearer $TOKEN"
  curl -s "$RECON/api/v1/transactions?limit=5" -H "Authorization: Bearer $TOKEN"

  # play a payer (sandbox): a transfer whose memo carries a payment code
  curl -s -X POST $RECON/api/v1/sandbox/transfers -H "Authorization: Bearer {{.FeedToken}}" \
    -H 'Content-Type: application/json' -d '{"bank_account_id":1,"amount":150000,"transaction_content":"NGUYEN VAN A chuyen tien DH1709"}'

  # the payment gateway (Basic merchant_id:secret_key): orders, one order with its match decisions,
  # the reconciliation report; set an IPN URL to receive ORDER_PAID / TRANSACTION_VOID
  curl -s -u '{{.MerchantID}}:{{.MerchantSecret}}' "$RECON/v1/order?per_page=5"
  curl -s -u '{{.MerchantID}}:{{.MerchantSecret}}' $RECON/v1/order/detail/SM-01001
  curl -s "$RECON/api/v1/reconciliation" -H "Authorization: Bearer $TOKEN"
  curl -s -X PUT $RECON/v1/ipn -u '{{.MerchantID}}:{{.MerchantSecret}}' -H 'Content-Type: application/json' \
    -d '{"ipn_url":"https://your-shop.example.vn/ipn","auth_type":"SECRET_KEY"}'

  # a Member's role allows no company or money scope; its token reaches nothing of them: 403
  curl -s $RECON/api/v1/company -H "Authorization: Bearer {{.MemberToken}}"

  # a client-credentials token (no user: like a bank feed, it may push transactions, not read them)
  curl -s -u '{{.ClientID}}:{{.CurlSecret}}' -d grant_type=client_credentials -d 'scope=transaction:write' $RECON/oauth/token

  # API v2 (docs/api-v2.md): the shop's server makes an order with its own virtual account
  # (a client-credentials token with the order and refund scopes), then reads it by its id
  V2=$(curl -s -u '{{.ClientID}}:{{.CurlSecret}}' -d grant_type=client_credentials \
    -d 'scope=order:read order:write refund:read refund:write' $RECON/oauth/token | sed 's/.*"access_token":"\([^"]*\)".*/\1/')
  curl -s -X POST $RECON/v2/orders -H "Authorization: Bearer $V2" -H 'X-Idempotency-Key: demo-order-1' \
    -H 'Content-Type: application/json' -d '{"order_invoice_number":"V2-0001","amount":250000,"bank_account_id":1,"va":{"amount_mode":"partial"}}'
  curl -s "$RECON/v2/orders?per_page=5" -H "Authorization: Bearer $V2"

  # the authorization code flow starts at (PKCE S256 required):
  #   $RECON/oauth/authorize?response_type=code&client_id={{.ClientID}}&redirect_uri={{.Redirect}}&scope=company&state=...&code_challenge=...&code_challenge_method=S256

API documents: $RECON/openapi.json, $RECON/v2/openapi.json   metadata: $RECON/.well-known/oauth-authorization-server
============================================
`))

// testBanner is the test-mode part of the demo's banner: the same
// company through test credentials, whose data is apart from the live data
// above (docs/testmode.md).
var testBanner = template.Must(template.New("demo-test").Parse(`
================ Test mode ================
The same company has a test mode: test credentials (test_..., TEST-...) see and
change only test data, on any server, production included (docs/testmode.md).
Test OAuth2 client: {{.ClientID}}   secret: {{.Shown}}
Test merchant:      {{.MerchantID}}   secret_key: {{.MerchantSecret}}
Test bank account:  {{.Account}} (the same number as the live first account)

  export TEST_TOKEN={{.Token}}

  # the company as a test credential sees it ("livemode": false), its test bank account
  curl -s $RECON/api/v1/company -H "Authorization: Bearer $TEST_TOKEN"
  curl -s $RECON/api/v1/bank-accounts -H "Authorization: Bearer $TEST_TOKEN"

  # a test checkout's order, paid by a simulated transfer (works in test mode on any server),
  # then the test orders and the test notifications
  recon trigger ORDER_PAID --company {{.Company}}
  curl -s -X POST $RECON/api/v1/sandbox/transfers -H "Authorization: Bearer {{.FeedToken}}" \
    -H 'Content-Type: application/json' -d '{"bank_account_id":{{.Account}},"amount":150000,"transaction_content":"NGUYEN VAN A chuyen tien DH1709"}'
  curl -s -u '{{.MerchantID}}:{{.MerchantSecret}}' "$RECON/v1/order?per_page=5"
  curl -s "$RECON/api/v1/deliveries" -H "Authorization: Bearer $TEST_TOKEN"

  # test data never mixes with live data; wipe it in one command (credentials stay)
  recon test-data wipe --company {{.Company}}
============================================
`))

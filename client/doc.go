// Package client is the Go SDK of Recon: a typed client of its three
// surfaces and the helpers a merchant's receiver needs. It imports only the
// standard library, so that an integrator can vendor it alone.
//
// The surfaces and how they authenticate:
//
//   - /oauth: OAuth2 tokens. ClientCredentials (a bank feed, no user) and
//     RefreshTokenSource (a user's tokens, rotated on each refresh) are
//     token sources that renew the access token before it expires.
//   - /api/v1 (bearer token): Company, SetPaymentCodeFormats, TryMemo,
//     ListTransactions and the iterator Transactions, GetTransaction,
//     PushTransactions, BankAccounts, UploadStatement, Reconciliation,
//     deliveries (ListDeliveries, Deliveries, GetDelivery, ReplayDelivery,
//     ReplayFailed, GetDeliveryStats, SendTestNotification). The exceptions
//     queue has no SDK call yet (its API is in docs/api.md).
//   - the payment gateway /v1 (Basic merchant_id:secret_key, WithMerchant):
//     ListOrders and Orders, GetOrder, CancelOrder, VoidOrder, IPN settings;
//     SignCheckout and NewCheckoutForm sign the checkout form the payer's
//     browser posts.
//
// Every call takes a context. A failure the server reports is an *Error
// (HTTP status, code, message, field errors, request id, Retry-After),
// whichever envelope the surface uses; reach it with errors.As. Requests
// that are safe to repeat are retried on 429, 5xx and network failures,
// with jittered exponential backoff that honours Retry-After (RetryPolicy).
//
// Receivers: VerifySignature checks X-Recon-Signature exactly as the
// server signs it; WebhookHandler (or a Receiver) wraps an http.Handler,
// answers 401 to a notification whose signature is missing, wrong or stale,
// and hands the verified Notification on; ParseIPN and ParseHubEvent decode
// the bodies.
package client

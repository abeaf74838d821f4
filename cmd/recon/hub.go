package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/delivery"
	"recon/gateway"
	"recon/hub"
	"recon/sqlstore"
)

// hubSweepInterval is how often a node ends the link tokens and sessions
// that time ended (expiry, 15 quiet minutes). Every node sweeps; the store
// ends each exactly once.
const hubSweepInterval = 15 * time.Second

// sweepHub runs ExpireHubLinks at start and every hubSweepInterval until ctx ends.
func sweepHub(ctx context.Context, db *sqlstore.DB, clock recon.Clock, log *slog.Logger) {
	t := time.NewTicker(hubSweepInterval)
	defer t.Stop()
	for {
		tokens, sessions, err := db.ExpireHubLinks(ctx, clock.Now())
		if err != nil && ctx.Err() == nil {
			log.Warn("ending expired link tokens and idle link sessions", "err", err)
		} else if tokens > 0 || sessions > 0 {
			log.Info("ended expired link tokens and idle link sessions", "tokens", tokens, "sessions", sessions)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newHubCmd is `recon hub`: the bank-linking hub's operator commands.
func newHubCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "hub", Short: "The bank-linking hub: sandbox banks, the hub IPN"}
	banks := &cobra.Command{
		Use:   "sandbox-banks",
		Short: "List the sandbox banks and their fixed test identities",
		Long: `List the banks the hosted link page offers to sandbox link tokens (a test-mode
credential's, or any on a server started with --sandbox) and, per bank and account
type, the identity that links: holder name (returned by the bank), account number,
national ID, phone and the OTP that works. MBBank's OTPs have 8 digits, the others 6.
The identities with a "fails with" value fail on purpose: WRONG_OTP accepts no OTP
(three tries fail the session), BANK_UNAVAILABLE is a bank that does not answer,
ALREADY_LINKED an account linked elsewhere.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ids := hub.SandboxIdentities()
			if a.jsonOut {
				return a.print(map[string]any{"banks": hubBanksJSON(), "identities": ids}, "")
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "BANK\tOTP DIGITS\tTYPE\tACCOUNT\tNATIONAL ID\tPHONE\tHOLDER\tOTP\tFAILS WITH")
			for _, id := range ids {
				b := bankOf(id.BankCode)
				fmt.Fprintf(w, "%s (%s)\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.BrandName, b.Code, b.OTPLength, id.AccountType,
					id.AccountNumber, id.NationalID, id.Phone, id.HolderName, cmp.Or(id.OTP, "-"), cmp.Or(id.Fail, "-"))
			}
			return w.Flush()
		},
	}
	a.addJSONFlag(banks)
	cmd.AddCommand(banks, newHubIPNCmd(a))
	return cmd
}

func hubBanksJSON() []map[string]any {
	var out []map[string]any
	for _, b := range (hub.Sandbox{}).Banks() {
		out = append(out, map[string]any{"code": b.Code, "brand_name": b.BrandName, "full_name": b.FullName, "otp_length": b.OTPLength})
	}
	return out
}

func bankOf(code string) recon.Bank {
	for _, b := range (hub.Sandbox{}).Banks() {
		if b.Code == code {
			return b
		}
	}
	return recon.Bank{Code: code, BrandName: code}
}

// hubIPNStore gives gateway.SaveIPN (the one implementation of the IPN
// rules) the hub IPN target instead of the gateway's.
type hubIPNStore struct{ *sqlstore.DB }

func (s hubIPNStore) SetIPN(ctx context.Context, companyID int64, t *recon.Target) error {
	return s.DB.SetHubIPN(ctx, companyID, t)
}

func (s hubIPNStore) DeliveryTarget(ctx context.Context, companyID int64, _ string) (*recon.Target, error) {
	return s.DB.DeliveryTarget(ctx, companyID, recon.DeliveryHubIPN)
}

// newHubIPNCmd is `recon hub ipn set`: where the balance-change
// notifications of linked accounts go.
func newHubIPNCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "ipn", Short: "A merchant's hub IPN (balance changes of linked accounts)"}
	var (
		companyID                  int64
		c                          gateway.IPNChange
		secret                     string
		inactive, sandbox, private bool
	)
	set := &cobra.Command{
		Use:   "set",
		Short: "Set where a company's balance-change notifications go",
		Long: `Set the company's hub IPN target: every transaction stored on a bank account the
hub linked is POSTed there (docs/hub.md, "Balance changes"), signed with
X-Recon-Signature under the target's signing secret, with X-Secret-Key when the auth
type is SECRET_KEY. The URL rules are those of recon ipn set.`,
		Example: `  recon hub ipn set --company 1 --url https://shop.example.vn/hub-ipn --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.Active = !inactive
			if cmd.Flags().Changed("secret") {
				c.SecretKey = &secret
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				if _, err := db.Company(cmd.Context(), companyID); err != nil {
					return err
				}
				h := &gateway.Handler{Store: hubIPNStore{db}, Blocked: delivery.IsBlocked,
					CheckURL: func(raw string) error { return delivery.CheckURL(raw, sandbox, private) }}
				saved, err := h.SaveIPN(cmd.Context(), companyID, c)
				var re *recon.Error
				if errors.As(err, &re) {
					return re
				}
				if err != nil {
					return err
				}
				t := saved.Target
				return a.print(gateway.IPNJSON(t, saved.NewSecret, saved.NewSigningSecret),
					"hub IPN of company %d: %s (%s, active %v)\nsecret_key:     %s\nsigning_secret: %s", companyID, t.URL, t.AuthType, t.Active,
					cmp.Or(t.Secret, "(none)"), t.SigningSecret)
			})
		},
	}
	f := set.Flags()
	f.Int64Var(&companyID, "company", 0, "company id (required)")
	f.StringVar(&c.URL, "url", "", "hub IPN URL (required)")
	f.StringVar(&c.AuthType, "auth-type", recon.AuthSecretKey, "SECRET_KEY or NONE")
	f.StringVar(&secret, "secret", "", "the X-Secret-Key secret (default: keep the stored one, or make one with SECRET_KEY)")
	f.BoolVar(&c.RotateSigningSecret, "rotate-signing-secret", false, "replace the signing secret of X-Recon-Signature")
	f.BoolVar(&inactive, "inactive", false, "save the settings but send nothing")
	f.BoolVar(&sandbox, "sandbox", false, "accept a plain-http URL (sandbox setups)")
	f.BoolVar(&private, "allow-private-targets", false, "accept loopback and private addresses (tests, self-hosted setups)")
	for _, n := range []string{"company", "url"} {
		_ = set.MarkFlagRequired(n)
	}
	a.addJSONFlag(set)
	cmd.AddCommand(set)
	return cmd
}

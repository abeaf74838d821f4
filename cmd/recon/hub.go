package main

import (
	"cmp"
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"recon"
	"recon/ipn"
	"recon/linking"
	"recon/sqlstore"
)

// newHubCmd is `recon hub`: the bank-linking hub's operator commands.
func newHubCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "hub", Short: "The bank-linking hub: clients, companies, link tokens and their events, sandbox banks, the hub IPN"}
	cmd.AddCommand(newHubSandboxBanksCmd(a), newHubIPNCmd(a), newHubClientCmd(a), newHubCompanyCmd(a), newHubLinkTokenCmd(a), newHubEventsCmd(a))
	return cmd
}

// newHubSandboxBanksCmd builds `recon hub sandbox-banks`.
func newHubSandboxBanksCmd(a *app) *cobra.Command {
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
			ids := linking.SandboxIdentities()
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
	return banks
}

func hubBanksJSON() []map[string]any {
	var out []map[string]any
	for _, b := range (linking.Sandbox{}).Banks() {
		out = append(out, map[string]any{"code": b.Code, "brand_name": b.BrandName, "full_name": b.FullName, "otp_length": b.OTPLength})
	}
	return out
}

func bankOf(code string) recon.Bank {
	for _, b := range (linking.Sandbox{}).Banks() {
		if b.Code == code {
			return b
		}
	}
	return recon.Bank{Code: code, BrandName: code}
}

// hubIPNStore gives ipn.Service (the one implementation of the IPN rules)
// the hub IPN target instead of the gateway's.
type hubIPNStore struct{ *sqlstore.DB }

func (s hubIPNStore) SetIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error {
	return s.DB.SetHubIPN(ctx, tenant, t)
}

func (s hubIPNStore) DeliveryTarget(ctx context.Context, companyID int64, _ string) (*recon.Target, error) {
	return s.DB.DeliveryTarget(ctx, companyID, recon.DeliveryHubIPN)
}

// newHubIPNCmd is `recon hub ipn set`: where the balance-change
// notifications of linked accounts go.
func newHubIPNCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "ipn", Short: "A merchant's hub IPN (balance changes of linked accounts)"}
	cmd.AddCommand(newTargetSetCmd(a, targetSpec{
		what:  "hub IPN",
		short: "Set where a company's balance-change notifications go",
		long: `Set the company's hub IPN target: every transaction stored on a bank account the
hub linked is POSTed there (docs/hub.md, "Balance changes"), signed with
X-Recon-Signature under the target's signing secret, with X-Secret-Key when the auth
type is SECRET_KEY. A secret is shown in full only when it is made. The URL rules
are those of recon ipn set.`,
		example: `  recon hub ipn set --company 1 --url https://shop.example.vn/hub-ipn --json`,
		kind:    recon.DeliveryHubIPN,
		store:   func(db *sqlstore.DB) ipn.Store { return hubIPNStore{db} },
	}))
	return cmd
}

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/einvoice"
	"recon/sqlstore"
)

// The certificate a company signs its e-invoices' XML with
// (docs/invoices.md, XML and its signature): `recon invoices certificate
// upload|show`. The upload route of the API comes later.

// newInvoicesCmd is `recon invoices`; each invoice area adds its
// subcommands here.
func newInvoicesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "invoices", Short: "A company's e-invoices and the certificate that signs them"}
	cmd.AddCommand(newInvoiceCertificateCmd(a))
	cmd.AddCommand(newInvoiceCmds(a)...)
	return cmd
}

func newInvoiceCertificateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "certificate", Short: "The certificate that signs a company's e-invoices: upload, show"}
	cmd.AddCommand(newInvoiceCertificateUploadCmd(a), newInvoiceCertificateShowCmd(a))
	return cmd
}

func certificateJSON(c *recon.InvoiceCertificate) map[string]any {
	return map[string]any{"subject": c.Subject, "serial_number": c.SerialNumber,
		"not_before": c.NotBefore.Format(time.RFC3339), "not_after": c.NotAfter.Format(time.RFC3339), "self_signed": c.SelfSigned}
}

func (a *app) printCertificate(c *recon.InvoiceCertificate) error {
	kind := "uploaded"
	if c.SelfSigned {
		kind = "self-signed by the sandbox"
	}
	return a.print(certificateJSON(c), "subject:   %s\nserial:    %s\nvalid:     %s to %s\nkind:      %s",
		c.Subject, c.SerialNumber, c.NotBefore.Format(time.DateOnly), c.NotAfter.Format(time.DateOnly), kind)
}

func newInvoiceCertificateUploadCmd(a *app) *cobra.Command {
	var (
		tenant      tenantFlags
		file, pwEnv string
	)
	cmd := &cobra.Command{
		Use:   "upload",
		Short: "Store the company's signing certificate from a PKCS#12 file",
		Long: `Read the company's digital signature certificate (chữ ký số) from a PKCS#12 file
(.p12 / .pfx) opened with the password in the environment variable --password-env,
check it (an RSA key of at least 2048 bits that is the certificate's, valid today),
and store it as the certificate the company's invoices are signed with, replacing
the one there. The private key is stored sealed under the server's secret key
(recon keys --help) and is never printed; the password is not stored.`,
		Example: `  P12_PASSWORD=... recon invoices certificate upload --company 1 --file seller.p12 --password-env P12_PASSWORD`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("read the certificate file: %w", err)
			}
			password := a.getenv(pwEnv)
			if password == "" {
				return fmt.Errorf("the environment variable %s (--password-env) is empty: it must hold the PKCS#12 file's password", pwEnv)
			}
			c, err := einvoice.ParsePKCS12(data, password, a.clock.Now())
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				stored, err := db.SaveInvoiceCertificate(cmd.Context(), tn, c, false)
				if err != nil {
					return err
				}
				return a.printCertificate(stored)
			})
		},
	}
	tenant.add(cmd, true, "company id (required)")
	cmd.Flags().StringVar(&file, "file", "", "the PKCS#12 file (.p12, .pfx) (required)")
	cmd.Flags().StringVar(&pwEnv, "password-env", "", "the name of the environment variable holding the file's password (required)")
	_ = cmd.MarkFlagRequired("file")
	_ = cmd.MarkFlagRequired("password-env")
	a.addJSONFlag(cmd)
	return cmd
}

func newInvoiceCertificateShowCmd(a *app) *cobra.Command {
	var tenant tenantFlags
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the company's signing certificate (never its key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				c, err := db.InvoiceCertificate(cmd.Context(), tn)
				if recon.ErrorCode(err) == recon.ENOTFOUND {
					return fmt.Errorf("company %d has no invoice certificate: upload one with recon invoices certificate upload (the sandbox makes a self-signed one on first use)", tenant.company)
				}
				if err != nil {
					return err
				}
				return a.printCertificate(c)
			})
		},
	}
	tenant.add(cmd, true, "company id (required)")
	a.addJSONFlag(cmd)
	return cmd
}

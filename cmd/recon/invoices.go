package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/apiv2"
	"recon/einvoice"
	"recon/invoicepdf"
	"recon/invoices"
	"recon/sqlstore"
)

// E-invoices from the command line (docs/invoices.md, CLI): create, issue,
// replace, adjust, cancel, list, show and pdf, through the same
// invoices.Service as the API and the dashboard, acting as a user of the
// company (--user) whose role the service checks. create, replace and
// adjust read the invoice's JSON, in the API's shape, from --file (or
// stdin with "-"). The server's maintenance loop records the provider's
// answer; the CLI only sends.

// invoicesService is the service over db as a server runs it: the sandbox
// provider for test tenants, none for live ones, and the signer.
func (a *app) invoicesService(db *sqlstore.DB, loc *time.Location) *invoices.Service {
	return &invoices.Service{Store: db, Clock: a.clock, Location: loc, Test: &invoices.Sandbox{Clock: a.clock},
		Signer: &einvoice.Signer{Store: db, Clock: a.clock, Original: db.Invoice}}
}

// invoiceCmd is what every invoice command shares: the tenant, the user
// and the store, the service and the caller made ready for run.
type invoiceCmd struct {
	tenant tenantFlags
	email  string
	loc    *time.Location // the business time zone, set by run
}

func (ic *invoiceCmd) add(cmd *cobra.Command, a *app, write bool) {
	ic.tenant.add(cmd, true, "company id (required)")
	if write {
		cmd.Flags().StringVar(&ic.email, "user", "", "the company's user (e-mail) who acts: Admin, SuperAdmin or with issue_invoices (required)")
		_ = cmd.MarkFlagRequired("user")
	}
	a.addJSONFlag(cmd)
}

func (ic *invoiceCmd) run(cmd *cobra.Command, a *app, fn func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) error) error {
	ctx := cmd.Context()
	loc, err := a.location()
	if err != nil {
		return err
	}
	ic.loc = loc
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		tn, err := ic.tenant.tenant(ctx, db)
		if err != nil {
			return err
		}
		c, err := refundCaller(ctx, db, tn, ic.tenant.company, ic.email)
		if err != nil {
			return err
		}
		return fn(ctx, db, a.invoicesService(db, loc), c)
	})
}

// runInvoice is run for a command whose answer is one invoice: it prints
// the invoice fn returns.
func (ic *invoiceCmd) runInvoice(cmd *cobra.Command, a *app, fn func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) (*recon.Invoice, error)) error {
	return ic.run(cmd, a, func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) error {
		inv, err := fn(ctx, db, svc, c)
		if err != nil {
			return err
		}
		return a.printInvoice(ctx, db, c, ic.loc, inv)
	})
}

func newInvoiceCmds(a *app) []*cobra.Command {
	return []*cobra.Command{newInvoiceCreateCmd(a, "create"), newInvoiceCreateCmd(a, "replace"), newInvoiceCreateCmd(a, "adjust"),
		newInvoiceIssueCmd(a), newInvoiceCancelCmd(a), newInvoiceListCmd(a), newInvoiceShowCmd(a), newInvoicePDFCmd(a)}
}

func (a *app) printInvoice(ctx context.Context, db *sqlstore.DB, c *recon.Caller, loc *time.Location, inv *recon.Invoice) error {
	number := "-"
	if inv.Number != 0 {
		number = fmt.Sprint(inv.Number)
	}
	text := fmt.Sprintf("invoice %s\t%s\t%s%s no. %s\ttracking %s\tlookup %s\t%d VND (%s)", inv.ReferenceCode, inv.Status,
		inv.TemplateCode, inv.Series, number, inv.TrackingCode, inv.LookupCode, inv.Totals.TotalAmount, inv.Totals.TotalInWords)
	if inv.OriginalReferenceCode != "" {
		text += "\tcorrects " + inv.OriginalReferenceCode
	}
	if inv.FailureReason != "" {
		text += "\tfailed: " + inv.FailureReason
	}
	return a.print(apiv2.InvoiceJSON(ctx, db, c.Tenant, inv, loc), "%s", text)
}

// readInput opens --file: "-" is stdin.
func (a *app) readInput(file string) (io.Reader, error) {
	if file == "-" {
		return a.stdin, nil
	}
	f, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the invoice file: %w", err)
	}
	return bytes.NewReader(f), nil
}

func newInvoiceCreateCmd(a *app, action string) *cobra.Command {
	var (
		ic             invoiceCmd
		file, original string
		adjType        string
		draft          bool
	)
	short := map[string]string{
		"create":  "Create an invoice from a JSON file (the API's body): issued at once, or a draft with --draft",
		"replace": "Replace an issued invoice (--original) with the full content of a JSON file",
		"adjust":  "Adjust an issued invoice (--original): a JSON file with the differences (--type increase|decrease) or the corrected information (--type info)",
	}[action]
	cmd := &cobra.Command{
		Use:   action,
		Short: short,
		Long: short + `.

The file holds the body of POST /v1/invoices/` + action + ` (docs/invoices.md, API):
{"buyer":{...},"items":[{"item_name":...,"quantity":...,"unit_price":...,"vat_rate":"10"}],...}.
The server computes every amount. "-" reads the JSON from stdin.`,
		Example: map[string]string{
			"create":  `  recon invoices create --company 1 --test --user ketoan@abc.vn --file invoice.json`,
			"replace": `  recon invoices replace --company 1 --user ketoan@abc.vn --original 9m4e2mw3ni24cbd8dkl0 --file invoice.json`,
			"adjust":  `  cat diff.json | recon invoices adjust --company 1 --user ketoan@abc.vn --original 9m4e2mw3ni24cbd8dkl0 --type decrease --file -`,
		}[action],
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, err := a.readInput(file)
			if err != nil {
				return err
			}
			return ic.runInvoice(cmd, a, func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) (*recon.Invoice, error) {
				in, err := apiv2.ReadInvoiceRequest(ctx, db, c.Tenant, body)
				if err != nil {
					return nil, err
				}
				req := in.Request
				if in.Original != "" && original != "" && in.Original != original {
					return nil, errors.New("--original and the file's original_invoice_reference_code differ")
				}
				if original == "" {
					original = in.Original
				}
				switch action {
				case "create":
					if original != "" {
						return nil, errors.New("create makes a new invoice: replace or adjust correct one (original_invoice_reference_code)")
					}
					req.IsDraft = req.IsDraft || draft
					return svc.Create(ctx, c, req)
				case "replace":
					return svc.Replace(ctx, c, original, req)
				case "adjust":
					if adjType != "" {
						req.AdjustmentType = adjType
					}
					return svc.Adjust(ctx, c, original, req)
				}
				return nil, fmt.Errorf("unknown invoice action %q", action)
			})
		},
	}
	ic.add(cmd, a, true)
	cmd.Flags().StringVar(&file, "file", "", `the invoice's JSON ("-": stdin; required)`)
	_ = cmd.MarkFlagRequired("file")
	switch action {
	case "create":
		cmd.Flags().BoolVar(&draft, "draft", false, "keep a draft (no number; issue it later)")
	case "adjust":
		cmd.Flags().StringVar(&adjType, "type", "", "the adjustment's type: increase, decrease or info (or the file's adjustment_type)")
		fallthrough
	default:
		cmd.Flags().StringVar(&original, "original", "", "the reference code of the issued invoice it corrects (or the file's original_invoice_reference_code)")
	}
	return cmd
}

func newInvoiceIssueCmd(a *app) *cobra.Command {
	var ic invoiceCmd
	cmd := &cobra.Command{
		Use:     "issue <reference-code>",
		Short:   "Issue a draft: numbered now, signed and sent to the provider",
		Example: `  recon invoices issue 9m4e2mw3ni24cbd8dkl0 --company 1 --test --user ketoan@abc.vn`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ic.runInvoice(cmd, a, func(ctx context.Context, _ *sqlstore.DB, svc *invoices.Service, c *recon.Caller) (*recon.Invoice, error) {
				return svc.Issue(ctx, c, args[0])
			})
		},
	}
	ic.add(cmd, a, true)
	return cmd
}

func newInvoiceCancelCmd(a *app) *cobra.Command {
	var (
		ic     invoiceCmd
		reason string
	)
	cmd := &cobra.Command{
		Use:     "cancel <reference-code>",
		Short:   "Cancel an issued invoice that was neither replaced nor adjusted, with a reason (its number stays used)",
		Example: `  recon invoices cancel 9m4e2mw3ni24cbd8dkl0 --company 1 --user ketoan@abc.vn --reason "Khách trả hàng"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ic.runInvoice(cmd, a, func(ctx context.Context, _ *sqlstore.DB, svc *invoices.Service, c *recon.Caller) (*recon.Invoice, error) {
				return svc.Cancel(ctx, c, args[0], reason)
			})
		},
	}
	ic.add(cmd, a, true)
	cmd.Flags().StringVar(&reason, "reason", "", "why it is cancelled (required)")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

func newInvoiceListCmd(a *app) *cobra.Command {
	var (
		ic invoiceCmd
		f  recon.InvoiceFilter
	)
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List a company's invoices, newest first",
		Example: `  recon invoices list --company 1 --test --status issued --json`,
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if f.Page < 1 || f.PerPage < 1 || f.PerPage > invoices.MaxPerPage {
				return fmt.Errorf("--page must be from 1 and --per-page from 1 to %d", invoices.MaxPerPage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ic.run(cmd, a, func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) error {
				list, total, err := svc.List(ctx, c, f)
				if err != nil {
					return err
				}
				if a.jsonOut {
					out := make([]any, len(list))
					for i, inv := range list {
						out[i] = apiv2.InvoiceJSON(ctx, db, c.Tenant, inv, ic.loc)
					}
					return a.print(map[string]any{"invoices": out, "total": total, "page": f.Page, "per_page": f.PerPage}, "")
				}
				if len(list) == 0 && total == 0 {
					return a.none("invoices")
				}
				for _, inv := range list {
					number := "-"
					if inv.Number != 0 {
						number = fmt.Sprint(inv.Number)
					}
					fmt.Fprintf(a.stdout, "%s\t%s\t%s%s\t%s\t%d VND\t%s\n", inv.ReferenceCode, inv.Status, inv.TemplateCode, inv.Series, number,
						inv.Totals.TotalAmount, inv.Buyer.Name)
				}
				fmt.Fprintf(a.stdout, "%d of %d\n", len(list), total)
				return nil
			})
		},
	}
	ic.add(cmd, a, false)
	fl := cmd.Flags()
	fl.StringVar(&f.Status, "status", "", "only this status: "+strings.Join(recon.InvoiceStatuses, ", "))
	fl.StringVar(&f.From, "from", "", "first day created, YYYY-MM-DD")
	fl.StringVar(&f.To, "to", "", "last day created, YYYY-MM-DD (inclusive)")
	fl.IntVar(&f.Page, "page", 1, "page, from 1")
	fl.IntVar(&f.PerPage, "per-page", 20, "invoices per page, 1 to 100")
	return cmd
}

func newInvoiceShowCmd(a *app) *cobra.Command {
	var ic invoiceCmd
	cmd := &cobra.Command{
		Use:     "show <reference-code>",
		Short:   "Show an invoice",
		Example: `  recon invoices show 9m4e2mw3ni24cbd8dkl0 --company 1 --json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ic.runInvoice(cmd, a, func(ctx context.Context, _ *sqlstore.DB, svc *invoices.Service, c *recon.Caller) (*recon.Invoice, error) {
				return svc.Get(ctx, c, args[0])
			})
		},
	}
	ic.add(cmd, a, false)
	return cmd
}

func newInvoicePDFCmd(a *app) *cobra.Command {
	var (
		ic  invoiceCmd
		out string
	)
	cmd := &cobra.Command{
		Use:     "pdf <reference-code>",
		Short:   "Write an invoice's PDF to a file",
		Example: `  recon invoices pdf 9m4e2mw3ni24cbd8dkl0 --company 1 --out hoadon.pdf`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ic.run(cmd, a, func(ctx context.Context, db *sqlstore.DB, svc *invoices.Service, c *recon.Caller) error {
				inv, err := svc.Get(ctx, c, args[0])
				if err != nil {
					return err
				}
				var orig *recon.Invoice
				if inv.OriginalReferenceCode != "" {
					if orig, err = svc.Get(ctx, c, inv.OriginalReferenceCode); err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
						return err
					}
				}
				pdf, err := invoicepdf.Render(inv, invoicepdf.Options{Original: orig, Test: !c.Tenant.Live(), Location: ic.loc})
				if err != nil {
					return err
				}
				if err := os.WriteFile(out, pdf, 0o644); err != nil {
					return fmt.Errorf("write the PDF: %w", err)
				}
				return a.print(map[string]any{"reference_code": inv.ReferenceCode, "file": out, "bytes": len(pdf)}, "wrote %s (%d bytes)", out, len(pdf))
			})
		},
	}
	ic.add(cmd, a, false)
	cmd.Flags().StringVar(&out, "out", "", "the PDF file to write (required)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

package main

import (
	"cmp"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/hub"
	"recon/linking"
	"recon/oauth"
	"recon/sqlstore"
)

// The hub's operator commands over its data (docs/design.md, D8): a hub
// client, the merchant's companies, link tokens and their timeline. They
// call the store and the hub package as the API does, so the rules are the
// API's.

func newHubClientCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "client", Short: "A merchant's hub clients (POST /v1/token credentials)"}
	var (
		c    = recon.Client{Scopes: []string{recon.ScopeHub}}
		test bool
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Register an OAuth2 client with the hub scope",
		Long: `Register an OAuth2 client of the company holding the hub scope: its id and secret,
sent as Basic credentials to POST /v1/token, get the bearer token of the hub API. The
secret is printed once and stored only as a hash. With --test the client reaches only
the company's test data (sandbox banks on any server).`,
		Example: `  recon hub client create --company 1 --name "Hub integration" --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.Test = test
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				secret, err := oauth.RegisterClient(cmd.Context(), db, &c, false)
				if err != nil {
					return err
				}
				return a.print(map[string]any{"client_id": c.ID, "client_secret": secret, "livemode": !c.Test},
					"client_id:     %s\nclient_secret: %s\n(the secret is shown only now; POST /v1/token with them as Basic credentials)", c.ID, secret)
			})
		},
	}
	create.Flags().Int64Var(&c.Company, "company", 0, "company id (required)")
	create.Flags().StringVar(&c.Name, "name", "", "client name (required)")
	create.Flags().BoolVar(&test, "test", false, "a test-mode client: its tokens reach only the company's test data")
	_ = create.MarkFlagRequired("company")
	_ = create.MarkFlagRequired("name")
	a.addJSONFlag(create)
	cmd.AddCommand(create)
	return cmd
}

func newHubCompanyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "company", Short: "A merchant's companies (the hub's sub-tenants)"}
	cmd.AddCommand(newHubCompanyCreateCmd(a), newHubCompanyListCmd(a))
	return cmd
}

func newHubCompanyCreateCmd(a *app) *cobra.Command {
	var (
		tf tenantFlags
		cu recon.HubCustomer
	)
	create := &cobra.Command{
		Use:     "create",
		Short:   "Create a company of the merchant (POST /v1/company/create)",
		Example: `  recon hub company create --company 1 --full-name "Công ty TNHH Khách Một" --short-name KHACH1 --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				var err error
				if cu.Tenant, err = tf.tenant(cmd.Context(), db); err != nil {
					return err
				}
				cu.Status = recon.HubCustomerActive
				if err := db.CreateHubCustomer(cmd.Context(), &cu); err != nil {
					return err
				}
				loc, err := a.location()
				if err != nil {
					return err
				}
				return a.print(hub.CompanyJSON(&cu, loc), "company %s created: %s", cu.XID, cu.FullName)
			})
		},
	}
	tf.add(create, true, "the merchant's company id (required)")
	create.Flags().StringVar(&cu.FullName, "full-name", "", "the company's full name (required)")
	create.Flags().StringVar(&cu.ShortName, "short-name", "", "a short name")
	_ = create.MarkFlagRequired("full-name")
	a.addJSONFlag(create)
	return create
}

func newHubCompanyListCmd(a *app) *cobra.Command {
	var (
		lt   tenantFlags
		list recon.HubCustomerFilter
	)
	ls := &cobra.Command{
		Use:     "list",
		Short:   "List the merchant's companies, newest first (GET /v1/company)",
		Example: `  recon hub company list --company 1 --q khach`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tenant, err := lt.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				list.Page = max(list.Page, 1)
				all, total, err := db.HubCustomers(cmd.Context(), tenant, list)
				if err != nil {
					return err
				}
				loc, err := a.location()
				if err != nil {
					return err
				}
				if a.jsonOut {
					out := make([]any, len(all))
					for i, c := range all {
						out[i] = hub.CompanyJSON(c, loc)
					}
					return a.print(out, "")
				}
				if len(all) == 0 && total == 0 {
					return a.none("hub companies")
				}
				w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "XID\tFULL NAME\tSHORT NAME\tSTATUS\tCREATED")
				for _, c := range all {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.XID, c.FullName, cmp.Or(c.ShortName, "-"), c.Status,
						c.CreatedAt.In(loc).Format(recon.DateTimeLayout))
				}
				fmt.Fprintf(w, "(%d of %d)\n", len(all), total)
				return w.Flush()
			})
		},
	}
	lt.add(ls, true, "the merchant's company id (required)")
	ls.Flags().StringVar(&list.Q, "q", "", "only names containing this (case-insensitive)")
	ls.Flags().StringVar(&list.Status, "status", "", "only this status: Active or Suspended")
	ls.Flags().IntVar(&list.Page, "page", 1, "page number")
	ls.Flags().IntVar(&list.PerPage, "per-page", 50, "companies per page (at most 100)")
	a.addJSONFlag(ls)
	return ls
}

func newHubLinkTokenCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "link-token", Short: "Link tokens: open the hosted link page for a company"}
	cmd.AddCommand(newHubLinkTokenCreateCmd(a), newHubLinkTokenRevokeCmd(a))
	return cmd
}

func newHubLinkTokenCreateCmd(a *app) *cobra.Command {
	var (
		tf      tenantFlags
		t       recon.LinkToken
		baseURL string
		sandbox bool
		ttl     time.Duration
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Make a link token and print the hosted link page's URL",
		Long: `Make a link token for one of the merchant's companies (as POST /v1/link-token/create
does, LINK_TOKEN_CREATED included) and print the hosted link page's URL: open it in a
browser to link (or, with --purpose UNLINK_BANK_ACCOUNT and --bank-account, unlink) a
bank account. Sandbox banks are offered to --test tokens, and to live ones with
--sandbox (a server started with --sandbox); --base-url is the server's external
address, as serve's --base-url.`,
		Example: `  recon hub link-token create --company 1 --test --customer 6f1c…-… --language en
  recon hub link-token create --company 1 --customer 6f1c…-… --purpose UNLINK_BANK_ACCOUNT --bank-account 0b9e…-… --sandbox`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				var err error
				if t.Tenant, err = tf.tenant(cmd.Context(), db); err != nil {
					return err
				}
				t.Sandbox = tf.test || sandbox
				loc, err := a.location()
				if err != nil {
					return err
				}
				page, err := (&linking.Service{Store: db, BaseURL: baseURL, LinkTTL: ttl}).CreateLinkToken(cmd.Context(), &t)
				if err != nil {
					return err
				}
				out := map[string]any{"xid": t.XID, "link_token": t.Token, "hosted_link_url": page,
					"expires_at": t.ExpiresAt.In(loc).Format(recon.DateTimeLayout)}
				return a.print(out, "link token %s (expires %s)\nopen: %s", t.XID, out["expires_at"], page)
			})
		},
	}
	tf.add(create, true, "the merchant's company id (required)")
	f := create.Flags()
	f.StringVar(&t.CustomerXID, "customer", "", "the xid of the merchant's company that links (required)")
	f.StringVar(&t.Purpose, "purpose", recon.LinkPurposeLink, "LINK_BANK_ACCOUNT or UNLINK_BANK_ACCOUNT")
	f.StringVar(&t.BankAccountXID, "bank-account", "", "the linked account to unlink (UNLINK_BANK_ACCOUNT)")
	f.StringVar(&t.RedirectURI, "redirect-uri", "", "where the page sends the user at the end")
	f.StringVar(&t.Language, "language", "vi", "the page's language: vi or en")
	f.BoolVar(&t.IsMobileApp, "mobile-app", false, "the page opens in a mobile app's web view")
	f.StringVar(&baseURL, "base-url", "http://127.0.0.1:8080", "the server's external base URL")
	f.BoolVar(&sandbox, "sandbox", false, "offer the sandbox banks to a live token (the server runs with --sandbox)")
	f.DurationVar(&ttl, "ttl", recon.DefaultLinkTokenTTL, "the token's lifetime, as serve's --link-token-ttl")
	_ = create.MarkFlagRequired("customer")
	a.addJSONFlag(create)
	return create
}

func newHubLinkTokenRevokeCmd(a *app) *cobra.Command {
	var rt tenantFlags
	revoke := &cobra.Command{
		Use:   "revoke LINK_TOKEN_XID",
		Short: "Revoke a link token at once (ends a session open on the page)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tenant, err := rt.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				t, err := db.RevokeLinkToken(cmd.Context(), tenant, args[0])
				if err != nil {
					return err
				}
				return a.print(map[string]any{"xid": t.XID, "status": t.Status}, "link token %s revoked", t.XID)
			})
		},
	}
	rt.add(revoke, true, "the merchant's company id (required)")
	a.addJSONFlag(revoke)
	return revoke
}

func newHubEventsCmd(a *app) *cobra.Command {
	var tf tenantFlags
	cmd := &cobra.Command{
		Use:   "events LINK_TOKEN_XID",
		Short: "The timeline of a link token and its sessions",
		Long: `Print the link token, its sessions, and every hub event they made in the order they
happened, also the events the webhook did not want (none set, inactive or not
subscribed); SENT names the outbox row that sends an event (recon deliveries show ID).`,
		Example: `  recon hub events 3f0e…-… --company 1 --test`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tenant, err := tf.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				t, sessions, err := db.LinkToken(cmd.Context(), tenant, args[0])
				if err != nil {
					return err
				}
				log, err := db.HubEventLog(cmd.Context(), tenant, args[0])
				if err != nil {
					return err
				}
				loc, err := a.location()
				if err != nil {
					return err
				}
				if a.jsonOut {
					events := make([]map[string]any, len(log))
					for i, e := range log {
						events[i] = map[string]any{"event": e.Event, "at": e.At.In(loc).Format(recon.DateTimeLayout),
							"metadata": e.Metadata, "delivery_id": e.DeliveryID}
					}
					return a.print(map[string]any{"link_token": hub.LinkTokenJSON(t, sessions, loc), "events": events}, "")
				}
				w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintf(w, "link token %s (%s, %s), expires %s\n", t.XID, t.Purpose, t.Status, t.ExpiresAt.In(loc).Format(recon.DateTimeLayout))
				for _, s := range sessions {
					reason := ""
					if s.Reason != "" {
						reason = " (" + s.Reason + ")"
					}
					fmt.Fprintf(w, "session %s: %s at %s%s\n", s.XID, s.Status, s.State, reason)
				}
				fmt.Fprintln(w, "AT\tEVENT\tDETAIL\tSENT")
				for _, e := range log {
					sent := "-"
					if e.DeliveryID != 0 {
						sent = fmt.Sprint(e.DeliveryID)
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.At.In(loc).Format(recon.DateTimeLayout), e.Event, eventDetail(e.Metadata), sent)
				}
				return w.Flush()
			})
		},
	}
	tf.add(cmd, true, "the merchant's company id (required)")
	a.addJSONFlag(cmd)
	return cmd
}

// eventDetail is the part of an event's metadata worth a column.
func eventDetail(m recon.HubEventMeta) string {
	var parts []string
	for _, p := range []string{m.State, m.BrandName, m.AccountNumber, m.Reason} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return cmp.Or(strings.Join(parts, " "), "-")
}

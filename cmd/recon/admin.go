package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/oauth"
	"recon/server"
	"recon/sqlstore"
)

func newMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database schema up to date (serve does this at start too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				fmt.Fprintf(a.stdout, "database (%s) is up to date\n", db.Engine())
				return nil
			})
		},
	}
}

func newCompanyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "company", Short: "Manage companies (tenants)"}
	// list, show, try-memo and update are in company.go.
	cmd.AddCommand(newCompanyCreateCmd(a), newCompanyListCmd(a), newCompanyShowCmd(a), newCompanyTryMemoCmd(a), newCompanyUpdateCmd(a))
	return cmd
}

func newCompanyCreateCmd(a *app) *cobra.Command {
	var c recon.Company
	create := &cobra.Command{
		Use:     "create",
		Short:   "Create a company",
		Example: `  recon company create --full-name "Công ty TNHH ABC" --short-name ABC --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.BeginDate == "" {
				c.BeginDate = a.clock.Now().Format(recon.DateLayout)
			}
			if c.EndDate == "" {
				if t, err := time.Parse(recon.DateLayout, c.BeginDate); err == nil {
					c.EndDate = t.AddDate(1, 0, 0).Format(recon.DateLayout)
				}
			}
			if err := c.Validate(); err != nil {
				return describe(err)
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				if err := db.CreateCompany(cmd.Context(), &c); err != nil {
					return err
				}
				return a.print(map[string]any{"id": c.ID}, "created company %d (%s)", c.ID, c.ShortName)
			})
		},
	}
	f := create.Flags()
	f.StringVar(&c.FullName, "full-name", "", "full company name (required)")
	f.StringVar(&c.ShortName, "short-name", "", "abbreviated company name (required)")
	f.StringVar(&c.Status, "status", recon.CompanyActive, "active or inactive")
	f.StringVar(&c.Subscription, "subscription", "Standard", "subscription plan name")
	f.StringVar(&c.BeginDate, "begin-date", "", "subscription start, YYYY-MM-DD (default today)")
	f.StringVar(&c.EndDate, "end-date", "", "subscription end, YYYY-MM-DD (default a year after the start)")
	f.BoolVar(&c.Config.Paycode, "paycode", true, "extract payment codes from transfer memos")
	f.BoolVar(&c.Config.BankSubAccount, "bank-sub-account", false, "the company uses bank sub-accounts")
	f.IntVar(&c.Config.DataStorageDays, "data-storage-days", 365, "data retention in days (also --data-storage-time); 0 keeps everything")
	f.SetNormalizeFunc(normalizeStorageFlag("data-storage-days"))
	_ = create.MarkFlagRequired("full-name")
	_ = create.MarkFlagRequired("short-name")
	a.addJSONFlag(create)
	return create
}

func newUserCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	cmd.AddCommand(newUserCreateCmd(a), newUserUpdateCmd(a))
	return cmd
}

func newUserCreateCmd(a *app) *cobra.Command {
	var (
		u        recon.User
		role     string
		password string
	)
	create := &cobra.Command{
		Use:     "create",
		Short:   "Create a user of a company",
		Example: `  recon user create --company 1 --email ketoan@abc.vn --role Accountant --permission view_transactions --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u.Role = recon.Role(role)
			if err := u.Validate(); err != nil {
				return describe(err)
			}
			if password != "" {
				if len(password) < 8 {
					return fmt.Errorf("--password must be at least 8 characters")
				}
				h, err := oauth.HashPassword(password)
				if err != nil {
					return err
				}
				u.PasswordHash = h
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				err := cliAudited(cmd.Context(), db, recon.LiveTenant(u.Company), nil, recon.AuditUserCreate, u.Email,
					[]recon.AuditChange{{Field: "role", After: string(u.Role)}, {Field: "permissions", After: strings.Join(u.Permissions, ", ")}},
					func(ctx context.Context) error { return db.CreateUser(ctx, &u) })
				if err != nil {
					return err
				}
				return a.print(map[string]any{"id": u.ID}, "created user %d (%s, %s) in company %d", u.ID, u.Email, u.Role, u.Company)
			})
		},
	}
	f := create.Flags()
	f.Int64Var(&u.Company, "company", 0, "company id (required)")
	f.StringVar(&u.Email, "email", "", "e-mail address, the login name (required)")
	f.StringVar(&role, "role", "", "SuperAdmin, Admin, Accountant or Member (required)")
	f.StringSliceVar(&u.Permissions, "permission", nil, "a permission to grant ("+strings.Join(recon.Permissions, ", ")+"); repeat for more")
	f.StringVar(&password, "password", "", "password for the login page (at least 8 characters; without it the user cannot log in)")
	for _, n := range []string{"company", "email", "role"} {
		_ = create.MarkFlagRequired(n)
	}
	a.addJSONFlag(create)
	return create
}

// newUserUpdateCmd is `recon user update`: a user's role and permissions.
// Tokens already issued follow at their next request (the user is loaded
// fresh on each); refreshes narrow to what the new role allows.
func newUserUpdateCmd(a *app) *cobra.Command {
	var (
		companyID int64
		role      string
		perms     []string
	)
	update := &cobra.Command{
		Use:     "update USER_ID",
		Short:   "Change a user's role and permissions (applies to their tokens at once)",
		Example: `  recon user update 7 --company 1 --role Member --permission view_transactions`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("USER_ID must be a positive integer, not %q", args[0])
			}
			u := recon.User{Company: companyID, Email: "check@example.com", Role: recon.Role(role), Permissions: perms}
			if err := u.Validate(); err != nil {
				return describe(err)
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				object, before := fmt.Sprint("user ", id), map[string]string{}
				if old, err := db.User(cmd.Context(), id); err == nil && old.Company == companyID {
					object, before = old.Email, map[string]string{"role": string(old.Role), "permissions": strings.Join(old.Permissions, ", ")}
				}
				change := recon.AuditDiff([]string{"role", "permissions"}, before, map[string]string{"role": string(u.Role), "permissions": strings.Join(u.Permissions, ", ")})
				err := cliAudited(cmd.Context(), db, recon.LiveTenant(companyID), nil, recon.AuditUserRole, object, change, func(ctx context.Context) error {
					return db.SetUserRole(ctx, companyID, id, u.Role, u.Permissions)
				})
				if err != nil {
					return describe(err)
				}
				return a.print(map[string]any{"id": id, "role": role, "permissions": perms},
					"user %d of company %d is now %s with permissions [%s]", id, companyID, role, strings.Join(perms, " "))
			})
		},
	}
	f := update.Flags()
	f.Int64Var(&companyID, "company", 0, "the user's company id (required)")
	f.StringVar(&role, "role", "", "SuperAdmin, Admin, Accountant or Member (required)")
	f.StringSliceVar(&perms, "permission", nil, "a permission the user holds afterwards ("+strings.Join(recon.Permissions, ", ")+"); repeat for more; none given: none held")
	for _, n := range []string{"company", "role"} {
		_ = update.MarkFlagRequired(n)
	}
	a.addJSONFlag(update)
	return update
}

func newClientCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "client", Short: "Manage OAuth2 clients"}
	var (
		c      recon.Client
		scopes string
		public bool
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Register an OAuth2 client for a company",
		Long: `Register an OAuth2 client for a company. The client secret is printed once and
stored only as a hash: keep it. With --test the client is a test-mode client: its
id and secret start with test_, and its tokens reach only the company's test data
(docs/testmode.md); the company's users sign in through it as through any client.`,
		Example: `  recon client create --company 1 --name "ERP sync" --scopes "company transaction:read" --redirect-uri https://erp.example.vn/callback --json
  recon client create --company 1 --name "ERP sync (test)" --scopes "transaction:read transaction:write" --test --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.Scopes = strings.Fields(scopes)
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				secret, err := oauth.RegisterClient(cmd.Context(), db, &c, public)
				if err != nil {
					return describe(err)
				}
				if tn, err := db.TenantOf(cmd.Context(), c.Company, !c.Test); err == nil {
					err = cliAudited(cmd.Context(), db, tn.ID, nil, recon.AuditClientCreate, c.ID,
						[]recon.AuditChange{{Field: "name", After: c.Name}, {Field: "scopes", After: strings.Join(c.Scopes, " ")}}, noChange)
					if err != nil {
						return err
					}
				}
				out := map[string]any{"client_id": c.ID, "client_secret": secret, "livemode": !c.Test}
				if public {
					return a.print(out, "client_id:     %s\n(public client: no secret, PKCE only)", c.ID)
				}
				return a.print(out, "client_id:     %s\nclient_secret: %s\n(the secret is shown only now)", c.ID, secret)
			})
		},
	}
	f := create.Flags()
	f.Int64Var(&c.Company, "company", 0, "company id (required)")
	f.StringVar(&c.Name, "name", "", "client name shown on the consent page (required)")
	f.StringVar(&scopes, "scopes", "", `allowed scopes, space-separated (required), from: `+strings.Join(recon.Scopes, " "))
	f.StringSliceVar(&c.RedirectURIs, "redirect-uri", nil, "redirect URI for the authorization code flow; repeat for more")
	f.BoolVar(&public, "public", false, "a public client (browser or mobile app): no secret, authorization code with PKCE only")
	f.BoolVar(&c.Test, "test", false, "a test-mode client: its tokens reach only the company's test data")
	for _, n := range []string{"company", "name", "scopes"} {
		_ = create.MarkFlagRequired(n)
	}
	a.addJSONFlag(create)
	cmd.AddCommand(create)
	return cmd
}

func newTokenCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Issue access tokens (operator shortcut)"}
	var (
		clientID, email, scopes string
		ttl                     time.Duration
	)
	issue := &cobra.Command{
		Use:   "issue",
		Short: "Issue an access token as if the user had consented",
		Long: `Issue a real OAuth2 access token for a client and one of its company's users,
as if the user had logged in and consented. The token is stored and checked
exactly like one the authorization flow issues. As at consent, the token gets
only the scopes the user's role and permissions allow (docs/api.md, "Who may do what"); the
others are listed as refused, and a request allowed none of them fails.`,
		Example: `  recon token issue --client rc_0123 --user admin@abc.vn --scopes "company transaction:read" --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				srv, err := server.NewOAuth(cmd.Context(), db, "http://localhost", a.clock, nil)
				if err != nil {
					return err
				}
				t, err := srv.IssueToken(cmd.Context(), clientID, email, strings.Fields(scopes), ttl)
				if err != nil {
					return err
				}
				note := ""
				if len(t.Refused) > 0 {
					note = "; refused for the user's role: " + strings.Join(t.Refused, " ")
				}
				return a.print(map[string]any{"access_token": t.Token, "token_type": "Bearer", "expires_in": int64(t.ExpiresIn.Seconds()),
					"scope": strings.Join(t.Scopes, " "), "refused_scopes": t.Refused},
					"%s\n(expires in %s; scope: %s%s)", t.Token, t.ExpiresIn, strings.Join(t.Scopes, " "), note)
			})
		},
	}
	f := issue.Flags()
	f.StringVar(&clientID, "client", "", "client id (required)")
	f.StringVar(&email, "user", "", `e-mail of a user of the client's company (required; "" issues a token with no user, like client credentials)`)
	f.StringVar(&scopes, "scopes", "", "scopes, space-separated; a subset of the client's (required)")
	f.DurationVar(&ttl, "ttl", time.Hour, "token lifetime")
	for _, n := range []string{"client", "user", "scopes"} {
		_ = issue.MarkFlagRequired(n)
	}
	a.addJSONFlag(issue)
	cmd.AddCommand(issue)
	return cmd
}

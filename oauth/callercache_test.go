package oauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// countingStore is a real store that counts the lookups Authenticate makes
// without the cache: the token session, the tenant and the user. While
// down is set, its reads of the epoch fail as an unreachable database's.
type countingStore struct {
	recon.Store
	lookups atomic.Int64
	down    atomic.Bool
}

func (s *countingStore) AuthEpoch(ctx context.Context) (int64, error) {
	if s.down.Load() {
		return 0, recon.Errorf(recon.EUNAVAILABLE, "the database is not reachable")
	}
	return s.Store.AuthEpoch(ctx)
}

func (s *countingStore) AuthEpochAndVersion(ctx context.Context, tenant recon.TenantID) (int64, int64, error) {
	if s.down.Load() {
		return 0, 0, recon.Errorf(recon.EUNAVAILABLE, "the database is not reachable")
	}
	return s.Store.AuthEpochAndVersion(ctx, tenant)
}

func (s *countingStore) TokenSession(ctx context.Context, kind recon.TokenKind, signature string) (*recon.TokenSession, error) {
	s.lookups.Add(1)
	return s.Store.TokenSession(ctx, kind, signature)
}

func (s *countingStore) TenantOf(ctx context.Context, companyID int64, live bool) (*recon.Tenant, error) {
	s.lookups.Add(1)
	return s.Store.TenantOf(ctx, companyID, live)
}

func (s *countingStore) User(ctx context.Context, id int64) (*recon.User, error) {
	s.lookups.Add(1)
	return s.Store.User(ctx, id)
}

// TestCallerCacheOnTwoNodes: two authorization servers (nodes) on one
// database, each with its own connections. Node B answers a token it has
// seen from its cache, without the lookups; a token revoked through node A's
// revocation endpoint, a role changed and a company deactivated by node A's
// store are refused (or seen changed) by node B's very next call, with no
// waiting: the change moved the authentication epoch in its own transaction.
func TestCallerCacheOnTwoNodes(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dbURL := dbtest.NewMigratedURL(t, engine)
			a := setupOn(t, dbtest.OpenURL(t, dbURL))
			storeB := &countingStore{Store: dbtest.OpenURL(t, dbURL)}
			nodeB, err := New(Config{
				Issuer: a.srv.URL,
				Secret: []byte("0123456789abcdef0123456789abcdef"),
				Clock:  a.clock,
				Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
			}, storeB)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// authB authenticates on node B and counts its lookups.
			authB := func(token string) (*recon.Caller, int64, error) {
				before := storeB.lookups.Load()
				c, err := nodeB.Authenticate(ctx, token)
				return c, storeB.lookups.Load() - before, err
			}

			// Both ways, the caller comes with the epoch its
			// authentication read (what recon.Extractors keeps by).
			wantEpoch := func(call string, c *recon.Caller) {
				t.Helper()
				if want, err := storeB.AuthEpoch(ctx); err != nil {
					t.Fatal(err)
				} else if e, ok := c.Epoch(); !ok || e != want {
					t.Fatalf("node B, %s: epoch %d, %v; want %d", call, e, ok, want)
				}
			}
			access, _ := a.tokens(t, "company")
			if c, n, err := authB(access); err != nil || c.User == nil || c.User.ID != a.user.ID || n != 3 {
				t.Fatalf("node B, first call: %+v, %v after %d lookups; want the user after 3", c, err, n)
			} else if v, ok := c.TenantVersion(); ok {
				t.Fatalf("node B, first call: tenant version %d; want none read", v)
			} else {
				wantEpoch("first call", c)
			}
			c, n, err := authB(access)
			if err != nil || n != 0 {
				t.Fatalf("node B, second call: %v after %d lookups; want the cached caller after none", err, n)
			}
			wantEpoch("second call", c)
			// The cached caller comes with its tenant's version, read with
			// the epoch.
			if _, want, err := storeB.AuthEpochAndVersion(ctx, c.Tenant); err != nil {
				t.Fatal(err)
			} else if v, ok := c.TenantVersion(); !ok || v != want {
				t.Fatalf("node B, second call: tenant version %d, %v; want %d", v, ok, want)
			}
			c.User.Role, c.Scopes[0] = recon.RoleAdmin, "mutated" // a handler's change stays its own
			if c, _, _ := authB(access); c.Scopes[0] != "company" || c.User.Role != a.user.Role {
				t.Fatalf("the cache handed out shared state: %+v", c)
			}

			t.Run("role changed on node A", func(t *testing.T) {
				if err := a.db.SetUserRole(ctx, a.company.ID, a.user.ID, recon.RoleAccountant, nil); err != nil {
					t.Fatal(err)
				}
				if c, n, err := authB(access); err != nil || c.User.Role != recon.RoleAccountant || n != 3 {
					t.Fatalf("node B after the role change: %+v, %v after %d lookups; want role Accountant, looked up", c, err, n)
				}
			})
			t.Run("company deactivated on node A", func(t *testing.T) {
				a.setStatus(t, a.company.ID, recon.CompanyInactive)
				if _, _, err := authB(access); recon.ErrorCode(err) != recon.EFORBIDDEN {
					t.Fatalf("node B after deactivation: %v; want EFORBIDDEN", err)
				}
				a.setStatus(t, a.company.ID, recon.CompanyActive)
				if _, _, err := authB(access); err != nil {
					t.Fatalf("node B after reactivation: %v", err)
				}
			})
			t.Run("database down", func(t *testing.T) {
				// A kept caller is never answered unchecked: no epoch read,
				// no caller, and the store's error as it came (503).
				storeB.down.Store(true)
				c, _, err := authB(access)
				storeB.down.Store(false)
				if c != nil || recon.ErrorCode(err) != recon.EUNAVAILABLE {
					t.Fatalf("node B, database down: %+v, %v; want EUNAVAILABLE", c, err)
				}
				if c, n, err := authB(access); err != nil || n != 0 {
					t.Fatalf("node B, database back: %+v, %v after %d lookups; want the kept caller", c, err, n)
				}
			})
			t.Run("token revoked on node A", func(t *testing.T) {
				if _, n, err := authB(access); err != nil || n != 0 {
					t.Fatalf("node B before the revocation: %v after %d lookups; want cached", err, n)
				}
				if r := a.post(t, "/oauth/revoke", url.Values{"token": {access}}, a.conf.ID, a.confSecret); r.status != http.StatusOK {
					t.Fatalf("revoke on node A: %d %v", r.status, r.json)
				}
				if c, _, err := authB(access); c != nil || recon.ErrorCode(err) != recon.EUNAUTHORIZED {
					t.Fatalf("node B after the revocation on node A: %+v, %v; want EUNAUTHORIZED", c, err)
				}
			})
		})
	}
}

// TestCallerCacheExpiry: a cached caller is not answered past its token's expiry.
func TestCallerCacheExpiry(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		access, _ := b.tokens(t, "company")
		if _, err := b.server.Authenticate(context.Background(), access); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(DefaultAccessTTL + 1)
		b.wantUnauthorized(t, access)
	})
}

// TestCallerCacheByTheGivenTime: the cache reads no clock of its own: the
// time it is asked at decides a token's expiry, and it hands out the
// epoch a caller is kept under for Authenticate to compare, so it is driven
// here without a server or a database.
func TestCallerCacheByTheGivenTime(t *testing.T) {
	var c callerCache
	expires := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c.put("sig", 3, &recon.Caller{Tenant: recon.TenantFromRow(7, false), Scopes: []string{"company"}}, expires)
	if got, epoch, ok := c.candidate("sig", expires.Add(-time.Nanosecond)); !ok || got.Tenant.ID() != 7 || epoch != 3 {
		t.Fatalf("before the expiry: %+v under %d, %v", got, epoch, ok)
	}
	if _, _, ok := c.candidate("sig", expires); ok {
		t.Fatal("at the expiry: still cached")
	}
	c.put("old", 2, &recon.Caller{Tenant: recon.TenantFromRow(8, false)}, expires) // an older epoch's put is dropped
	if _, _, ok := c.candidate("old", expires.Add(-time.Hour)); ok {
		t.Fatal("a put under an older epoch was kept")
	}
}

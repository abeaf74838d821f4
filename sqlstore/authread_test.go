package sqlstore_test

import (
	"fmt"
	"sync"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestSharedAuthReadsSeeEarlierWrites: concurrent requests share the
// authentication's reads (sqlstore/authread.go), and each still learns
// every write committed before it asked. Eight goroutines each move their
// own company's version, as every writer of a listed field does, then ask
// for it, while the others do the same and one more asks for the epoch
// alone; every answer must be at least the version its own write
// committed. One that joined a read already running could see an older
// one. A company that never changed is at version 0.
func TestSharedAuthReadsSeeEarlierWrites(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := dbtest.OpenStore(t, engine)
		const workers, rounds = 8, 100
		tenants := make([]recon.TenantID, workers+1)
		for i := range tenants {
			co := &recon.Company{FullName: fmt.Sprintf("Cửa hàng %d", i), ShortName: fmt.Sprintf("CH%d", i), Status: recon.CompanyActive}
			if err := s.CreateCompany(t.Context(), co); err != nil {
				t.Fatal(err)
			}
			tenants[i] = recon.LiveTenant(co.ID)
		}
		epoch0, err := s.AuthEpoch(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers+1)
		for w := range workers {
			wg.Go(func() {
				tenant := tenants[w]
				for range rounds {
					var committed int64
					err := s.SQL().QueryRowContext(t.Context(), `INSERT INTO sync_counters (company_id, seq) VALUES ($1, 1)
						ON CONFLICT (company_id) DO UPDATE SET seq = sync_counters.seq + 1 RETURNING seq`, tenant.ID()).Scan(&committed)
					if err != nil {
						errs <- err
						return
					}
					epoch, version, err := s.AuthEpochAndVersion(t.Context(), tenant)
					if err != nil || epoch < epoch0 || version < committed {
						errs <- fmt.Errorf("tenant %d: epoch %d, version %d, %v after committing version %d", tenant.ID(), epoch, version, err, committed)
						return
					}
				}
			})
		}
		wg.Go(func() {
			for range rounds {
				if epoch, err := s.AuthEpoch(t.Context()); err != nil || epoch < epoch0 {
					errs <- fmt.Errorf("the epoch alone: %d, %v", epoch, err)
					return
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if _, v, err := s.AuthEpochAndVersion(t.Context(), tenants[workers]); err != nil || v != 0 {
			t.Fatalf("a company that never changed: version %d, %v; want 0", v, err)
		}
	})
}

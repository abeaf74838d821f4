package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// BenchmarkClaimBesideOrderedBacklog: what one claim costs every other
// company while an ordered target holds a backlog behind its head in
// flight (docs/benchmarks.md, "Ordered and unordered targets (issue 23)"):
// each iteration enqueues one delivery of an unordered target and claims
// it, beside 10,000 waiting deliveries of an ordered one.
func BenchmarkClaimBesideOrderedBacklog(b *testing.B) {
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			db := dbtest.OpenStore(b, engine)
			ctx := b.Context()
			var cos []*recon.Company
			for i, ordered := range []bool{true, false} {
				c := newCompanyRow(i)
				if err := db.CreateCompany(ctx, c); err != nil {
					b.Fatal(err)
				}
				if err := db.SetIPN(ctx, c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true, Ordered: ordered}); err != nil {
					b.Fatal(err)
				}
				cos = append(cos, c)
			}
			const backlog = 10_000
			for i := range backlog {
				if err := db.EnqueueDelivery(ctx, &recon.Delivery{CompanyID: cos[0].ID, Kind: recon.DeliveryIPN, Event: fmt.Sprint("B", i), Payload: []byte(`{}`)}); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now().Add(time.Second)
			if got, err := db.ClaimDeliveries(ctx, "head", now, 1, time.Hour); err != nil || len(got) != 1 {
				b.Fatalf("the ordered head: %v %v", got, err)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := db.EnqueueDelivery(ctx, &recon.Delivery{CompanyID: cos[1].ID, Kind: recon.DeliveryIPN, Event: fmt.Sprint("U", i), Payload: []byte(`{}`)}); err != nil {
					b.Fatal(err)
				}
				got, err := db.ClaimDeliveries(ctx, "n", time.Now().Add(time.Second), 10, time.Hour)
				if err != nil || len(got) != 1 || got[0].CompanyID != cos[1].ID {
					b.Fatalf("claim %d: %v %v", i, got, err)
				}
			}
		})
	}
}

package apiv2

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/recon-vn/recon/client"
	"recon/sqlstore/dbtest"
)

// TestSDK drives the Go SDK's v2 base (client.V2) against a real Handler:
// sync iteration over every change, a bad cursor's *client.Error, and an
// idempotent POST whose retry is replayed.
func TestSDK(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	co, auth := company(t, db, "SM")
	d := newIdem()
	h := New(Config{Store: db, Auth: auth})
	_, srv := server(t, Config{Store: db, Auth: auth}, d.routes, h.transactionRoutes)
	c, err := client.New(srv.URL, client.WithTokenSource(client.StaticToken("admin")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acct := account(t, db, co.Tenant(), "0071000123456")
	var want []int64
	for i := range 5 {
		want = append(want, ingest(t, db, co.Tenant(), acct, "/a"+string(rune('0'+i)), "/b"+string(rune('0'+i)))...)
	}
	var got []int64
	cursor := ""
	for page, err := range c.V2().Sync(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range page.Added {
			got = append(got, tx.ID)
		}
		cursor = page.NextCursor
	}
	if !slices.Equal(got, want) || cursor == "" {
		t.Errorf("synced %v (cursor %q), want %v", got, cursor, want)
	}
	_, err = c.V2().SyncTransactions(ctx, "nonsense", 0)
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != client.CodeValidation || len(e.Fields["cursor"]) != 1 {
		t.Errorf("a bad cursor: %v", err)
	}

	key := client.NewIdempotencyKey()
	var first, second struct {
		Run int `json:"run"`
	}
	var replayed bool
	if _, err := c.V2().Call(ctx, "POST", "/v2/test/pay", map[string]int{"amount": 5}, &first, client.WithIdempotencyKey(key), client.Replayed(&replayed)); err != nil || replayed {
		t.Fatalf("first: %v (replayed %v)", err, replayed)
	}
	if _, err := c.V2().Call(ctx, "POST", "/v2/test/pay", map[string]int{"amount": 5}, &second, client.WithIdempotencyKey(key), client.Replayed(&replayed)); err != nil || !replayed || second != first || d.runs.Load() != 1 {
		t.Errorf("retry: %v (replayed %v, %+v after %+v, %d runs)", err, replayed, second, first, d.runs.Load())
	}
}

package apiv2

import (
	"context"
	"errors"
	"testing"

	"github.com/recon-vn/recon/client"
	"recon/sqlstore/dbtest"
)

// TestRefundSDK drives the Go SDK's refund calls (client/v2refunds.go)
// against a real Handler: a refund by transaction with its key (a retry
// replays it), the rules' codes in *client.Error, approve with four eyes,
// cancel, reading and iterating.
func TestRefundSDK(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newRefundEnv(t, engine)
		sdk := func(token string) *client.V2 {
			c, err := client.New(e.url, client.WithTokenSource(client.StaticToken(token)))
			if err != nil {
				t.Fatal(err)
			}
			return c.V2()
		}
		shop, admin2 := sdk("server"), sdk("admin2")
		receiver := &client.V2RefundReceiver{BankBIN: "970436", AccountNumber: "0071000123456", AccountName: "NGUYEN VAN A"}
		amount := int64(30_000)
		in := client.V2RefundRequest{Amount: &amount, Reason: "trả hàng", Receiver: receiver}
		var replayed bool
		r, err := shop.RefundTransaction(ctx, e.in, in, client.WithIdempotencyKey("sdk-1"), client.Replayed(&replayed))
		if err != nil || r.Status != client.RefundPending || r.Amount != 30_000 || *r.TransactionID != e.in || replayed ||
			r.Instructions == nil || r.Instructions.Memo != r.Reference || r.Instructions.QR.Payload == nil {
			t.Fatalf("requested: %+v %v", r, err)
		}
		again, err := shop.RefundTransaction(ctx, e.in, in, client.WithIdempotencyKey("sdk-1"), client.Replayed(&replayed))
		if err != nil || again.ID != r.ID || !replayed {
			t.Fatalf("retried: %+v %v %v", again, replayed, err)
		}
		for _, c := range []struct {
			in   client.V2RefundRequest
			code string
		}{
			{client.V2RefundRequest{Reason: "x"}, client.CodeReceiverRequired},
			{client.V2RefundRequest{Amount: func() *int64 { n := int64(70_001); return &n }(), Reason: "x", Receiver: receiver}, client.CodeAmountExceedsRefundable},
		} {
			_, err := shop.RefundTransaction(ctx, e.in, c.in, client.WithIdempotencyKey(client.NewIdempotencyKey()))
			var ce *client.Error
			if !errors.As(err, &ce) || ce.StatusCode != 422 || ce.Code != c.code {
				t.Fatalf("%s: %v", c.code, err)
			}
		}
		_, err = shop.RefundTransaction(ctx, e.out, in, client.WithIdempotencyKey(client.NewIdempotencyKey()))
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Code != client.CodeNothingToRefund {
			t.Fatalf("outgoing: %v", err)
		}
		if err := e.db.SetRefundApprovalThreshold(ctx, e.co.Tenant(), 50_000); err != nil {
			t.Fatal(err)
		}
		big, err := sdk("admin").RefundTransaction(ctx, e.in, client.V2RefundRequest{Reason: "hủy", Receiver: receiver}, client.WithIdempotencyKey("sdk-2"))
		if err != nil || big.Status != client.RefundPendingApproval || big.Amount != 70_000 {
			t.Fatalf("big: %+v %v", big, err)
		}
		if _, err := sdk("admin-cli").ApproveRefund(ctx, big.ID); err == nil {
			t.Fatal("the requester approved through another client")
		}
		got, err := admin2.ApproveRefund(ctx, big.ID)
		if err != nil || got.Status != client.RefundPending || got.ApprovedBy == nil || *got.ApprovedBy.UserID != 2 {
			t.Fatalf("approved: %+v %v", got, err)
		}
		got, err = shop.CancelRefund(ctx, big.ID)
		if err != nil || got.Status != client.RefundCancelled {
			t.Fatalf("cancelled: %+v %v", got, err)
		}
		_, err = shop.CancelRefund(ctx, big.ID)
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Code != client.CodeRefundInvalidState {
			t.Fatalf("cancel twice: %v", err)
		}
		one, err := shop.Refund(ctx, r.ID)
		if err != nil || one.Reference != r.Reference {
			t.Fatalf("read: %+v %v", one, err)
		}
		var ids []string
		for it, err := range shop.AllRefunds(ctx, client.V2RefundFilter{TransactionID: e.in, PerPage: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, it.ID)
		}
		if len(ids) != 2 || ids[0] != big.ID || ids[1] != r.ID {
			t.Fatalf("all refunds: %v", ids)
		}
		if list, meta, err := shop.Refunds(ctx, client.V2RefundFilter{Status: client.RefundCancelled}, 1); err != nil || len(list) != 1 || meta.Total != 1 {
			t.Fatalf("cancelled ones: %v %+v %v", list, meta, err)
		}
	})
}

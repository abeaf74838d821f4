package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"recon"
	"recon/orders"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestSimulateTransferToVA: `recon simulate transfer --va` pays a virtual
// account of API v2 through the one pipeline, a bank one by its number
// (sub-account) and a memo one by its code in the memo, its amount by
// default; an unknown number and a missing bank account are refused.
func TestSimulateTransferToVA(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		dbURL := dbtest.NewMigratedURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")
		db, err := sqlstore.Open(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tenant := recon.LiveTenant(mustInt(t, co))
		svc := &orders.Service{Store: db}
		memo, err := svc.Create(ctx, tenant, recon.OrderInput{InvoiceNumber: "MEMO", Amount: 150000, VA: recon.VAInput{AmountMode: recon.VAPartial}})
		if err != nil {
			t.Fatal(err)
		}
		svc.Connector = func(recon.TenantID, *recon.BankAccount) recon.VAConnector { return recon.SandboxVAs{} }
		bank, err := svc.Create(ctx, tenant, recon.OrderInput{InvoiceNumber: "BANK", Amount: 90000})
		if err != nil {
			t.Fatal(err)
		}
		out := cliJSON(t, dbURL, "simulate", "transfer", "--va", memo.VAs[0].Number, "--amount", "50000", "--content", "NGUYEN VAN A")
		if out["code"] != memo.VAs[0].Number {
			t.Errorf("memo transfer: %v", out)
		}
		cliJSON(t, dbURL, "simulate", "transfer", "--va", bank.VAs[0].Number)
		for _, w := range []struct {
			id     string
			status string
			paid   int64
		}{{memo.Order.PublicID, recon.OrderPartiallyPaid, 50000}, {bank.Order.PublicID, recon.OrderPaid, 90000}} {
			o, err := db.OrderByPublicID(ctx, tenant, w.id)
			if err != nil || o.V2Status() != w.status || o.PaidAmount != w.paid {
				t.Errorf("order %s: %+v %v; want %s, %d paid", w.id, o, err, w.status, w.paid)
			}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--va", "SBR0000000000404", "--amount", "1"}, "no virtual account SBR0000000000404"},
			{[]string{"--amount", "1"}, "--bank-account (or --va) is required"},
			{[]string{"--va", memo.VAs[0].Number, "--bank-account", "999999", "--amount", "1"}, "no virtual account"},
		} {
			if _, err := cli(t, dbURL, append([]string{"simulate", "transfer"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("simulate transfer %v: %v, want %q", c.args, err, c.want)
			}
		}
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"recon/sqlstore/dbtest"
)

// TestEmptyListsSaySo checks that a list with nothing in it says so in its
// text form (docs/getting-started.md) and stays an empty list in --json.
func TestEmptyListsSaySo(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	if out, err := cli(t, dbURL, "company", "list"); err != nil || out != "no companies\n" {
		t.Fatalf("company list on an empty database: %q %v", out, err)
	}
	co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Hoa Sen", "--short-name", "HOASEN")
	id := fmt.Sprint(co["id"])
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bank-account", "list", "--company", id}, "no bank accounts"},
		{[]string{"bank-account", "list", "--company", id, "--test"}, "no bank accounts"},
		{[]string{"exceptions", "list", "--company", id}, "no exceptions"},
		{[]string{"deliveries", "list", "--company", id}, "no notifications"},
		{[]string{"refunds", "list", "--company", id}, "no refunds"},
		{[]string{"invoices", "list", "--company", id}, "no invoices"},
		{[]string{"hub", "company", "list", "--company", id}, "no hub companies"},
	} {
		out, err := cli(t, dbURL, c.args...)
		if err != nil || out != c.want+"\n" {
			t.Errorf("recon %s: %q %v, want %q", strings.Join(c.args, " "), out, err, c.want)
		}
	}
	if out, err := cli(t, dbURL, "bank-account", "list", "--company", id, "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("bank-account list --json: %q %v", out, err)
	}
}

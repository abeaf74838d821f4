package recon_test

import (
	"bytes"
	"strings"
	"testing"

	"recon"
)

// counting is a deterministic source of "random" bytes: 0, 1, 2, ...
type counting struct{ n byte }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

// TestGeneratorsReadTheirSource: xids, simulated references, secrets and
// merchant credentials come from the reader they are given, so tests can
// drive them, in the forms the wire and the CLI show.
func TestGeneratorsReadTheirSource(t *testing.T) {
	if got, want := recon.NewXIDFrom(&counting{}), "00010203-0405-4607-8809-0a0b0c0d0e0f"; got != want || !recon.ValidXID(got) {
		t.Errorf("NewXIDFrom = %q, want %q", got, want)
	}
	if got, want := recon.SimulatedReferenceFrom(&counting{}), "SIM0001020304050607"; got != want {
		t.Errorf("SimulatedReferenceFrom = %q, want %q", got, want)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	if got := recon.NewSecretFrom(&counting{}); got != alphabet[:48] {
		t.Errorf("NewSecretFrom = %q, want %q", got, alphabet[:48])
	}
	if a, b := recon.NewSecretFrom(&counting{n: 3}), recon.NewSecretFrom(&counting{n: 3}); a != b || len(a) != recon.SecretLen {
		t.Errorf("NewSecretFrom is not a function of its source: %q, %q", a, b)
	}

	live := recon.NewMerchant(&counting{}, recon.LiveTenant(41), 41)
	if live.Tenant != recon.LiveTenant(41) || live.MerchantID != "MC41_000102030405" || live.SecretKey != recon.NewSecretFrom(&counting{n: 6}) {
		t.Errorf("NewMerchant (live) = %+v", live)
	}
	test := recon.NewMerchant(&counting{}, recon.TenantFromRow(42, false), 41)
	if test.Tenant != recon.TenantFromRow(42, false) || test.MerchantID != recon.TestMerchantPrefix+"MC41_000102030405" ||
		test.SecretKey != recon.TestClientPrefix+recon.NewSecretFrom(&counting{n: 6}) {
		t.Errorf("NewMerchant (test) = %+v", test)
	}
	if s := recon.NewMerchantSecret(bytes.NewReader(bytes.Repeat([]byte{1}, 64)), true); !strings.HasPrefix(s, recon.TestClientPrefix) ||
		s != recon.TestClientPrefix+strings.Repeat("B", recon.SecretLen) {
		t.Errorf("NewMerchantSecret (test) = %q", s)
	}
	if s := recon.NewMerchantSecret(&counting{}, false); s != alphabet[:48] {
		t.Errorf("NewMerchantSecret (live) = %q", s)
	}
}

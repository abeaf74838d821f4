package oauth

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestClientSecrets(t *testing.T) {
	ctx := context.Background()
	secret, hash, err := NewClientSecret()
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != 43 || len(hash) != 64 || hash != HashClientSecret(secret) {
		t.Fatalf("secret %q, hash %q", secret, hash)
	}
	if _, err := hex.DecodeString(hash); err != nil {
		t.Fatal(err)
	}
	other, _, _ := NewClientSecret()
	if other == secret {
		t.Fatal("two equal secrets")
	}
	h := secretHasher{}
	for _, tc := range []struct {
		hash, secret string
		ok           bool
	}{
		{hash, secret, true},
		{strings.ToUpper(hash), secret, true},
		{hash, other, false},
		{hash, "", false},
		{"", "", false},
		{"", secret, false},
	} {
		if err := h.Compare(ctx, []byte(tc.hash), []byte(tc.secret)); (err == nil) != tc.ok {
			t.Errorf("Compare(%.8q, %.8q) = %v, want ok=%v", tc.hash, tc.secret, err, tc.ok)
		}
	}
	if got, _ := h.Hash(ctx, []byte(secret)); string(got) != hash {
		t.Errorf("Hash = %s", got)
	}
}

func TestPasswords(t *testing.T) {
	h, err := hashPassword("s3cret pass", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if !checkPassword(h, "s3cret pass") || checkPassword(h, "s3cret pas") || checkPassword("", "") || checkPassword("", "s3cret pass") {
		t.Error("checkPassword is wrong")
	}
	for _, pw := range []string{"", strings.Repeat("x", 73)} {
		if _, err := HashPassword(pw); recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("HashPassword(%d bytes) = %v, want EINVALID", len(pw), err)
		}
	}
	if cost, err := bcrypt.Cost([]byte(dummyHash)); err != nil || cost != PasswordCost {
		t.Errorf("dummy hash: cost %d, %v", cost, err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	store := dbtest.OpenStore(t, "sqlite")
	secret := []byte("0123456789abcdef0123456789abcdef")
	for name, cfg := range map[string]Config{
		"no issuer":       {Secret: secret},
		"relative issuer": {Issuer: "/oauth", Secret: secret},
		"issuer query":    {Issuer: "https://recon.example?x=1", Secret: secret},
		"short secret":    {Issuer: "https://recon.example", Secret: secret[:31]},
		"negative ttl":    {Issuer: "https://recon.example", Secret: secret, AccessTTL: -1},
	} {
		if _, err := New(cfg, store); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	s, err := New(Config{Issuer: "https://recon.example/", Secret: secret}, store)
	if err != nil {
		t.Fatal(err)
	}
	if s.issuer != "https://recon.example" || s.cfg.AccessTTL != DefaultAccessTTL || s.cfg.RefreshTTL != DefaultRefreshTTL || s.cfg.CodeTTL != DefaultCodeTTL {
		t.Errorf("defaults: %q %+v", s.issuer, s.cfg)
	}
}

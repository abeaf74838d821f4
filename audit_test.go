package recon

import (
	"slices"
	"strings"
	"testing"
)

func TestAuditDiff(t *testing.T) {
	fields := []string{"name", "url", "secret_key"}
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		want          []AuditChange
	}{
		{"nothing changed", map[string]string{"name": "a"}, map[string]string{"name": "a"}, nil},
		{"a field", map[string]string{"name": "a"}, map[string]string{"name": "b"}, []AuditChange{{"name", "a", "b"}}},
		{"set from nothing", nil, map[string]string{"url": "https://x"}, []AuditChange{{"url", "", "https://x"}}},
		{"a secret says rotated", map[string]string{"secret_key": "old-s3cret"}, map[string]string{"secret_key": "new-s3cret"}, []AuditChange{{"secret_key", "", AuditRotated}}},
		{"fields not listed are left out", nil, map[string]string{"other": "x"}, nil},
	} {
		got := AuditDiff(fields, tc.before, tc.after, "secret_key")
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		for _, c := range got {
			if strings.Contains(c.Before+c.After, "s3cret") {
				t.Errorf("%s: a secret's value in %+v", tc.name, c)
			}
		}
	}
}

func TestAuditEntryNormalize(t *testing.T) {
	e := &AuditEntry{Tenant: LiveTenant(1), Action: AuditUserRole, Object: strings.Repeat("ắ", 400) + "\xff"}
	if err := e.Normalize(); err != nil {
		t.Fatal(err)
	}
	if len(e.Object) > auditTextMax+len("…") || !strings.HasSuffix(e.Object, "…") {
		t.Errorf("object not cut: %d bytes", len(e.Object))
	}
	for _, bad := range []*AuditEntry{{Tenant: LiveTenant(1), Action: "nope"}, {Action: AuditUserRole}} {
		if err := bad.Normalize(); ErrorCode(err) != EINVALID {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	for _, a := range AuditActions {
		if !slices.Contains(AuditFamilies, AuditFamily(a)) {
			t.Errorf("action %s has no family in AuditFamilies", a)
		}
	}
}

package statement

import (
	"slices"
	"strings"
	"testing"
)

// TestOtherReferences: every way a statement names references keeps them
// all (docs/statements.md, References).
func TestOtherReferences(t *testing.T) {
	mt := "{1:F01ICBVVNVXAXXX0000000000}{2:O9401200260917ICBVVNVXAXXXN}{4:\n:20:S1\n:25:ICBVVNVX/101234567890\n:28C:1/1\n:60F:C260916VND0,\n" +
		":61:2609170917C150000,00NTRFCUST123456//FT26260001234\n:86:166?00GUTSCHRIFT?20EREF+E2E-00991122?21KREF+KREF778899?30X\n" +
		":61:2609170917C20000,00NTRFNONREF//FT26260001235\n:86:/EREF/ABC123456/REMI/DH1 thanh toan/\n" +
		":62F:C260917VND170000,\n-}"
	csv := "transaction_date,amount_in,transaction_content,reference_number,other_references\n" +
		"2026-09-17 10:00:00,100000,DH1,FT1,E2E-1; TX-1 ;FT1\n2026-09-17 11:00:00,200000,DH2,FT2,\n"
	mapped := "Thời điểm,Tiền về,Lời nhắn,Mã,Mã E2E,Số bút toán\n05/11/2026 10:00,\"1.000.000\",chuyen DH9,X1,E2E9,\n"
	for _, tc := range []struct {
		name string
		file string
		f    Format
		opts Options
		want [][]string
	}{
		{"mt940", mt, MT940, Options{}, [][]string{{"CUST123456", "E2E-00991122", "KREF778899"}, {"ABC123456"}}},
		{"csv", csv, CSV, Options{}, [][]string{{"E2E-1", "TX-1"}, nil}},
		{"mapping", mapped, CSV, Options{Mapping: &ColumnMapping{Date: "Thời điểm", AmountIn: "Tiền về", Content: "Lời nhắn", Reference: "Mã",
			OtherReferences: []string{"Mã E2E", "số bút toán"}}}, [][]string{{"E2E9"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, _, err := Parse(strings.NewReader(tc.file), tc.f, tc.opts, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tc.want))
			}
			for i, l := range lines {
				if !slices.Equal(l.Tx.References, tc.want[i]) {
					t.Errorf("line %d: references %q, want %q", i, l.Tx.References, tc.want[i])
				}
			}
		})
	}
}

// TestMappingOtherReferencesValidate: other_references' refusals name the
// field.
func TestMappingOtherReferencesValidate(t *testing.T) {
	base := ColumnMapping{Date: "Ngày", AmountIn: "Có", Content: "Nội dung", Reference: "Mã"}
	for _, refs := range [][]string{{""}, {"mã"}, {strings.Repeat("x", MaxMappingHeader+1)}, slices.Repeat([]string{"a"}, 17)} {
		m := base
		m.OtherReferences = refs
		err := ValidateMapping(&m)
		if err == nil || !strings.Contains(err.Error(), "other_references") {
			t.Errorf("%q: %v", refs, err)
		}
	}
}

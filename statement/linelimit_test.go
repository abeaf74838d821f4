package statement

import (
	"strings"
	"testing"

	"recon"
)

// TestEndlessLine: a CSV or MT940 file whose line never ends is refused
// once the line passes MaxLineBytes, with a clear error, instead of being
// read whole into memory (a 60 MB one-line CSV raised the server's memory
// by the file's size several times over).
func TestEndlessLine(t *testing.T) {
	long := strings.Repeat("A", MaxLineBytes+1)
	for name, tc := range map[string]struct {
		f          Format
		file, want string
	}{
		"csv memo":   {CSV, "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,1000," + long + ",R1\n", "line 2 is longer than 65536 bytes"},
		"csv header": {CSV, long + "\n", "line 1 is longer than 65536 bytes"},
		"csv quoted cell of many lines": {CSV, "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,1000,\"" +
			strings.Repeat("memo\n", MaxLineBytes/5+1) + "\",R1\n", "the row starting at line 2 (a quoted cell spanning lines) is longer than 65536 bytes"},
		// An MT940 field stops at its own cap (docs/statements.md, Limits).
		"mt940 field": {MT940, ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n:61:2611241124C1000,NTRFREF1\n:86:" + long + "\n", "line 6: field :86: is longer than 8192 bytes"},
		"mt940 continuation lines": {MT940, ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n:61:2611241124C1000,NTRFREF1\n:86:DH1234\n" +
			strings.Repeat("continued\n", MaxMT940FieldBytes/10+1), "field :86: (from line 6) is longer than 8192 bytes"},
		"mt940 header line": {MT940, "{1:" + long + "}\n", "line 1 is longer than 65536 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			err := ParseFunc(strings.NewReader(tc.file), tc.f, Options{}, false, func(Line) error { return nil }, nil)
			if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), tc.want) {
				t.Fatalf("err = %.300v; want EINVALID containing %q", err, tc.want)
			}
		})
	}
	// Files of ordinary lines are read: a quoted cell with line breaks and
	// quotes, rows after one encoding/csv refuses (a bare quote), and an
	// MT940 :86: of many lines within the cap.
	ok := "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,1000,\"memo \"\"DH1234\"\"\nline two\",R1\n" +
		"2026-11-24 10:00:00,1000,bad \"quote,R2\n" +
		"2026-11-24 10:00:00,1000,memo,R4\n" + strings.Repeat("2026-11-24 10:00:00,1000,"+strings.Repeat("x", 1000)+",R5\n", 200)
	var n int
	if err := ParseFunc(strings.NewReader(ok), CSV, Options{}, true, func(Line) error { n++; return nil }, nil); err != nil || n != 202 {
		t.Fatalf("a normal CSV file: %d lines, %.300v", n, err)
	}
	mt := ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n:61:2611241124C1000,NTRFREF1\n:86:DH1234\n" +
		strings.Repeat("continued\n", 60) + ":62F:C261124VND1000,\n"
	n = 0
	if err := ParseFunc(strings.NewReader(mt), MT940, Options{}, false, func(Line) error { n++; return nil }, nil); err != nil || n != 1 {
		t.Fatalf("a normal MT940 file: %d lines, %.300v", n, err)
	}
}

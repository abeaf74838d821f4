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
		f    Format
		file string
	}{
		"csv memo":    {CSV, "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,1000," + long + ",R1\n"},
		"csv header":  {CSV, long + "\n"},
		"mt940 field": {MT940, ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n:61:2611241124C1000,NTRFREF1\n:86:" + long + "\n"},
	} {
		t.Run(name, func(t *testing.T) {
			err := ParseFunc(strings.NewReader(tc.file), tc.f, Options{}, false, func(Line) error { return nil }, nil)
			if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), "is longer than 65536 bytes") {
				t.Fatalf("err = %v; want EINVALID naming the line length", err)
			}
		})
	}
	// A file of ordinary lines is read.
	ok := "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,1000,memo DH1234,R1\n"
	var n int
	if err := ParseFunc(strings.NewReader(ok), CSV, Options{}, false, func(Line) error { n++; return nil }, nil); err != nil || n != 1 {
		t.Fatalf("a normal file: %d lines, %v", n, err)
	}
}

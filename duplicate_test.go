package recon

import "testing"

func TestDupReasonRoundTrip(t *testing.T) {
	for _, byRef := range []bool{false, true} {
		id, got, ok := ParseDupReason(DupReason(42, byRef))
		if !ok || id != 42 || got != byRef {
			t.Fatalf("%v: %d %v %v", byRef, id, got, ok)
		}
	}
	for _, s := range []string{"", "possible duplicate of transaction x: same", "possible duplicate of transaction 4: other", NoCodeReason} {
		if _, _, ok := ParseDupReason(s); ok {
			t.Fatalf("%q read as a possible duplicate's reason", s)
		}
	}
}

func TestDupKey(t *testing.T) {
	a := DupKey(20000, 2_500_000, 0, "Nguyễn Văn A  chuyển tiền")
	if b := DupKey(20000, 2_500_000, 0, "NGUYEN VAN A CHUYENTIEN"); a != b {
		t.Fatal("the normalised memos differ")
	}
	for _, b := range []int64{DupKey(20001, 2_500_000, 0, "Nguyễn Văn A chuyển tiền"), DupKey(20000, 0, 2_500_000, "Nguyễn Văn A chuyển tiền"),
		DupKey(20000, 2_500_001, 0, "Nguyễn Văn A chuyển tiền"), DupKey(20000, 2_500_000, 0, "Nguyễn Văn B chuyển tiền")} {
		if a == b {
			t.Fatal("another day, direction, amount or memo has the same key")
		}
	}
	if DupKeyOn(a, 20001) != DupKey(20001, 2_500_000, 0, "nguyen van a chuyen tien") || DupKeyOn(a, 20000) != a || a < 0 {
		t.Fatalf("DupKeyOn %d", a)
	}
}

package recon

import (
	"math"
	"testing"
)

// TestVNDInWords checks amounts from 0 to 999,999,999,999 read by hand
// (docs/invoices.md, Amounts and words).
func TestVNDInWords(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "Không đồng"},
		{1, "Một đồng"},
		{4, "Bốn đồng"},
		{5, "Năm đồng"},
		{10, "Mười đồng"},
		{11, "Mười một đồng"},
		{14, "Mười bốn đồng"},
		{15, "Mười lăm đồng"},
		{20, "Hai mươi đồng"},
		{21, "Hai mươi mốt đồng"},
		{25, "Hai mươi lăm đồng"},
		{31, "Ba mươi mốt đồng"},
		{55, "Năm mươi lăm đồng"},
		{99, "Chín mươi chín đồng"},
		{100, "Một trăm đồng"},
		{101, "Một trăm linh một đồng"},
		{105, "Một trăm linh năm đồng"},
		{110, "Một trăm mười đồng"},
		{111, "Một trăm mười một đồng"},
		{115, "Một trăm mười lăm đồng"},
		{121, "Một trăm hai mươi mốt đồng"},
		{205, "Hai trăm linh năm đồng"},
		{999, "Chín trăm chín mươi chín đồng"},
		{1000, "Một nghìn đồng"},
		{1001, "Một nghìn không trăm linh một đồng"},
		{1010, "Một nghìn không trăm mười đồng"},
		{1015, "Một nghìn không trăm mười lăm đồng"},
		{1050, "Một nghìn không trăm năm mươi đồng"},
		{1100, "Một nghìn một trăm đồng"},
		{1234, "Một nghìn hai trăm ba mươi bốn đồng"},
		{10_000, "Mười nghìn đồng"},
		{15_000, "Mười lăm nghìn đồng"},
		{21_000, "Hai mươi mốt nghìn đồng"},
		{25_500, "Hai mươi lăm nghìn năm trăm đồng"},
		{100_000, "Một trăm nghìn đồng"},
		{105_000, "Một trăm linh năm nghìn đồng"},
		{110_000, "Một trăm mười nghìn đồng"},
		{250_000, "Hai trăm năm mươi nghìn đồng"},
		{999_999, "Chín trăm chín mươi chín nghìn chín trăm chín mươi chín đồng"},
		{1_000_000, "Một triệu đồng"},
		{1_000_005, "Một triệu không trăm linh năm đồng"},
		{1_005_000, "Một triệu không trăm linh năm nghìn đồng"},
		{1_500_000, "Một triệu năm trăm nghìn đồng"},
		{2_000_100, "Hai triệu một trăm đồng"},
		{10_000_001, "Mười triệu không trăm linh một đồng"},
		{21_021_021, "Hai mươi mốt triệu không trăm hai mươi mốt nghìn không trăm hai mươi mốt đồng"},
		{105_105_105, "Một trăm linh năm triệu một trăm linh năm nghìn một trăm linh năm đồng"},
		{1_000_000_000, "Một tỷ đồng"},
		{1_000_000_001, "Một tỷ không trăm linh một đồng"},
		{1_001_000_000, "Một tỷ không trăm linh một triệu đồng"},
		{1_200_000_000, "Một tỷ hai trăm triệu đồng"},
		{5_015_000_000, "Năm tỷ không trăm mười lăm triệu đồng"},
		{25_000_000_000, "Hai mươi lăm tỷ đồng"},
		{100_000_000_000, "Một trăm tỷ đồng"},
		{101_000_000_001, "Một trăm linh một tỷ không trăm linh một đồng"},
		{999_999_999_999, "Chín trăm chín mươi chín tỷ chín trăm chín mươi chín triệu chín trăm chín mươi chín nghìn chín trăm chín mươi chín đồng"},
		// Beyond the range invoices reach, the count of tỷ is read.
		{1_000_000_000_000, "Một nghìn tỷ đồng"},
		{-15, "Âm mười lăm đồng"},
	} {
		if got := VNDInWords(c.n); got != c.want {
			t.Errorf("VNDInWords(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := VNDInWords(math.MinInt64); got == "" {
		t.Error("VNDInWords(MinInt64) is empty")
	}
}

package recon

import "strings"

// VNDInWords writes an amount of VND in Vietnamese words, as invoices print
// their total (docs/invoices.md, Amounts and words): "Một triệu không trăm
// linh năm đồng" for 1,000,005. The rules of Vietnamese reading:
//
//   - digits are read in groups of three with nghìn, triệu, tỷ; a group of
//     three zeros is skipped (1,000,000 is "một triệu");
//   - every group but the leading one is read with its hundreds, "không
//     trăm" when its hundreds digit is 0 (1,050 is "một nghìn không trăm
//     năm mươi");
//   - a zero tens digit between hundreds and a units digit reads "linh"
//     (105 "một trăm linh năm");
//   - tens: 1 reads "mười", 2–9 read "X mươi";
//   - units: 1 after a tens digit of 2–9 reads "mốt" (21 "hai mươi mốt"),
//     5 after any tens digit 1–9 reads "lăm" (15 "mười lăm", 25 "hai mươi
//     lăm"); 4 reads "bốn" everywhere (the form invoices use);
//   - beyond 999 tỷ the count of tỷ is itself read (1,000 tỷ "một nghìn tỷ").
//
// The first letter is capitalised and the text ends with " đồng". A negative
// amount starts with "Âm".
func VNDInWords(n int64) string {
	var w string
	switch {
	case n == 0:
		w = "không"
	case n < 0:
		u := uint64(-(n + 1)) + 1 // also for math.MinInt64
		w = "âm " + readUint(u)
	default:
		w = readUint(uint64(n))
	}
	w += " đồng"
	r := []rune(w)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

var vnDigits = [10]string{"không", "một", "hai", "ba", "bốn", "năm", "sáu", "bảy", "tám", "chín"}

// readUint reads n > 0.
func readUint(n uint64) string {
	const billion = 1_000_000_000
	if n >= billion {
		words := readUint(n/billion) + " tỷ"
		if rest := n % billion; rest != 0 {
			words += " " + readBelowBillion(rest, false)
		}
		return words
	}
	return readBelowBillion(n, true)
}

// readBelowBillion reads 0 < n < 10^9; leading says whether nothing is read
// before it (so its first group drops "không trăm").
func readBelowBillion(n uint64, leading bool) string {
	groups := [3]uint64{n / 1_000_000, n / 1000 % 1000, n % 1000}
	scales := [3]string{"triệu", "nghìn", ""}
	var out []string
	for i, g := range groups {
		if g == 0 {
			continue
		}
		out = append(out, readGroup(int(g), !leading))
		if scales[i] != "" {
			out = append(out, scales[i])
		}
		leading = false
	}
	return strings.Join(out, " ")
}

// readGroup reads 0 < g < 1000; full reads the hundreds even when 0.
func readGroup(g int, full bool) string {
	h, t, u := g/100, g/10%10, g%10
	var out []string
	if h > 0 || full {
		out = append(out, vnDigits[h], "trăm")
	}
	switch {
	case t == 0 && u != 0 && len(out) > 0:
		out = append(out, "linh")
	case t == 1:
		out = append(out, "mười")
	case t > 1:
		out = append(out, vnDigits[t], "mươi")
	}
	switch {
	case u == 0:
	case u == 1 && t > 1:
		out = append(out, "mốt")
	case u == 5 && t > 0:
		out = append(out, "lăm")
	default:
		out = append(out, vnDigits[u])
	}
	return strings.Join(out, " ")
}

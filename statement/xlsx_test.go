package statement

import (
	"archive/zip"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"recon"
)

// TestBankErrors: a bad row of a bank export names its row, the column by
// its header in the file, and the problem; a mapping finds its layout.
func TestBankErrors(t *testing.T) {
	const head = "Sao kê tài khoản\nSố TK: 123\nNgày giao dịch,Số tiền ghi nợ,Số tiền ghi có,Nội dung,Số bút toán\n"
	for _, tc := range []struct {
		name, file string
		m          *ColumnMapping
		want       string
	}{
		{"bad amount", head + "01/11/2026,,abc,DH1,R1\n", nil, `row 4: Số tiền ghi có: "abc" is not an amount`},
		{"bad date", head + "31/02/2026,,1000,DH1,R1\n", nil, `row 4: Ngày giao dịch: "31/02/2026" is not a date`},
		{"both amounts", head + "01/11/2026,5,1000,DH1,R1\n", nil, "row 4: Số tiền ghi có: both Số tiền ghi có (1000) and Số tiền ghi nợ (5) are set"},
		{"no amount", head + "01/11/2026,,,DH1,R1\n", nil, "row 4: Số tiền ghi có: no amount"},
		{"empty reference", head + "01/11/2026,,1000,DH1,\n", nil, "row 4: Số bút toán: is empty"},
		{"fraction", head + "01/11/2026,,\"1000,50\",DH1,R1\n", nil, "row 4: Số tiền ghi có: \"1000,50\": VND has no minor unit"},
		{"no header", "a,b,c\n1,2,3\n", nil, "no header row found in the first 31 rows"},
		{"mapping not found", "a,b,c\n1,2,3\n", &ColumnMapping{Date: "Ngày", Content: "Ghi chú", AmountIn: "Tiền"}, `no header row holding the columns of the bank account's saved mapping ("Ngày", "Tiền", "Ghi chú")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tc.file), CSV, Options{Mapping: tc.m}, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) || recon.ErrorCode(err) != recon.EINVALID {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A mapping reads a layout no alias knows, wherever its header row is.
	file := "Báo cáo\n\nThời điểm,Tiền về,Tiền đi,Lời nhắn,Mã\n05/11/2026 10:00,\"1.000.000\",,chuyen DH9,X1\n"
	if _, _, err := Parse(strings.NewReader(file), CSV, Options{}, false); err == nil {
		t.Fatal("an unknown layout parsed without a mapping")
	}
	m := &ColumnMapping{Date: "thời điểm", AmountIn: "TIỀN VỀ", AmountOut: "Tiền đi", Content: "Lời nhắn", Reference: "Mã"}
	if err := ValidateMapping(m); err != nil {
		t.Fatal(err)
	}
	lines, _, err := Parse(strings.NewReader(file), CSV, Options{Mapping: m}, false)
	if err != nil || len(lines) != 1 || lines[0].Row != 4 || lines[0].Tx.AmountIn != 1000000 || lines[0].Tx.ReferenceNumber != "X1" || lines[0].Tx.Content != "chuyen DH9" {
		t.Fatalf("mapped: %+v %v", lines, err)
	}
	// Without a reference column, a row's reference is its hash: the same
	// on every import, distinct for two identical rows.
	noRef := "Ngày giao dịch;Ghi có;Diễn giải\n01/11/2026;1.000;DH1\n01/11/2026;1.000;DH1\n"
	a, _, err := Parse(strings.NewReader(noRef), CSV, Options{}, false)
	b, _, _ := Parse(strings.NewReader(noRef), CSV, Options{}, false)
	if err != nil || len(a) != 2 || a[0].Tx.ReferenceNumber == a[1].Tx.ReferenceNumber || a[0].Tx.ReferenceNumber != b[0].Tx.ReferenceNumber || !strings.HasPrefix(a[0].Tx.ReferenceNumber, "stmt-") {
		t.Fatalf("hashed references: %+v %v", a, err)
	}
}

// TestColumnMappingValidate: the mapping's refusals name the field.
func TestColumnMappingValidate(t *testing.T) {
	for _, tc := range []struct {
		m     ColumnMapping
		field string
	}{
		{ColumnMapping{Content: "b", AmountIn: "c"}, "date"},
		{ColumnMapping{Date: "a", AmountIn: "c"}, "content"},
		{ColumnMapping{Date: "a", Content: "b"}, "amount_in"},
		{ColumnMapping{Date: "a", Content: "b", Amount: "c", AmountIn: "d"}, "amount"},
		{ColumnMapping{Date: "a", Content: "Nội dung", AmountIn: "NOI DUNG"}, "content"},
		{ColumnMapping{Date: strings.Repeat("x", 201), Content: "b", AmountIn: "c"}, "date"},
	} {
		err := ValidateMapping(&tc.m)
		var re *recon.Error
		if !errors.As(err, &re) || re.Code != recon.EINVALID || len(re.Fields[tc.field]) == 0 {
			t.Errorf("%+v: %v, want a problem with %s", tc.m, err, tc.field)
		}
	}
}

// TestXLSXLimits: a zip bomb, a part too large, a zip that is no workbook,
// a row of too many cells are refused with a message naming the problem.
func TestXLSXLimits(t *testing.T) {
	dir := t.TempDir()
	zipOf := func(name string, parts map[string]int) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for part, size := range parts {
			// A part's directory entry declares its unpacked size, which the
			// check reads before anything is unpacked: it declares size here,
			// over a few stored bytes (archive/zip itself refuses a part that
			// unpacks to more than it declares), instead of compressing
			// hundreds of MiB for each run.
			body := []byte("<x/>")
			w, err := zw.CreateRaw(&zip.FileHeader{Name: part, Method: zip.Store,
				CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(size), CRC32: crc32.ChecksumIEEE(body)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(body); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return path
	}
	wide := filepath.Join(dir, "wide.xlsx")
	row := make([]any, MaxXLSXColumns+1)
	for i := range row {
		row[i] = "x"
	}
	writeXLSX(t, wide, [][]any{row})
	for _, tc := range []struct{ path, want string }{
		{zipOf("bomb.xlsx", map[string]int{"xl/workbook.xml": 10, "xl/worksheets/sheet1.xml": MaxXLSXUnzipped + 1}), "unpacks to more than 512 MiB"},
		{zipOf("styles.xlsx", map[string]int{"xl/workbook.xml": 10, "xl/styles.xml": MaxXLSXPart + 1}), "the part xl/styles.xml of the Excel workbook unpacks to more than 16 MiB"},
		{zipOf("other.xlsx", map[string]int{"readme.txt": 10}), "not an Excel workbook (.xlsx): it has no xl/workbook.xml"},
		{wide, "row 1 of the worksheet \"Sheet1\" has 257 cells: at most 256 are read"},
	} {
		f, err := os.Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Parse(f, XLSX, Options{TempDir: dir}, true)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("%s: %v, want %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "recon-xlsx-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestXLSXBoundedMemory: a big workbook (a bank export of 150000 rows,
// every memo a distinct shared string) is read in memory that does not
// grow with it: the heap while it is read stays far below its unpacked size.
func TestXLSXBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("big workbook")
	}
	const rows = 150000
	dir := t.TempDir()
	path := filepath.Join(dir, "big.xlsx")
	f := excelize.NewFile()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	_ = sw.SetRow("A1", []any{"SAO KÊ TÀI KHOẢN"})
	_ = sw.SetRow("A2", []any{"Ngày giao dịch", "Số tham chiếu", "Số tiền ghi nợ", "Số tiền ghi có", "Số dư", "Mô tả"})
	for i := 0; i < rows; i++ {
		cell, _ := excelize.CoordinatesToCellName(1, i+3)
		memo := fmt.Sprintf("NGUYEN VAN A chuyen tien thanh toan don hang DH%07d qua ung dung ngan hang, ma giao dich %09d", i, i*7)
		if err := sw.SetRow(cell, []any{"01/11/2026 08:00:00", fmt.Sprintf("REF%08d", i), nil, 150000, 150000 * (i + 1), memo}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	unpacked := uint64(0)
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		unpacked += zf.UncompressedSize64
	}
	zr.Close()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	n := 0
	err = ParseFunc(in, XLSX, Options{TempDir: dir}, false, func(l Line) error {
		n++
		if n%20000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	}, nil)
	if err != nil || n != rows {
		t.Fatalf("%d rows, %v", n, err)
	}
	growth := peak - min(peak, base)
	t.Logf("unpacked %d MiB, heap growth %d MiB", unpacked>>20, growth>>20)
	if unpacked < 40<<20 || growth > 24<<20 {
		t.Fatalf("heap grew by %d MiB reading a workbook of %d MiB unpacked", growth>>20, unpacked>>20)
	}
}

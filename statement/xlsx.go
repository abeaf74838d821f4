package statement

import (
	"archive/zip"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Excel workbooks (docs/statements.md, Excel). The file is spooled to a
// temporary file, its zip directory checked against the limits below (a zip
// bomb is refused before anything is unpacked), and the first worksheet read
// row by row with excelize's Rows reader: worksheets and the shared strings
// over xlsxMemoryPart are unpacked to temporary files and streamed, so the
// memory of a parse does not grow with the file.
const (
	// MaxXLSXUnzipped bounds the unpacked size of a workbook, all parts.
	MaxXLSXUnzipped = 512 << 20
	// MaxXLSXPart bounds the unpacked size of a part other than a worksheet
	// or the shared strings (styles, workbook, theme...), held in memory.
	MaxXLSXPart = 16 << 20
	// MaxXLSXParts bounds the number of parts of a workbook.
	MaxXLSXParts = 10000
	// MaxXLSXRows bounds the rows read (Excel's own limit is 1048576).
	MaxXLSXRows = 1 << 20
	// MaxXLSXColumns bounds the cells of a row.
	MaxXLSXColumns = 256
	// xlsxMemoryPart: a worksheet or shared strings part over this size is
	// unpacked to a temporary file instead of memory.
	xlsxMemoryPart = 1 << 20
)

// parseXLSX reads the first worksheet of a workbook as a table (parseTable):
// Recon's CSV layout, a bank export or the mapping's layout.
func (p *parser) parseXLSX(r io.Reader) error {
	spool, err := os.CreateTemp(p.tempDir, "recon-xlsx-*")
	if err != nil {
		return fmt.Errorf("statement: spooling the workbook: %w", err)
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	size, err := io.Copy(spool, r)
	if err != nil {
		return err // the reader's own error: ParseFunc reports it
	}
	if err := checkWorkbook(spool, size); err != nil {
		return err
	}
	wb, err := excelize.OpenFile(spool.Name(), excelize.Options{
		RawCellValue: true, UnzipSizeLimit: MaxXLSXUnzipped, UnzipXMLSizeLimit: xlsxMemoryPart, TmpDir: p.tempDir,
	})
	if err != nil {
		return fileErr("the Excel workbook could not be opened: %v", err)
	}
	defer wb.Close()
	sheets := wb.GetSheetList()
	if len(sheets) == 0 {
		return fileErr("the Excel workbook has no worksheet")
	}
	rows, err := wb.Rows(sheets[0])
	if err != nil {
		return fileErr("the worksheet %q could not be read: %v", sheets[0], err)
	}
	defer rows.Close()
	p.serialDates = true
	return p.parseTable(&xlsxSource{rows: rows, sheet: sheets[0]})
}

// checkWorkbook refuses what is not an xlsx workbook, and a workbook over
// the limits, from its zip directory (archive/zip fails a part that unpacks
// to more than its directory says).
func checkWorkbook(f *os.File, size int64) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return fileErr("the file is not an Excel workbook (.xlsx): %v", err)
	}
	if len(zr.File) > MaxXLSXParts {
		return fileErr("the Excel workbook has %d parts: at most %d are read", len(zr.File), MaxXLSXParts)
	}
	var total uint64
	workbook := false
	for _, zf := range zr.File {
		name := strings.ToLower(strings.ReplaceAll(zf.Name, "\\", "/"))
		n := zf.UncompressedSize64
		total += n
		if total > MaxXLSXUnzipped {
			return fileErr("the Excel workbook unpacks to more than %d MiB: it is refused (a zip bomb, or too large a statement)", MaxXLSXUnzipped>>20)
		}
		big := strings.HasPrefix(name, "xl/worksheets/sheet") || name == "xl/sharedstrings.xml"
		if !big && n > MaxXLSXPart {
			return fileErr("the part %s of the Excel workbook unpacks to more than %d MiB: it is refused", trunc(zf.Name), MaxXLSXPart>>20)
		}
		if name == "xl/workbook.xml" {
			workbook = true
		}
	}
	if !workbook {
		return fileErr("the file is a zip archive, not an Excel workbook (.xlsx): it has no xl/workbook.xml")
	}
	return nil
}

// xlsxSource reads the rows of a worksheet. A cell's value is raw: a
// number as stored ("1500000", a date as its serial day "46327.4375"), a
// text as written.
type xlsxSource struct {
	rows  *excelize.Rows
	sheet string
	row   int
}

func (s *xlsxSource) next() ([]string, int, error) {
	if !s.rows.Next() {
		if err := s.rows.Error(); err != nil {
			return nil, 0, fileErr("the worksheet %q could not be read after row %d: %v", s.sheet, s.row, err)
		}
		return nil, 0, io.EOF
	}
	s.row++
	if s.row > MaxXLSXRows {
		return nil, 0, fileErr("the worksheet %q has more than %d rows: at most %d are read", s.sheet, MaxXLSXRows, MaxXLSXRows)
	}
	rec, err := s.rows.Columns()
	if err != nil {
		return nil, 0, fileErr("row %d of the worksheet %q could not be read: %v", s.row, s.sheet, err)
	}
	if len(rec) > MaxXLSXColumns {
		// Trailing empty cells (formatting only) do not count.
		for len(rec) > MaxXLSXColumns && strings.TrimSpace(rec[len(rec)-1]) == "" {
			rec = rec[:len(rec)-1]
		}
		if len(rec) > MaxXLSXColumns {
			return nil, 0, fileErr("row %d of the worksheet %q has %d cells: at most %d are read", s.row, s.sheet, len(rec), MaxXLSXColumns)
		}
	}
	n := 0
	for _, c := range rec {
		n += len(c)
	}
	if n > MaxLineBytes {
		return nil, 0, fileErr("row %d of the worksheet %q is longer than %d bytes", s.row, s.sheet, MaxLineBytes)
	}
	return rec, s.row, nil
}

// isSerial reports whether s is a spreadsheet's serial day number:
// digits, an optional fraction (the time of day).
func isSerial(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	return whole != "" && len(whole) <= 7 && allDigits(whole) && allDigits(frac)
}

// excelEpoch is day 0 of the 1900 date system, as Excel counts it (with
// its 29 February 1900, so serials from 61 on are right).
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// serialDate turns a serial day number into a wall-clock time in loc, to
// the second.
func serialDate(s string, loc *time.Location) (time.Time, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 61 || v > 2958465 {
		return time.Time{}, fmt.Errorf("%q is not a date: the cell holds a number, not a date", trunc(s))
	}
	days := math.Floor(v)
	secs := int64(math.Round((v - days) * 86400))
	d := excelEpoch.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	return time.Date(d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second(), 0, loc), nil
}

// expAmount parses a number in exponent form, as a spreadsheet may store
// a large amount ("1.5E+06"): whole VND only. The value is exact: amounts
// are below 2^53.
func expAmount(s string, signed bool) (int64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not an amount", trunc(s))
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%q: %w", trunc(s), errNoMinorUnit)
	}
	if math.Abs(v) > maxAmount {
		return 0, fmt.Errorf("%q is too large for an amount", trunc(s))
	}
	n := int64(v)
	if !signed && n < 0 {
		n = -n
	}
	return n, nil
}

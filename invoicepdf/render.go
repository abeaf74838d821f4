// Package invoicepdf renders an electronic invoice as the PDF the buyer
// receives (docs/invoices.md, "PDF and the lookup page"): the printed form
// of the invoice ("bản thể hiện của hóa đơn điện tử") with its symbol and
// number, the seller and the buyer, the lines, the totals per VAT rate, the
// total in Vietnamese words, the lookup code and, for a replacement or an
// adjustment, the invoice it corrects.
//
// Render is a pure function of the invoice: it reads no store and no clock
// (the PDF's dates are the invoice's). The text is Vietnamese, set in DejaVu Sans (fonts/, its
// license beside it), embedded so every letter with its marks shows.
package invoicepdf

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/text/unicode/norm"

	"recon"
)

//go:embed fonts/DejaVuSans.ttf
var fontRegular []byte

//go:embed fonts/DejaVuSans-Bold.ttf
var fontBold []byte

// Vietnam is the time zone an invoice's date is written in (UTC+7, no
// daylight saving).
var Vietnam = time.FixedZone("ICT", 7*60*60)

// Options are what the PDF shows beyond the invoice itself.
type Options struct {
	// LookupURL is the public lookup page (GET /invoices/lookup on the
	// server's base URL), printed beside the lookup code; "" leaves only
	// the code.
	LookupURL string
	// Original is the invoice a replacement or an adjustment corrects, for
	// its symbol, number and date; nil names it by its reference code only.
	Original *recon.Invoice
	// Location is the time zone of the dates (Vietnam when nil).
	Location *time.Location
	// Test marks an invoice of a company's test mode (docs/testmode.md):
	// stamped "THỬ NGHIỆM", no legal value.
	Test bool
}

// Title is the invoice's title for its template: "HÓA ĐƠN GIÁ TRỊ GIA TĂNG"
// (template 1) or "HÓA ĐƠN BÁN HÀNG" (template 2).
func Title(template string) string {
	if template == recon.InvoiceTemplateSales {
		return "HÓA ĐƠN BÁN HÀNG"
	}
	return "HÓA ĐƠN GIÁ TRỊ GIA TĂNG"
}

// Symbol is the invoice's symbol as printed (ký hiệu): the template and the
// series, e.g. "1C26TAA".
func Symbol(inv *recon.Invoice) string { return inv.TemplateCode + inv.Series }

// DateVI writes a date as Vietnamese invoices do: "Ngày 26 tháng 11 năm 2026".
func DateVI(t time.Time) string {
	return fmt.Sprintf("Ngày %02d tháng %02d năm %d", t.Day(), int(t.Month()), t.Year())
}

// VND writes whole dong with "." between thousands, as Vietnamese write
// amounts: 1234567 → "1.234.567".
func VND(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Quantity writes a decimal quantity ("2.5") the Vietnamese way: "." between
// thousands and "," before the fraction ("2,5", "1.000").
func Quantity(q string) string {
	whole, frac, _ := strings.Cut(q, ".")
	if n, err := strconv.ParseInt(whole, 10, 64); err == nil {
		whole = VND(n)
	}
	frac = strings.TrimRight(frac, "0")
	if frac == "" {
		return whole
	}
	return whole + "," + frac
}

// Rate writes a VAT rate as invoices print it: "10%", "KCT", "KKKNT".
func Rate(r string) string {
	switch r {
	case recon.VATNotSubject, recon.VATNotDeclared, "":
		return r
	}
	return r + "%"
}

// PaymentMethod names the payment method in Vietnamese when it is one of
// the usual codes, else as given.
func PaymentMethod(m string) string {
	switch strings.ToUpper(m) {
	case "TM":
		return "Tiền mặt"
	case "CK":
		return "Chuyển khoản"
	case "TM/CK":
		return "Tiền mặt/Chuyển khoản"
	}
	return m
}

// Relation is the line naming the invoice a replacement or an adjustment
// corrects ("Hóa đơn này thay thế hóa đơn ký hiệu 1C26TAA số 12 ngày
// 20/11/2026"), "" for an invoice that corrects none.
func Relation(inv *recon.Invoice, orig *recon.Invoice, loc *time.Location) string {
	if inv.Relation == 0 && inv.OriginalReferenceCode == "" {
		return ""
	}
	ref := "mã " + inv.OriginalReferenceCode
	if orig != nil && orig.Number > 0 {
		ref = fmt.Sprintf("ký hiệu %s số %d ngày %s", Symbol(orig), orig.Number, orig.IssuedDate.In(loc).Format("02/01/2006"))
	}
	if inv.Relation == recon.InvoiceRelAdjust {
		kind := map[string]string{recon.AdjustIncrease: "tăng", recon.AdjustDecrease: "giảm", recon.AdjustInfo: "thông tin"}[inv.AdjustmentType]
		if kind == "" {
			return "Hóa đơn này điều chỉnh cho hóa đơn " + ref
		}
		return "Hóa đơn này điều chỉnh " + kind + " cho hóa đơn " + ref
	}
	return "Hóa đơn này thay thế hóa đơn " + ref
}

// Mark is the stamp across an invoice that is no longer (or not yet) valid
// on its own: "ĐÃ HỦY" for a cancelled one, "ĐÃ BỊ THAY THẾ" for a replaced
// one, "BẢN NHÁP" for a draft; "" otherwise.
func Mark(status string) string {
	switch status {
	case recon.InvoiceCancelled:
		return "ĐÃ HỦY"
	case recon.InvoiceReplaced:
		return "ĐÃ BỊ THAY THẾ"
	case recon.InvoiceDraft:
		return "BẢN NHÁP"
	}
	return ""
}

// TestMark is the stamp across a test mode's invoice.
const TestMark = "THỬ NGHIỆM"

// clean makes text safe for the font: NFC (a letter and its marks as one
// code point, which is what the font's cmap maps), and every rune outside
// the Basic Multilingual Plane (fpdf's widths stop there) or a control
// character replaced.
func clean(s string) string {
	s = norm.NFC.String(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r > 0xffff:
			return '?'
		}
		return r
	}, s)
}

// page geometry, millimetres on A4.
const (
	margin  = 12.0
	pageW   = 210.0
	bodyW   = pageW - 2*margin
	lineH   = 5.0
	fontSz  = 9.0
	smallSz = 8.0
)

type doc struct {
	*fpdf.Fpdf
}

func (d doc) font(bold bool, size float64) {
	if bold {
		d.SetFont("dejavu", "B", size)
	} else {
		d.SetFont("dejavu", "", size)
	}
}

// text writes a line "Label: value" with the label plain and the value
// bold, wrapping the value within the body.
func (d doc) field(label, value string) {
	label, value = clean(label), clean(value)
	d.font(false, fontSz)
	lw := d.GetStringWidth(label+": ") + 1
	d.CellFormat(lw, lineH, label+":", "", 0, "L", false, 0, "")
	d.font(true, fontSz)
	lines := d.SplitText(value, bodyW-lw)
	if len(lines) == 0 {
		lines = []string{""}
	}
	for i, l := range lines {
		if i > 0 {
			d.SetX(margin + lw)
		}
		d.CellFormat(bodyW-lw, lineH, l, "", 1, "L", false, 0, "")
	}
}

// Render returns the PDF of the invoice.
func Render(inv *recon.Invoice, opt Options) ([]byte, error) {
	loc := opt.Location
	if loc == nil {
		loc = Vietnam
	}
	f := fpdf.New("P", "mm", "A4", "")
	d := doc{f}
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, margin+8)
	f.AddUTF8FontFromBytes("dejavu", "", fontRegular)
	f.AddUTF8FontFromBytes("dejavu", "B", fontBold)
	date := inv.IssuedDate
	if date.IsZero() {
		date = inv.CreatedAt
	}
	// The document's own dates are the invoice's, not the clock's.
	f.SetCreationDate(date)
	f.SetModificationDate(date)
	f.SetProducer("Recon", true)
	f.SetTitle(clean(Title(inv.TemplateCode)+" "+Symbol(inv)+" "+strconv.FormatInt(inv.Number, 10)), true)
	f.SetAuthor(clean(inv.Seller.LegalName), true)
	f.SetLang("vi-VN")
	symbol, number := Symbol(inv), "—"
	if inv.Number > 0 {
		number = strconv.FormatInt(inv.Number, 10)
	}
	mark := Mark(inv.Status)
	if opt.Test && mark == "" {
		mark = TestMark
	}
	f.SetFooterFunc(func() {
		f.SetY(-margin - 4)
		d.font(false, smallSz)
		f.SetTextColor(90, 90, 90)
		foot := "Mẫu số " + inv.TemplateCode + " · Ký hiệu " + symbol + " · Số " + number
		if inv.LookupCode != "" {
			foot += " · Mã tra cứu " + inv.LookupCode
		}
		f.CellFormat(bodyW-20, 4, clean(foot), "T", 0, "L", false, 0, "")
		f.CellFormat(20, 4, fmt.Sprintf("Trang %d/{nb}", f.PageNo()), "T", 0, "R", false, 0, "")
		f.SetTextColor(0, 0, 0)
	})
	f.AliasNbPages("{nb}")
	f.SetHeaderFunc(func() {
		if mark == "" {
			return
		}
		// The stamp, drawn first so the invoice's text stays readable
		// over it.
		f.TransformBegin()
		f.TransformRotate(35, pageW/2, 150)
		d.font(true, 72)
		f.SetTextColor(220, 60, 60)
		f.SetAlpha(0.25, "Normal")
		w := f.GetStringWidth(mark)
		f.Text(pageW/2-w/2, 158, mark)
		f.SetAlpha(1, "Normal")
		f.SetTextColor(0, 0, 0)
		f.TransformEnd()
		f.SetXY(margin, margin)
	})
	f.AddPage()

	// The seller at the top left, the symbol and the number at the right.
	top := f.GetY()
	d.font(true, 11)
	f.SetTextColor(20, 50, 110)
	for _, l := range f.SplitText(clean(strings.ToUpper(inv.Seller.LegalName)), 125) {
		f.CellFormat(125, 5.5, l, "", 2, "L", false, 0, "")
	}
	f.SetTextColor(0, 0, 0)
	sellerEnd := f.GetY()
	f.SetXY(margin+130, top)
	d.font(false, fontSz)
	box := func(label, value string) {
		f.SetX(margin + 130)
		d.font(false, fontSz)
		f.CellFormat(24, lineH, clean(label), "", 0, "L", false, 0, "")
		d.font(true, fontSz)
		f.CellFormat(bodyW-130-24, lineH, clean(value), "", 1, "L", false, 0, "")
	}
	box("Mẫu số:", inv.TemplateCode)
	box("Ký hiệu:", symbol)
	box("Số:", number)
	f.SetY(max(f.GetY(), sellerEnd) + 3)

	// The title and the date.
	d.font(true, 16)
	f.SetTextColor(180, 30, 30)
	f.CellFormat(bodyW, 8, clean(Title(inv.TemplateCode)), "", 1, "C", false, 0, "")
	f.SetTextColor(0, 0, 0)
	d.font(false, smallSz)
	f.CellFormat(bodyW, 4.5, "(Bản thể hiện của hóa đơn điện tử)", "", 1, "C", false, 0, "")
	d.font(false, fontSz+1)
	if inv.IssuedDate.IsZero() {
		f.CellFormat(bodyW, 6, "Ngày ... tháng ... năm ...", "", 1, "C", false, 0, "")
	} else {
		f.CellFormat(bodyW, 6, DateVI(inv.IssuedDate.In(loc)), "", 1, "C", false, 0, "")
	}
	if mark != "" {
		// The stamp again, level, so that it reads in any viewer and
		// in the text.
		d.font(true, 11)
		f.SetTextColor(200, 40, 40)
		f.SetDrawColor(200, 40, 40)
		w := f.GetStringWidth(mark) + 8
		f.SetX(pageW/2 - w/2)
		f.CellFormat(w, 7, mark, "1", 1, "C", false, 0, "")
		f.SetTextColor(0, 0, 0)
		f.SetDrawColor(0, 0, 0)
	}
	if inv.CQTCode != "" {
		d.font(false, fontSz)
		f.CellFormat(bodyW, lineH, clean("Mã của cơ quan thuế: "+inv.CQTCode), "", 1, "C", false, 0, "")
	}
	if rel := Relation(inv, opt.Original, loc); rel != "" {
		d.font(true, fontSz)
		f.SetTextColor(20, 50, 110)
		f.MultiCell(bodyW, lineH, clean(rel), "", "C", false)
		f.SetTextColor(0, 0, 0)
	}
	f.Ln(2)

	// The seller.
	f.SetDrawColor(160, 160, 160)
	f.Line(margin, f.GetY(), pageW-margin, f.GetY())
	f.Ln(1.5)
	s := inv.Seller
	d.field("Đơn vị bán hàng", s.LegalName)
	d.field("Mã số thuế", s.TaxCode)
	d.field("Địa chỉ", s.Address)
	if s.Phone != "" || s.Email != "" {
		d.field("Điện thoại / Email", strings.Trim(s.Phone+" / "+s.Email, " /"))
	}
	if s.BankAcct != "" {
		d.field("Số tài khoản", strings.Trim(s.BankAcct+" - "+s.BankName, " -"))
	}
	f.Ln(1)
	f.Line(margin, f.GetY(), pageW-margin, f.GetY())
	f.Ln(1.5)

	// The buyer.
	b := inv.Buyer
	d.field("Họ tên người mua hàng", b.Name)
	d.field("Tên đơn vị", b.LegalName)
	d.field("Mã số thuế", b.TaxCode)
	d.field("Địa chỉ", b.Address)
	pay := PaymentMethod(inv.PaymentMethod)
	cur := inv.Currency
	if cur == "" {
		cur = "VND"
	}
	d.font(false, fontSz)
	lw := f.GetStringWidth("Hình thức thanh toán: ") + 1
	f.CellFormat(lw, lineH, "Hình thức thanh toán:", "", 0, "L", false, 0, "")
	d.font(true, fontSz)
	f.CellFormat(70, lineH, clean(pay), "", 0, "L", false, 0, "")
	d.font(false, fontSz)
	f.CellFormat(40, lineH, "Đồng tiền thanh toán:", "", 0, "L", false, 0, "")
	d.font(true, fontSz)
	f.CellFormat(0, lineH, clean(cur), "", 1, "L", false, 0, "")
	f.Ln(2)

	lines(d, inv)
	totals(d, inv)
	signatures(d, inv, loc)

	// Where the buyer looks the invoice up.
	f.Ln(3)
	d.font(false, fontSz)
	if inv.LookupCode != "" {
		if opt.LookupURL != "" {
			look := clean("Tra cứu hóa đơn tại: " + opt.LookupURL)
			f.CellFormat(f.GetStringWidth(look+" ")+1, lineH, look, "", 0, "L", false, 0, "")
		}
		f.CellFormat(f.GetStringWidth("Mã tra cứu: ")+1, lineH, "Mã tra cứu:", "", 0, "L", false, 0, "")
		d.font(true, fontSz)
		f.CellFormat(0, lineH, clean(inv.LookupCode), "", 1, "L", false, 0, "")
	}
	if inv.Status == recon.InvoiceCancelled {
		d.font(true, fontSz)
		f.SetTextColor(180, 30, 30)
		f.MultiCell(bodyW, lineH, clean("Hóa đơn đã bị hủy (cancelled). Lý do: "+inv.CancelReason), "", "L", false)
		f.SetTextColor(0, 0, 0)
	}
	d.font(false, smallSz)
	f.SetTextColor(90, 90, 90)
	f.MultiCell(bodyW, 4, "(Cần kiểm tra, đối chiếu khi lập, giao, nhận hóa đơn)", "", "C", false)
	f.SetTextColor(0, 0, 0)

	var out bytes.Buffer
	if err := f.Output(&out); err != nil {
		return nil, fmt.Errorf("invoicepdf: %w", err)
	}
	return out.Bytes(), nil
}

// column is one column of the lines table.
type column struct {
	head  string
	num   string // the column's number in the header's second row
	w     float64
	align string
}

// lines draws the table of the invoice's lines. A sales invoice (template
// 2) has no VAT columns.
func lines(d doc, inv *recon.Invoice) {
	f := d.Fpdf
	vat := inv.TemplateCode != recon.InvoiceTemplateSales
	cols := []column{
		{"STT", "1", 9, "C"}, {"Tên hàng hóa, dịch vụ", "2", 0, "L"}, {"Đơn vị\ntính", "3", 15, "C"},
		{"Số\nlượng", "4", 16, "R"}, {"Đơn giá", "5", 23, "R"}, {"Thành tiền\n(chưa có thuế)", "6 = 4 x 5", 26, "R"},
	}
	if !vat {
		cols[5].head = "Thành tiền"
	}
	if vat {
		cols = append(cols, column{"Thuế\nsuất", "7", 15, "C"}, column{"Tiền thuế", "8 = 6 x 7", 22, "R"})
	}
	rest := bodyW
	for _, c := range cols {
		rest -= c.w
	}
	cols[1].w = rest
	header := func() {
		f.SetFillColor(232, 238, 248)
		d.font(true, smallSz)
		x, y := f.GetX(), f.GetY()
		for _, c := range cols {
			f.SetXY(x, y)
			// Two-line headings keep their cell's height.
			hl := strings.Split(c.head, "\n") // constants: no clean needed
			f.Rect(x, y, c.w, 9, "FD")
			top := y + 0.5
			if len(hl) == 1 {
				top = y + 2.5
			}
			for i, l := range hl {
				f.SetXY(x, top+float64(i)*4)
				f.CellFormat(c.w, 4, l, "", 0, "C", false, 0, "")
			}
			x += c.w
		}
		f.SetXY(margin, y+9)
		d.font(false, 7)
		for _, c := range cols {
			f.CellFormat(c.w, 4, c.num, "1", 0, "C", true, 0, "")
		}
		f.Ln(-1)
	}
	f.SetDrawColor(120, 120, 120)
	header()
	d.font(false, smallSz)
	_, pageH := f.GetPageSize()
	for _, it := range inv.Items {
		name := clean(it.ItemName)
		switch it.LineType {
		case recon.LinePromotion:
			name += " (Hàng khuyến mại)"
		case recon.LineDiscount:
			name = "Chiết khấu thương mại: " + name
		}
		d.font(false, smallSz)
		cells := []string{strconv.Itoa(it.LineNumber), name, clean(it.Unit), Quantity(it.Quantity), VND(it.UnitPrice), VND(it.Amount)}
		if vat {
			cells = append(cells, Rate(it.VATRate), VND(it.VATAmount))
		}
		if it.LineType == recon.LineNote {
			cells = append([]string{strconv.Itoa(it.LineNumber), name}, make([]string, len(cols)-2)...)
		}
		// Every cell wraps within its column; the row is as tall as its
		// tallest cell.
		wrapped := make([][]string, len(cols))
		rows := 1
		for i, c := range cols {
			wrapped[i] = f.SplitText(cells[i], c.w)
			rows = max(rows, len(wrapped[i]))
		}
		h := float64(rows)*4 + 1.5
		if f.GetY()+h > pageH-margin-8 {
			f.AddPage()
			header()
			d.font(false, smallSz)
		}
		x, y := margin, f.GetY()
		for i, c := range cols {
			f.Rect(x, y, c.w, h, "D")
			for j, l := range wrapped[i] {
				f.SetXY(x, y+0.75+float64(j)*4)
				f.CellFormat(c.w, 4, l, "", 0, c.align, false, 0, "")
			}
			x += c.w
		}
		f.SetXY(margin, y+h)
	}
}

// totals draws the totals per VAT rate, the sums and the total in words.
func totals(d doc, inv *recon.Invoice) {
	f := d.Fpdf
	t := inv.Totals
	vat := inv.TemplateCode != recon.InvoiceTemplateSales
	_, pageH := f.GetPageSize()
	need := 6*lineH + float64(len(t.ByRate))*lineH + 12
	if f.GetY()+need > pageH-margin-8 {
		f.AddPage()
	}
	f.Ln(1)
	row := func(label, amount, vatAmount string, bold bool) {
		d.font(bold, fontSz)
		if vat {
			f.CellFormat(bodyW-26-22-15, lineH, clean(label), "LTB", 0, "L", false, 0, "")
			f.CellFormat(26, lineH, amount, "TB", 0, "R", false, 0, "")
			f.CellFormat(15, lineH, "", "TB", 0, "C", false, 0, "")
			f.CellFormat(22, lineH, vatAmount, "RTB", 1, "R", false, 0, "")
			return
		}
		f.CellFormat(bodyW-26, lineH, clean(label), "LTB", 0, "L", false, 0, "")
		f.CellFormat(26, lineH, amount, "RTB", 1, "R", false, 0, "")
	}
	if vat {
		for _, r := range t.ByRate {
			label := "Tổng tiền hàng chịu thuế suất " + Rate(r.VATRate)
			switch r.VATRate {
			case recon.VATNotSubject:
				label = "Tổng tiền hàng không chịu thuế GTGT (KCT)"
			case recon.VATNotDeclared:
				label = "Tổng tiền hàng không kê khai, tính nộp thuế GTGT (KKKNT)"
			}
			row(label, VND(r.Amount), VND(r.VATAmount), false)
		}
	}
	row("Cộng tiền hàng (Total before VAT)", VND(t.TotalBeforeTax), "", true)
	if t.DiscountTotal != 0 {
		row("Tổng tiền chiết khấu thương mại", VND(t.DiscountTotal), "", false)
	}
	if vat {
		row("Tiền thuế GTGT (VAT)", "", VND(t.VATTotal), true)
	}
	d.font(true, fontSz+1)
	f.SetFillColor(232, 238, 248)
	f.CellFormat(bodyW-40, 6.5, "Tổng tiền thanh toán (Total payment)", "1", 0, "L", true, 0, "")
	f.CellFormat(40, 6.5, VND(t.TotalAmount), "1", 1, "R", true, 0, "")
	f.Ln(1)
	d.font(false, fontSz)
	lw := f.GetStringWidth("Số tiền viết bằng chữ: ") + 1
	f.CellFormat(lw, lineH, "Số tiền viết bằng chữ:", "", 0, "L", false, 0, "")
	d.font(true, fontSz)
	words := f.SplitText(clean(t.TotalInWords), bodyW-lw)
	for i, l := range words {
		if i > 0 {
			f.SetX(margin + lw)
		}
		f.CellFormat(bodyW-lw, lineH, l, "", 1, "L", false, 0, "")
	}
	if len(words) == 0 {
		f.Ln(-1)
	}
}

// signatures draws the buyer's and the seller's signature blocks; the
// seller's names who signed the XML and when.
func signatures(d doc, inv *recon.Invoice, loc *time.Location) {
	f := d.Fpdf
	_, pageH := f.GetPageSize()
	if f.GetY()+32 > pageH-margin-8 {
		f.AddPage()
	}
	f.Ln(4)
	half := bodyW / 2
	y := f.GetY()
	d.font(true, fontSz)
	f.CellFormat(half, lineH, "NGƯỜI MUA HÀNG (Buyer)", "", 0, "C", false, 0, "")
	f.CellFormat(half, lineH, "NGƯỜI BÁN HÀNG (Seller)", "", 1, "C", false, 0, "")
	d.font(false, smallSz)
	f.CellFormat(half, 4, "(Chữ ký số (nếu có))", "", 0, "C", false, 0, "")
	f.CellFormat(half, 4, "(Chữ ký số)", "", 1, "C", false, 0, "")
	if inv.Number > 0 && inv.Status != recon.InvoiceDraft {
		bx, bw := margin+half+6, half-12
		f.SetDrawColor(40, 140, 60)
		f.SetTextColor(40, 140, 60)
		f.SetXY(bx+2, y+12)
		d.font(true, smallSz)
		f.CellFormat(bw-4, 4, "Signature Valid", "", 2, "L", false, 0, "")
		d.font(false, smallSz)
		signer := f.SplitText(clean("Ký bởi: "+inv.Seller.LegalName), bw-4)
		for i, l := range signer[:min(len(signer), 2)] {
			f.SetX(bx + 2)
			if i == 1 && len(signer) > 2 {
				l += "…"
			}
			f.CellFormat(bw-4, 4, l, "", 2, "L", false, 0, "")
		}
		f.SetX(bx + 2)
		f.CellFormat(bw-4, 4, "Ký ngày: "+inv.IssuedDate.In(loc).Format("02/01/2006"), "", 2, "L", false, 0, "")
		f.Rect(bx, y+11, bw, f.GetY()-y-10, "D")
		f.SetTextColor(0, 0, 0)
		f.SetDrawColor(120, 120, 120)
	}
	f.SetY(y + 30)
}

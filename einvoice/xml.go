// Package einvoice renders an invoice as the XML of the tax authority's
// format and signs it with the seller's certificate (docs/invoices.md, XML
// and its signature).
//
// The structure is the one of Circular 78/2021/TT-BTC and the authority's
// technical rules (Decision 1450/QĐ-TCT and its updates):
//
//	HDon
//	  DLHDon Id="data"           the invoice's data: what the seller signs
//	    TTChung                  general: PBan THDon KHMSHDon KHHDon SHDon NLap DVTTe TGia HTTToan [TTHDLQuan]
//	    NDHDon                   content: NBan NMua DSHHDVu/HHDVu... TToan
//	  [MCCQT]                    the authority's code, added once coded
//	  DSCKS/NBan/Signature       the seller's XML-DSig signature of DLHDon
package einvoice

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/beevik/etree"

	"recon"
)

// FormatVersion is the version of the authority's format the XML follows
// (PBan).
const FormatVersion = "2.0.1"

// DataID is the Id of DLHDon, which the seller's signature references.
const DataID = "data"

// vietnam is the time zone an invoice's date is written in.
var vietnam = time.FixedZone("ICT", 7*3600)

// Title is an invoice's name by its template (THDon).
func Title(template string) string {
	if template == recon.InvoiceTemplateSales {
		return "Hóa đơn bán hàng"
	}
	return "Hóa đơn giá trị gia tăng"
}

// RateText is a VAT rate as TSuat writes it: "10%", "0%", "KCT", "KKKNT".
func RateText(rate string) string {
	switch rate {
	case recon.VATNotSubject, recon.VATNotDeclared:
		return rate
	}
	return rate + "%"
}

// Date is a date as the format writes it (NLap, NLHDCLQuan), in Vietnam.
func Date(t time.Time) string { return t.In(vietnam).Format(time.DateOnly) }

// Document builds the unsigned XML of inv. orig is the invoice inv
// replaces or adjusts (inv.Relation not 0), nil otherwise.
func Document(inv *recon.Invoice, orig *recon.Invoice) (*etree.Document, error) {
	if inv.Relation != 0 && orig == nil {
		return nil, recon.Errorf(recon.EINVALID, "invoice %s corrects %s, which is not given", inv.ReferenceCode, inv.OriginalReferenceCode)
	}
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	hdon := doc.CreateElement("HDon")
	dl := hdon.CreateElement("DLHDon")
	dl.CreateAttr("Id", DataID)

	tt := dl.CreateElement("TTChung")
	text(tt, "PBan", FormatVersion)
	text(tt, "THDon", Title(inv.TemplateCode))
	text(tt, "KHMSHDon", inv.TemplateCode)
	text(tt, "KHHDon", inv.Series)
	text(tt, "SHDon", strconv.FormatInt(inv.Number, 10))
	text(tt, "NLap", Date(inv.IssuedDate))
	text(tt, "DVTTe", or(inv.Currency, "VND"))
	text(tt, "TGia", or(inv.ExchangeRate, "1"))
	text(tt, "HTTToan", or(inv.PaymentMethod, "TM/CK"))
	if inv.Relation != 0 {
		rel := tt.CreateElement("TTHDLQuan")
		text(rel, "TCHDon", strconv.Itoa(inv.Relation))
		text(rel, "LHDCLQuan", "1") // the original is an invoice of Decree 123
		text(rel, "KHMSHDCLQuan", orig.TemplateCode)
		text(rel, "KHHDCLQuan", orig.Series)
		text(rel, "SHDCLQuan", strconv.FormatInt(orig.Number, 10))
		text(rel, "NLHDCLQuan", Date(orig.IssuedDate))
		if inv.Relation == recon.InvoiceRelAdjust && inv.AdjustmentType != "" {
			text(rel, "GChu", adjustNote(inv.AdjustmentType))
		}
	}

	nd := dl.CreateElement("NDHDon")
	s := inv.Seller
	nban := nd.CreateElement("NBan")
	text(nban, "Ten", s.LegalName)
	text(nban, "MST", s.TaxCode)
	text(nban, "DChi", s.Address)
	optional(nban, "SDThoai", s.Phone)
	optional(nban, "DCTDTu", s.Email)
	optional(nban, "STKNHang", s.BankAcct)
	optional(nban, "TNHang", s.BankName)

	b := inv.Buyer
	nmua := nd.CreateElement("NMua")
	text(nmua, "Ten", or(b.LegalName, b.Name))
	optional(nmua, "MST", b.TaxCode)
	text(nmua, "DChi", b.Address)
	optional(nmua, "SDThoai", b.Phone)
	optional(nmua, "DCTDTu", b.Email)
	optional(nmua, "HVTNMHang", b.Name)

	ds := nd.CreateElement("DSHHDVu")
	for _, it := range inv.Items {
		h := ds.CreateElement("HHDVu")
		text(h, "TChat", strconv.Itoa(it.LineType))
		text(h, "STT", strconv.Itoa(it.LineNumber))
		optional(h, "MHHDVu", it.ItemCode)
		text(h, "THHDVu", it.ItemName)
		if it.LineType == recon.LineNote {
			continue // a note carries no amounts
		}
		optional(h, "DVTinh", it.Unit)
		text(h, "SLuong", it.Quantity)
		text(h, "DGia", money(it.UnitPrice))
		text(h, "STCKhau", money(it.DiscountAmount))
		text(h, "ThTien", money(it.Amount))
		text(h, "TSuat", RateText(it.VATRate))
	}

	t := inv.Totals
	tt2 := nd.CreateElement("TToan")
	rates := tt2.CreateElement("THTTLTSuat")
	for _, r := range t.ByRate {
		l := rates.CreateElement("LTSuat")
		text(l, "TSuat", RateText(r.VATRate))
		text(l, "ThTien", money(r.Amount))
		text(l, "TThue", money(r.VATAmount))
	}
	text(tt2, "TgTCThue", money(t.TotalBeforeTax))
	text(tt2, "TgTThue", money(t.VATTotal))
	text(tt2, "TTCKTMai", money(t.DiscountTotal))
	text(tt2, "TgTTTBSo", money(t.TotalAmount))
	text(tt2, "TgTTTBChu", t.TotalInWords)

	if inv.CQTCode != "" {
		m := hdon.CreateElement("MCCQT")
		m.CreateAttr("Id", "cqt")
		m.SetText(inv.CQTCode)
	}
	return doc, nil
}

// Render returns the unsigned XML of inv (see Document).
func Render(inv, orig *recon.Invoice) ([]byte, error) {
	doc, err := Document(inv, orig)
	if err != nil {
		return nil, err
	}
	return write(doc)
}

func write(doc *etree.Document) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := doc.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("write invoice XML: %w", err)
	}
	return buf.Bytes(), nil
}

func adjustNote(kind string) string {
	switch kind {
	case recon.AdjustIncrease:
		return "Điều chỉnh tăng"
	case recon.AdjustDecrease:
		return "Điều chỉnh giảm"
	}
	return "Điều chỉnh thông tin"
}

func text(parent *etree.Element, tag, value string) {
	parent.CreateElement(tag).SetText(value)
}

func optional(parent *etree.Element, tag, value string) {
	if value != "" {
		text(parent, tag, value)
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func money(v int64) string { return strconv.FormatInt(v, 10) }

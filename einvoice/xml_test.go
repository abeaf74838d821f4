package einvoice

import (
	"encoding/xml"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
)

// The structure of docs/invoices.md, XML and its signature, as a reader
// parses it back.
type hdon struct {
	XMLName xml.Name `xml:"HDon"`
	DLHDon  struct {
		ID      string `xml:"Id,attr"`
		TTChung struct {
			PBan, THDon, KHMSHDon, KHHDon, SHDon, NLap, DVTTe, TGia, HTTToan string
			TTHDLQuan                                                        *struct {
				TCHDon, LHDCLQuan, KHMSHDCLQuan, KHHDCLQuan, SHDCLQuan, NLHDCLQuan, GChu string
			}
		}
		NDHDon struct {
			NBan  struct{ Ten, MST, DChi, SDThoai, DCTDTu, STKNHang, TNHang string }
			NMua  struct{ Ten, MST, DChi, SDThoai, DCTDTu, HVTNMHang string }
			HHDVu []struct {
				TChat, STT, MHHDVu, THHDVu, DVTinh, SLuong, DGia, STCKhau, ThTien, TSuat string
			} `xml:"DSHHDVu>HHDVu"`
			TToan struct {
				LTSuat                                           []struct{ TSuat, ThTien, TThue string } `xml:"THTTLTSuat>LTSuat"`
				TgTCThue, TgTThue, TTCKTMai, TgTTTBSo, TgTTTBChu string
			}
		}
	}
	MCCQT *string
	DSCKS *struct {
		NBan struct {
			Signature *struct {
				SignedInfo struct {
					SignatureMethod struct {
						Algorithm string `xml:",attr"`
					}
					Reference struct {
						URI string `xml:",attr"`
					}
				}
				X509Certificate string `xml:"KeyInfo>X509Data>X509Certificate"`
			}
		}
	}
}

func sampleInvoice() *recon.Invoice {
	return &recon.Invoice{
		ReferenceCode: "INV-1", TemplateCode: recon.InvoiceTemplateVAT, Series: "C26TAA", Number: 42,
		IssuedDate: time.Date(2026, 11, 25, 18, 30, 0, 0, time.UTC), // 26 November in Vietnam
		Currency:   "VND", ExchangeRate: "1", PaymentMethod: "TM/CK",
		Seller: recon.Seller{LegalName: "Công ty TNHH Ánh Dương", TaxCode: "0312345679", Address: "12 Lê Lợi, Quận 1, TP.HCM",
			Phone: "0281234567", Email: "ketoan@anhduong.vn", BankAcct: "0071000123456", BankName: "Vietcombank"},
		Buyer: recon.Buyer{Name: "Nguyễn Văn An", LegalName: "Công ty CP Bình Minh", TaxCode: "0101234567",
			Address: "5 Tràng Tiền, Hà Nội", Email: "an@binhminh.vn", Phone: "0912345678"},
		Items: []recon.InvoiceItem{
			{LineNumber: 1, LineType: recon.LineGoods, ItemCode: "SP01", ItemName: "Áo thun", Unit: "cái", Quantity: "2",
				UnitPrice: 150000, DiscountAmount: 10000, VATRate: recon.VAT10, Amount: 290000, VATAmount: 29000},
			{LineNumber: 2, LineType: recon.LineGoods, ItemName: "Sách", Unit: "quyển", Quantity: "1.5",
				UnitPrice: 100000, VATRate: recon.VAT5, Amount: 150000, VATAmount: 7500},
			{LineNumber: 3, LineType: recon.LineNote, ItemName: "Giao hàng tận nơi"},
		},
		Totals: recon.InvoiceTotals{TotalBeforeTax: 440000,
			ByRate:        []recon.RateTotal{{VATRate: recon.VAT5, Amount: 150000, VATAmount: 7500}, {VATRate: recon.VAT10, Amount: 290000, VATAmount: 29000}},
			DiscountTotal: 10000, VATTotal: 36500, TotalAmount: 476500,
			TotalInWords: "Bốn trăm bảy mươi sáu nghìn năm trăm đồng"},
		Status: recon.InvoicePending,
	}
}

func parse(t *testing.T, b []byte) hdon {
	t.Helper()
	var h hdon
	if err := xml.Unmarshal(b, &h); err != nil {
		t.Fatalf("parse: %v\n%s", err, b)
	}
	return h
}

func TestDocumentPlainInvoice(t *testing.T) {
	b, err := Render(sampleInvoice(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := parse(t, b)
	var want hdon
	want.XMLName = xml.Name{Local: "HDon"}
	d := &want.DLHDon
	d.ID = "data"
	d.TTChung.PBan, d.TTChung.THDon, d.TTChung.KHMSHDon, d.TTChung.KHHDon, d.TTChung.SHDon = "2.0.1", "Hóa đơn giá trị gia tăng", "1", "C26TAA", "42"
	d.TTChung.NLap, d.TTChung.DVTTe, d.TTChung.TGia, d.TTChung.HTTToan = "2026-11-26", "VND", "1", "TM/CK"
	d.NDHDon.NBan = struct{ Ten, MST, DChi, SDThoai, DCTDTu, STKNHang, TNHang string }{"Công ty TNHH Ánh Dương", "0312345679", "12 Lê Lợi, Quận 1, TP.HCM", "0281234567", "ketoan@anhduong.vn", "0071000123456", "Vietcombank"}
	d.NDHDon.NMua = struct{ Ten, MST, DChi, SDThoai, DCTDTu, HVTNMHang string }{"Công ty CP Bình Minh", "0101234567", "5 Tràng Tiền, Hà Nội", "0912345678", "an@binhminh.vn", "Nguyễn Văn An"}
	d.NDHDon.HHDVu = append(d.NDHDon.HHDVu,
		struct{ TChat, STT, MHHDVu, THHDVu, DVTinh, SLuong, DGia, STCKhau, ThTien, TSuat string }{"1", "1", "SP01", "Áo thun", "cái", "2", "150000", "10000", "290000", "10%"},
		struct{ TChat, STT, MHHDVu, THHDVu, DVTinh, SLuong, DGia, STCKhau, ThTien, TSuat string }{"1", "2", "", "Sách", "quyển", "1.5", "100000", "0", "150000", "5%"},
		struct{ TChat, STT, MHHDVu, THHDVu, DVTinh, SLuong, DGia, STCKhau, ThTien, TSuat string }{TChat: "4", STT: "3", THHDVu: "Giao hàng tận nơi"})
	d.NDHDon.TToan.LTSuat = append(d.NDHDon.TToan.LTSuat, struct{ TSuat, ThTien, TThue string }{"5%", "150000", "7500"}, struct{ TSuat, ThTien, TThue string }{"10%", "290000", "29000"})
	d.NDHDon.TToan.TgTCThue, d.NDHDon.TToan.TgTThue, d.NDHDon.TToan.TTCKTMai, d.NDHDon.TToan.TgTTTBSo = "440000", "36500", "10000", "476500"
	d.NDHDon.TToan.TgTTTBChu = "Bốn trăm bảy mươi sáu nghìn năm trăm đồng"
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("parsed XML (-want +got):\n%s\n%s", diff, b)
	}
	// The order of the elements is the format's.
	assertOrder(t, b, "<HDon>", "<DLHDon", "<TTChung>", "<PBan>", "<THDon>", "<KHMSHDon>", "<KHHDon>", "<SHDon>", "<NLap>", "<DVTTe>", "<TGia>", "<HTTToan>",
		"</TTChung>", "<NDHDon>", "<NBan>", "<Ten>", "<MST>", "<DChi>", "</NBan>", "<NMua>", "</NMua>", "<DSHHDVu>", "<HHDVu>", "<TChat>", "<STT>", "<MHHDVu>", "<THHDVu>",
		"<DVTinh>", "<SLuong>", "<DGia>", "<STCKhau>", "<ThTien>", "<TSuat>", "</DSHHDVu>", "<TToan>", "<THTTLTSuat>", "<LTSuat>", "</THTTLTSuat>",
		"<TgTCThue>", "<TgTThue>", "<TTCKTMai>", "<TgTTTBSo>", "<TgTTTBChu>", "</TToan>", "</NDHDon>", "</DLHDon>", "</HDon>")
}

func assertOrder(t *testing.T, b []byte, tags ...string) {
	t.Helper()
	s, at := string(b), 0
	for _, tag := range tags {
		i := indexFrom(s, tag, at)
		if i < 0 {
			t.Fatalf("%s not found after offset %d in\n%s", tag, at, s)
		}
		at = i + len(tag)
	}
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func original() *recon.Invoice {
	o := sampleInvoice()
	o.ReferenceCode, o.Number, o.Series = "INV-0", 7, "C26TAB"
	o.IssuedDate = time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
	o.Status = recon.InvoiceIssued
	return o
}

func TestDocumentReplacementAndAdjustment(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rel       int
		adj, gchu string
	}{
		{"replacement", recon.InvoiceRelReplace, "", ""},
		{"adjustment increase", recon.InvoiceRelAdjust, recon.AdjustIncrease, "Điều chỉnh tăng"},
		{"adjustment decrease", recon.InvoiceRelAdjust, recon.AdjustDecrease, "Điều chỉnh giảm"},
		{"adjustment info", recon.InvoiceRelAdjust, recon.AdjustInfo, "Điều chỉnh thông tin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := sampleInvoice()
			inv.Relation, inv.AdjustmentType, inv.OriginalReferenceCode = tc.rel, tc.adj, "INV-0"
			inv.CQTCode = "M1-26-ABCDE-00000000042"
			b, err := Render(inv, original())
			if err != nil {
				t.Fatal(err)
			}
			h := parse(t, b)
			rel := h.DLHDon.TTChung.TTHDLQuan
			if rel == nil {
				t.Fatalf("no TTHDLQuan in\n%s", b)
			}
			want := struct {
				TCHDon, LHDCLQuan, KHMSHDCLQuan, KHHDCLQuan, SHDCLQuan, NLHDCLQuan, GChu string
			}{string(rune('0' + tc.rel)), "1", "1", "C26TAB", "7", "2026-10-01", tc.gchu}
			if diff := cmp.Diff(want, *rel); diff != "" {
				t.Errorf("TTHDLQuan (-want +got):\n%s", diff)
			}
			if h.MCCQT == nil || *h.MCCQT != "M1-26-ABCDE-00000000042" {
				t.Errorf("MCCQT = %v", h.MCCQT)
			}
			// The rest is the invoice's own.
			if h.DLHDon.TTChung.SHDon != "42" || h.DLHDon.NDHDon.TToan.TgTTTBSo != "476500" || len(h.DLHDon.NDHDon.HHDVu) != 3 {
				t.Errorf("content: %+v", h.DLHDon)
			}
			assertOrder(t, b, "<HTTToan>", "<TTHDLQuan>", "<TCHDon>", "<LHDCLQuan>", "<KHMSHDCLQuan>", "<KHHDCLQuan>", "<SHDCLQuan>", "<NLHDCLQuan>", "</TTHDLQuan>", "</TTChung>", "</DLHDon>", "<MCCQT")
		})
	}
}

func TestDocumentWithoutOriginalIsRefused(t *testing.T) {
	inv := sampleInvoice()
	inv.Relation, inv.OriginalReferenceCode = recon.InvoiceRelReplace, "INV-0"
	if _, err := Render(inv, nil); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("err = %v, want EINVALID", err)
	}
}

func TestDocumentSalesInvoiceAndRates(t *testing.T) {
	inv := sampleInvoice()
	inv.TemplateCode = recon.InvoiceTemplateSales
	inv.Items[0].VATRate, inv.Items[1].VATRate = recon.VATNotSubject, recon.VATNotDeclared
	inv.Totals.ByRate = []recon.RateTotal{{VATRate: recon.VAT0, Amount: 1}, {VATRate: recon.VAT8, Amount: 2}}
	h := parse(t, must(Render(inv, nil)))
	if h.DLHDon.TTChung.THDon != "Hóa đơn bán hàng" || h.DLHDon.TTChung.KHMSHDon != "2" {
		t.Errorf("title %q template %q", h.DLHDon.TTChung.THDon, h.DLHDon.TTChung.KHMSHDon)
	}
	if got := h.DLHDon.NDHDon.HHDVu[0].TSuat + " " + h.DLHDon.NDHDon.HHDVu[1].TSuat; got != "KCT KKKNT" {
		t.Errorf("TSuat = %s", got)
	}
	if got := h.DLHDon.NDHDon.TToan.LTSuat[0].TSuat + " " + h.DLHDon.NDHDon.TToan.LTSuat[1].TSuat; got != "0% 8%" {
		t.Errorf("LTSuat = %s", got)
	}
	if h.MCCQT != nil || h.DSCKS != nil {
		t.Errorf("an unsigned, uncoded invoice has MCCQT %v DSCKS %v", h.MCCQT, h.DSCKS)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

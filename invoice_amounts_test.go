package recon

import (
	"math"
	"reflect"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	for s, want := range map[string]int64{"1": 10_000, "2.5": 25_000, "0.0001": 1, "10.1234": 101_234, "007": 70_000, "0": 0} {
		if got, err := ParseQuantity(s); err != nil || got != want {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1.", ".5", "-1", "+1", "1e3", "1.23456", "1,5", "1.2.3", " 1", "99999999999999999999"} {
		if _, err := ParseQuantity(s); err == nil {
			t.Errorf("ParseQuantity(%q) succeeded", s)
		}
	}
}

func TestComputeInvoice(t *testing.T) {
	inv := &Invoice{TemplateCode: InvoiceTemplateVAT, Items: []InvoiceItem{
		{LineType: LineGoods, ItemName: "Áo", Quantity: "3", UnitPrice: 100_000, DiscountAmount: 10_000, VATRate: VAT10},
		{LineType: LineGoods, ItemName: "Sách", Quantity: "1.5", UnitPrice: 33_333, VATRate: VAT5},  // 49,999.5 → 50,000; VAT 2,500
		{LineType: LineGoods, ItemName: "Dịch vụ", Quantity: "1", UnitPrice: 12_345, VATRate: VAT8}, // VAT 987.6 → 988
		{LineType: LineGoods, ItemName: "Phí", Quantity: "1", UnitPrice: 15, VATRate: VAT10},        // VAT 1.5 → 2
		{LineType: LineGoods, ItemName: "Bảo hiểm", Quantity: "1", UnitPrice: 70_000, VATRate: VATNotSubject},
		{LineType: LinePromotion, ItemName: "Quà tặng", Quantity: "1", UnitPrice: 20_000, VATRate: VAT10},
		{LineType: LineDiscount, ItemName: "Chiết khấu", UnitPrice: 20_000, VATRate: VAT10},
		{LineType: LineNote, ItemName: "Giao hàng tại kho"},
	}}
	if err := ComputeInvoice(inv); err != nil {
		t.Fatal(err)
	}
	var amounts [][2]int64
	for _, it := range inv.Items {
		amounts = append(amounts, [2]int64{it.Amount, it.VATAmount})
	}
	want := [][2]int64{{290_000, 29_000}, {50_000, 2_500}, {12_345, 988}, {15, 2}, {70_000, 0}, {0, 0}, {20_000, 2_000}, {0, 0}}
	if !reflect.DeepEqual(amounts, want) {
		t.Errorf("line amounts = %v, want %v", amounts, want)
	}
	for i, it := range inv.Items {
		if it.LineNumber != i+1 {
			t.Errorf("line %d numbered %d", i, it.LineNumber)
		}
	}
	wantT := InvoiceTotals{
		TotalBeforeTax: 290_000 + 50_000 + 12_345 + 15 + 70_000 - 20_000, // 402,360
		ByRate: []RateTotal{
			{VAT5, 50_000, 2_500}, {VAT8, 12_345, 988}, {VAT10, 290_015 - 20_000, 29_002 - 2_000}, {VATNotSubject, 70_000, 0},
		},
		DiscountTotal: 10_000 + 20_000,
		VATTotal:      2_500 + 988 + 29_002 - 2_000, // 30,490
		TotalAmount:   402_360 + 30_490,             // 432,850
		TotalInWords:  "Bốn trăm ba mươi hai nghìn tám trăm năm mươi đồng",
	}
	if !reflect.DeepEqual(inv.Totals, wantT) {
		t.Errorf("totals = %+v\nwant     %+v", inv.Totals, wantT)
	}

	// A sales invoice (template 2) has no VAT.
	sales := &Invoice{TemplateCode: InvoiceTemplateSales, Items: []InvoiceItem{{LineType: LineGoods, ItemName: "Áo", Quantity: "2", UnitPrice: 50_000}}}
	if err := ComputeInvoice(sales); err != nil {
		t.Fatal(err)
	}
	if s := sales.Totals; s.TotalAmount != 100_000 || s.VATTotal != 0 || len(s.ByRate) != 0 || s.TotalInWords != "Một trăm nghìn đồng" {
		t.Errorf("sales totals = %+v", s)
	}
}

func TestComputeInvoiceRefusals(t *testing.T) {
	good := func() InvoiceItem {
		return InvoiceItem{LineType: LineGoods, ItemName: "Áo", Quantity: "1", UnitPrice: 1000, VATRate: VAT10}
	}
	for _, c := range []struct {
		name  string
		edit  func(*InvoiceItem)
		field string
	}{
		{"no name", func(it *InvoiceItem) { it.ItemName = " " }, "items[1].item_name"},
		{"line type 0", func(it *InvoiceItem) { it.LineType = 0 }, "items[1].line_type"},
		{"line type 5", func(it *InvoiceItem) { it.LineType = 5 }, "items[1].line_type"},
		{"unknown rate", func(it *InvoiceItem) { it.VATRate = "7" }, "items[1].vat_rate"},
		{"no rate", func(it *InvoiceItem) { it.VATRate = "" }, "items[1].vat_rate"},
		{"negative price", func(it *InvoiceItem) { it.UnitPrice = -1 }, "items[1].unit_price"},
		{"negative discount", func(it *InvoiceItem) { it.DiscountAmount = -1 }, "items[1].discount_amount"},
		{"discount above amount", func(it *InvoiceItem) { it.DiscountAmount = 1001 }, "items[1].discount_amount"},
		{"zero quantity", func(it *InvoiceItem) { it.Quantity = "0" }, "items[1].quantity"},
		{"no quantity", func(it *InvoiceItem) { it.Quantity = "" }, "items[1].quantity"},
		{"bad quantity", func(it *InvoiceItem) { it.Quantity = "1.00001" }, "items[1].quantity"},
		{"line number out of order", func(it *InvoiceItem) { it.LineNumber = 5 }, "items[1].line_number"},
		{"overflow", func(it *InvoiceItem) { it.Quantity = "1000000"; it.UnitPrice = math.MaxInt64 / 2 }, "items[1].amount"},
		{"amount above MaxAmount", func(it *InvoiceItem) { it.Quantity = "10"; it.UnitPrice = MaxAmount }, "items[1].amount"},
		{"note with a price", func(it *InvoiceItem) { it.LineType = LineNote; it.Quantity = "" }, "items[1].line_type"},
		{"promotion with a discount", func(it *InvoiceItem) { it.LineType = LinePromotion; it.DiscountAmount = 1 }, "items[1].discount_amount"},
		{"discount lines exceed goods", func(it *InvoiceItem) { it.LineType = LineDiscount; it.UnitPrice = 1001 }, "items"},
	} {
		inv := &Invoice{TemplateCode: InvoiceTemplateVAT, Items: []InvoiceItem{good(), good()}}
		c.edit(&inv.Items[1])
		err := ComputeInvoice(inv)
		var fields map[string][]string
		if e, ok := err.(*Error); ok && e.Code == EINVALID {
			fields = e.Fields
		}
		if _, ok := fields[c.field]; !ok {
			t.Errorf("%s: error %v, want EINVALID naming %s", c.name, err, c.field)
		}
	}
	if err := ComputeInvoice(&Invoice{}); ErrorCode(err) != EINVALID {
		t.Errorf("no lines: %v", err)
	}
}

package dashboard

// The messages of the e-invoices in the dashboard (invoices.go;
// docs/dashboard.md, Invoices), in both languages.
var invoiceMessages = []struct{ key, en, vi string }{
	{"einvoices", "E-invoices", "Hóa đơn điện tử"},
	{"einvoice", "E-invoice", "Hóa đơn điện tử"},
	{"back_invoices", "All e-invoices", "Tất cả hóa đơn điện tử"},
	{"einvoices_count_1", "e-invoice", "hóa đơn"},
	{"einvoices_count_n", "e-invoices", "hóa đơn"},
	{"no_invoices", "No e-invoices yet.", "Chưa có hóa đơn điện tử nào."},

	// Statuses (docs/invoices.md).
	{"is_draft", "Draft", "Bản nháp"},
	{"is_pending", "Sent, waiting for the tax authority", "Đã gửi, chờ cơ quan thuế"},
	{"is_issued", "Issued", "Đã phát hành"},
	{"is_failed", "Refused by the provider", "Bị nhà cung cấp từ chối"},
	{"is_cancelled", "Cancelled", "Đã hủy"},
	{"is_replaced", "Replaced", "Đã bị thay thế"},
	{"is_adjusted", "Adjusted", "Đã bị điều chỉnh"},
	{"ia_increase", "increase", "điều chỉnh tăng"},
	{"ia_decrease", "decrease", "điều chỉnh giảm"},
	{"ia_info", "information", "điều chỉnh thông tin"},

	// An invoice's page.
	{"iv_reference", "Reference code", "Mã tham chiếu"},
	{"iv_template", "Template", "Mẫu số"},
	{"iv_series", "Symbol", "Ký hiệu"},
	{"iv_number", "Number", "Số"},
	{"iv_no_number", "Not numbered yet (draft)", "Chưa cấp số (bản nháp)"},
	{"iv_issued_date", "Issued on", "Ngày lập"},
	{"iv_tracking", "Tracking code", "Mã theo dõi"},
	{"iv_lookup", "Lookup code", "Mã tra cứu"},
	{"iv_cqt", "Tax authority code", "Mã của cơ quan thuế"},
	{"iv_payment_method", "Payment method", "Hình thức thanh toán"},
	{"iv_failure", "Why the provider refused it", "Lý do nhà cung cấp từ chối"},
	{"iv_cancel_reason", "Reason for cancelling", "Lý do hủy"},
	{"iv_immutable", "An issued e-invoice never changes: correct it by a replacement or an adjustment.", "Hóa đơn đã phát hành không thể sửa: hãy lập hóa đơn thay thế hoặc điều chỉnh."},
	{"iv_pdf", "Download the PDF", "Tải bản PDF"},
	{"iv_xml", "Download the signed XML", "Tải tệp XML đã ký"},
	{"iv_history", "History", "Lịch sử"},
	{"iv_replaces", "Replaces the e-invoice", "Thay thế cho hóa đơn"},
	{"iv_adjusts", "Adjusts the e-invoice", "Điều chỉnh cho hóa đơn"},
	{"iv_corrected_by", "Replaced or adjusted by:", "Được thay thế hoặc điều chỉnh bởi:"},
	{"iv_no_history", "It neither corrects nor was corrected by another e-invoice.", "Hóa đơn này không thay thế, điều chỉnh và chưa bị thay thế, điều chỉnh."},
	{"iv_seller", "Seller", "Người bán"},
	{"iv_buyer", "Buyer", "Người mua"},
	{"iv_buyer_name", "Buyer's name", "Họ tên người mua"},
	{"iv_legal_name", "Legal name", "Tên đơn vị"},
	{"iv_tax_code", "Tax code", "Mã số thuế"},
	{"iv_address", "Address", "Địa chỉ"},
	{"iv_email", "Email", "Thư điện tử"},
	{"iv_phone", "Phone", "Điện thoại"},
	{"iv_lines", "Goods and services", "Hàng hóa, dịch vụ"},
	{"iv_item", "Item", "Tên hàng hóa, dịch vụ"},
	{"iv_unit", "Unit", "Đơn vị tính"},
	{"iv_quantity", "Quantity", "Số lượng"},
	{"iv_unit_price", "Unit price", "Đơn giá"},
	{"iv_vat_rate", "VAT rate", "Thuế suất"},
	{"iv_vat", "VAT", "Thuế GTGT"},
	{"iv_before_tax", "Total before tax", "Cộng tiền hàng"},
	{"iv_discount", "Discounts", "Chiết khấu"},
	{"iv_vat_total", "Total VAT", "Tổng tiền thuế GTGT"},
	{"iv_total", "Total to pay", "Tổng tiền thanh toán"},
	{"iv_words", "In words", "Số tiền viết bằng chữ"},

	// A paid order's invoices and the issue button (orders.go).
	{"iv_order_invoices", "E-invoices of this order", "Hóa đơn điện tử của đơn hàng"},
	{"iv_issue", "Issue invoice", "Xuất hóa đơn"},
	{"iv_issue_confirm", "Issue the e-invoice of this order", "Xuất hóa đơn điện tử cho đơn hàng này"},
	{"iv_issue_help", "Recon makes the invoice from the order (its buyer and lines, or one line of its amount and description), numbers and signs it and sends it to the tax authority through the provider. An issued invoice cannot be changed.", "Recon lập hóa đơn từ đơn hàng (người mua và các dòng hàng, hoặc một dòng theo số tiền và mô tả), cấp số, ký và gửi cơ quan thuế qua nhà cung cấp. Hóa đơn đã phát hành không thể sửa."},
	{"iv_not_paid", "Only a paid order gets its e-invoice.", "Chỉ đơn hàng đã thanh toán mới được xuất hóa đơn."},
	{"iv_refused", "The e-invoice was not issued", "Chưa xuất được hóa đơn điện tử"},
	{"iv_no_provider", "This company has no e-invoice provider in live mode: invoices can be drafted and exported but not sent.", "Công ty chưa có nhà cung cấp hóa đơn điện tử ở chế độ thật: hóa đơn chỉ có thể lập nháp và xuất ra, chưa thể gửi."},
	{"iv_incomplete_seller", "The seller's legal details are incomplete: set the legal name, tax code, address and invoice series in the settings.", "Thông tin người bán chưa đủ: hãy nhập tên đơn vị, mã số thuế, địa chỉ và ký hiệu hóa đơn trong phần cài đặt."},
}

func init() {
	for _, m := range invoiceMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}

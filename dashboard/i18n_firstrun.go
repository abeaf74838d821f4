package dashboard

// The messages of the sandbox's test orders, its live-mode switch and the
// hub companies page (sandbox.go, hubcompanies.go; docs/testmode.md, The
// dashboard's sandbox), in both languages.
var firstrunMessages = []struct{ key, en, vi string }{
	// The sandbox in live mode: nothing is written, the page offers the switch.
	{"sb_live", "The sandbox works on test data only: you are looking at live data, which it never changes. Switch to test data to create test orders, simulate transfers and fire hub events.",
		"Sandbox chỉ làm việc với dữ liệu thử nghiệm: bạn đang xem dữ liệu thật, và sandbox không bao giờ thay đổi dữ liệu này. Hãy chuyển sang dữ liệu thử nghiệm để tạo đơn thử nghiệm, giả lập chuyển khoản và tạo sự kiện hub."},
	{"sb_err_no_va", "The order has no active virtual account to pay into.", "Đơn hàng không có tài khoản ảo nào đang hoạt động để thanh toán."},

	// Test orders.
	{"to_new", "Create a test order", "Tạo đơn hàng thử nghiệm"},
	{"to_kind", "Kind of order", "Loại đơn hàng"},
	{"to_kind_checkout", "Checkout order (paid with its payment code in the memo)", "Đơn thanh toán (trả bằng mã thanh toán trong nội dung chuyển khoản)"},
	{"to_kind_v2", "API v2 order with a virtual account", "Đơn API v2 với tài khoản ảo"},
	{"to_invoice_auto", "empty: TEST- and 8 digits", "để trống: TEST- và 8 chữ số"},
	{"to_customer", "Customer ID", "Mã khách hàng"},
	{"to_va_mode", "Virtual account amount (v2 orders)", "Số tiền của tài khoản ảo (đơn v2)"},
	{"to_help", "Made as the shop's checkout or POST /v2/orders makes it, in test data only: a test IPN follows when it is paid.", "Được tạo như khi cửa hàng gọi thanh toán hoặc POST /v2/orders, chỉ trong dữ liệu thử nghiệm: khi đơn được thanh toán sẽ có IPN thử nghiệm."},
	{"to_create", "Create the test order", "Tạo đơn thử nghiệm"},
	{"to_created", "Test order created", "Đã tạo đơn hàng thử nghiệm"},
	{"to_done", "The test order is ready: pay it below.", "Đơn thử nghiệm đã sẵn sàng: hãy thanh toán ở bên dưới."},
	{"to_code", "Payment code (the memo)", "Mã thanh toán (nội dung chuyển khoản)"},
	{"to_va", "Virtual account", "Tài khoản ảo"},
	{"to_next", "“Pay an order” below sends the transfer a payer would make; the order page shows how it was matched.", "Mục “Thanh toán đơn hàng” bên dưới gửi khoản chuyển khoản mà người mua sẽ thực hiện; trang đơn hàng cho thấy cách đối soát."},
	{"to_err_kind", "Choose the kind of order.", "Hãy chọn loại đơn hàng."},
	{"to_err_va_mode", "Choose how the virtual account asks for the amount: exact, partial or open.", "Hãy chọn cách tài khoản ảo yêu cầu số tiền: đúng số tiền, một phần hoặc tự nhập."},
	{"to_err_amount", "The amount must be a whole number of VND from 1 to 1,000,000,000,000,000.", "Số tiền phải là số nguyên VND từ 1 đến 1.000.000.000.000.000."},
	{"to_err_invoice", "The invoice number must be 1 to 100 letters, digits, _ or -.", "Số hóa đơn phải gồm 1 đến 100 chữ cái, chữ số, _ hoặc -."},
	{"to_err_text", "The description (at most 1,000 characters) or the customer ID (at most 100) is too long or holds characters that are not allowed.", "Mô tả (tối đa 1.000 ký tự) hoặc mã khách hàng (tối đa 100) quá dài hoặc chứa ký tự không được phép."},
	{"to_err_duplicate", "An order with this invoice number already exists.", "Đã có đơn hàng với số hóa đơn này."},
	{"to_err_no_account", "Add a test bank account first: the order needs one to be paid into.", "Hãy thêm tài khoản ngân hàng thử nghiệm trước: đơn hàng cần một tài khoản để nhận tiền."},
	{"to_err_paycode", "Turn payment codes on with an active format (Settings) first: without one no transfer could be matched.", "Hãy bật mã thanh toán với một định dạng đang hoạt động (Cài đặt) trước: nếu không, không chuyển khoản nào được đối soát."},
	{"to_err_other", "The request was refused: check the fields.", "Yêu cầu bị từ chối: hãy kiểm tra các trường."},

	// Hub companies.
	{"hub_companies", "Hub companies", "Công ty hub"},
	{"hc_intro", "Your customers' companies in the bank-linking hub: each bank link belongs to one. Companies made here are in the data you are looking at (test or live).", "Các công ty của khách hàng trong hub liên kết ngân hàng: mỗi liên kết ngân hàng thuộc về một công ty. Công ty tạo tại đây thuộc dữ liệu bạn đang xem (thử nghiệm hoặc thật)."},
	{"hc_new", "New company", "Công ty mới"},
	{"hc_full_name", "Full name", "Tên đầy đủ"},
	{"hc_short_name", "Short name", "Tên viết tắt"},
	{"hc_xid", "Company ID", "Mã công ty"},
	{"hc_created_at", "Created", "Ngày tạo"},
	{"hc_create", "Create the company", "Tạo công ty"},
	{"hc_done", "Company created:", "Đã tạo công ty:"},
	{"hc_empty", "No company yet: create one to link a bank account.", "Chưa có công ty nào: hãy tạo một công ty để liên kết tài khoản ngân hàng."},
	{"hc_err_duplicate", "A company with this full name already exists.", "Đã có công ty với tên đầy đủ này."},
	{"hc_err_full_name", "The full name is required (at most 200 characters).", "Cần nhập tên đầy đủ (tối đa 200 ký tự)."},
	{"hc_err_short_name", "The short name must be at most 64 characters.", "Tên viết tắt tối đa 64 ký tự."},
	{"hc_err_status", "Choose a status.", "Hãy chọn trạng thái."},
	{"hcs_Active", "Active", "Đang hoạt động"},
	{"hcs_Pending", "Pending", "Chờ xử lý"},
	{"hcs_Suspended", "Suspended", "Tạm ngưng"},
	{"hc_manage", "Hub companies", "Công ty hub"},
}

func init() {
	for _, m := range firstrunMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
